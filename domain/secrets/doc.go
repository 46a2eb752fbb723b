// Package secrets is how credentials are kept: the one rule that says which
// configuration values are credentials (IsSecretPath), taking them out of a
// configuration and putting them back (ExtractSecrets, PutSecret), masking
// them in every output (Mask, MaskExchange, MaskSecretsIn), sealing them at
// rest under the master key (SecretBox: AES-256-GCM), and the Gunbot
// login's AES-CBC password encryption (EncryptLoginPassword,
// DecryptLoginPassword). A refusal is a *SecretError that domain reports as
// the error it stands for (EINVALID, or EUNAUTHORIZED for a login). Standard
// library only.
package secrets
