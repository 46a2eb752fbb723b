package domain

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tradeledger/tradeledger/domain/jsonscan"
)

// File kinds: the auxiliary files of the spec's Files section, each kept as
// FileWritten/FileDeleted events on a file-<kind>-<name> stream.
const (
	FileACVar        = "acvar"         // AutoConfig variable files, *.json
	FileAutoconfig   = "autoconfig"    // autoconfig.json
	FileBackup       = "backup"        // autoconfig.json.<ms>
	FileCustomEditor = "custom-editor" // custom-editor.json
	FileState        = "state"         // <exchange>-<pair>-state.json (projection of the order log)
	FileStrategy     = "strategy"      // custom strategies, *.js
)

// Fixed file names.
const (
	AutoconfigFileName   = "autoconfig.json"
	CustomEditorFileName = "custom-editor.json"
)

// Limits on files.
const (
	MaxFileNameLen = 128
	MaxFileBytes   = 512 << 10 // content size, bytes (below the 1 MiB body limit, so the refusal names the field)
)

// FileKinds lists every kind.
var FileKinds = []string{FileACVar, FileAutoconfig, FileBackup, FileCustomEditor, FileState, FileStrategy}

// ValidateFileName returns EINVALID (naming the field "filename") unless
// name is a plain file name fit for kind: not empty, at most MaxFileNameLen
// bytes of valid UTF-8, no path separator, no "..", no control character, not starting
// with a dot, and with the kind's suffix (.js for strategies; .json for
// acvar, autoconfig, custom-editor; -state.json for state files;
// autoconfig.json.<ms> for backups).
func ValidateFileName(kind, name string) error {
	if name == "" {
		return Errorf(EINVALID, "filename is required")
	}
	if len(name) > MaxFileNameLen {
		return Errorf(EINVALID, "filename is longer than %d bytes", MaxFileNameLen)
	}
	if strings.ContainsAny(name, `/\:`) || strings.Contains(name, "..") || strings.HasPrefix(name, ".") || hasControl(name) || !utf8.ValidString(name) {
		return Errorf(EINVALID, "filename %q must be a plain file name (no path separators, no \"..\")", name)
	}
	switch kind {
	case FileStrategy:
		if !strings.HasSuffix(name, ".js") || name == ".js" {
			return Errorf(EINVALID, "filename %q must end in .js", name)
		}
	case FileACVar:
		if !strings.HasSuffix(name, ".json") {
			return Errorf(EINVALID, "filename %q must end in .json", name)
		}
	case FileState:
		if !strings.HasSuffix(name, "-state.json") {
			return Errorf(EINVALID, "filename %q must look like <exchange>-<pair>-state.json", name)
		}
	case FileAutoconfig:
		if name != AutoconfigFileName {
			return Errorf(EINVALID, "filename %q must be %s", name, AutoconfigFileName)
		}
	case FileCustomEditor:
		if name != CustomEditorFileName {
			return Errorf(EINVALID, "filename %q must be %s", name, CustomEditorFileName)
		}
	case FileBackup:
		ms, ok := strings.CutPrefix(name, AutoconfigFileName+".")
		if !ok || ms == "" {
			return Errorf(EINVALID, "filename %q must look like autoconfig.json.<timestamp ms>", name)
		}
		if _, err := strconv.ParseUint(ms, 10, 63); err != nil {
			return Errorf(EINVALID, "filename %q must look like autoconfig.json.<timestamp ms>", name)
		}
	default:
		return Errorf(EINVALID, "unknown file kind %q", kind)
	}
	return nil
}

// BackupFileName returns the name of the autoconfig backup made at ms.
func BackupFileName(ms int64) string {
	return AutoconfigFileName + "." + strconv.FormatInt(ms, 10)
}

// StateFileName returns the state file name of a pair.
func StateFileName(exchange, pair string) string { return exchange + "-" + pair + "-state.json" }

// NewFileWritten validates a file write and returns its event payload.
// JSON kinds (everything but strategies) need a JSON object as content;
// strategies take text, stored as a JSON string. SHA256 is of the text for
// strategies, of the compact JSON otherwise. Content over MaxFileBytes
// is EINVALID naming the field "document", and so is a JSON document
// that CheckJSON refuses (a repeated key, invalid UTF-8).
func NewFileWritten(kind, name string, content []byte) (FileWritten, error) {
	if err := ValidateFileName(kind, name); err != nil {
		return FileWritten{}, err
	}
	if len(content) > MaxFileBytes {
		return FileWritten{}, Errorf(EINVALID, "document is larger than %d bytes", MaxFileBytes)
	}
	var stored json.RawMessage
	sum := FileSHA256(content)
	if kind == FileStrategy {
		b, err := json.Marshal(string(content))
		if err != nil {
			return FileWritten{}, Errorf(EINVALID, "document cannot be encoded")
		}
		stored = b
	} else {
		if _, err := DecodeJSONObject(content); err != nil {
			return FileWritten{}, Errorf(EINVALID, "document %s", ErrorMessage(err))
		}
		if err := jsonscan.CheckJSON(content); err != nil {
			return FileWritten{}, Errorf(EINVALID, "document: %s", ErrorMessage(err))
		}
		stored = compactJSON(content)
		sum = FileSHA256(stored)
	}
	return FileWritten{Kind: kind, Name: name, Content: stored, SHA256: sum}, nil
}

// FileSHA256 returns the lowercase hex SHA-256 of content.
func FileSHA256(content []byte) string {
	sum := sha256.Sum256(content)
	return hex.EncodeToString(sum[:])
}

func compactJSON(b []byte) json.RawMessage {
	var out bytes.Buffer
	if err := json.Compact(&out, b); err != nil {
		return append(json.RawMessage(nil), b...)
	}
	return out.Bytes()
}
