// The log's signed checkpoints checked in the browser, as the Go team's
// golang.org/x/mod/sumdb/note and tlog check them: a checkpoint is a note
// (text, a blank line, signature lines "— name base64(keyhash||sig)")
// signed with Ed25519; its text is the C2SP checkpoint (origin, tree
// size, base64 root hash); two checkpoints of one log are linked by a
// consistency proof (RFC 6962), run here with Web Crypto's SHA-256.

const enc = new TextEncoder();

function b64(s) {
  const bin = atob(s);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

export function toBase64(bytes) {
  let s = '';
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s);
}

function subtle() {
  if (!globalThis.crypto?.subtle) throw new Error('this page cannot use Web Crypto (it is not served over HTTPS or from localhost): check with `tradeledger verify --checkpoint FILE` instead');
  return crypto.subtle;
}

async function sha256(...parts) {
  const n = parts.reduce((a, p) => a + p.length, 0);
  const buf = new Uint8Array(n);
  let o = 0;
  for (const p of parts) { buf.set(p, o); o += p.length; }
  return new Uint8Array(await subtle().digest('SHA-256', buf));
}

const nodeHash = (l, r) => sha256(Uint8Array.of(1), l, r);

function equal(a, b) {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

// parseVerifierKey reads a note verifier key: name+hash+base64(1||pub).
// It splits at the first two '+' only, as golang.org/x/mod/sumdb/note does:
// the base64 key may hold '+' itself.
export async function parseVerifierKey(vkey) {
  const m = /^([^+]+)\+([0-9a-f]{8})\+([A-Za-z0-9+/]+=*)$/.exec(vkey.trim());
  if (!m) throw new Error('not a verifier key (name+hash+base64)');
  const parts = m.slice(1);
  const raw = b64(parts[2]);
  if (raw.length !== 33 || raw[0] !== 1) throw new Error('not an Ed25519 verifier key');
  const hash = await sha256(enc.encode(parts[0] + '\n'), raw);
  const want = parseInt(parts[1], 16) >>> 0;
  const got = ((hash[0] << 24) | (hash[1] << 16) | (hash[2] << 8) | hash[3]) >>> 0;
  if (got !== want) throw new Error('the verifier key\'s hash does not match its name and key');
  return { name: parts[0], hash: want, pub: raw.slice(1) };
}

// openCheckpoint checks a signed checkpoint against vkey and returns its
// body: { origin, size, root (bytes), rootB64 }. It throws saying why not.
export async function openCheckpoint(msg, vkey) {
  const key = await parseVerifierKey(vkey);
  msg = msg.replace(/\r\n/g, '\n');
  if (!msg.endsWith('\n')) msg += '\n';
  const split = msg.lastIndexOf('\n\n');
  if (split < 0) throw new Error('not a signed note: no blank line before the signatures');
  const text = msg.slice(0, split + 1);
  let verified = false;
  for (const line of msg.slice(split + 2).split('\n').filter(Boolean)) {
    const m = /^— (\S+) (\S+)$/.exec(line);
    if (!m) throw new Error('malformed signature line');
    const sig = b64(m[2]);
    const hash = ((sig[0] << 24) | (sig[1] << 16) | (sig[2] << 8) | sig[3]) >>> 0;
    if (m[1] !== key.name || hash !== key.hash) continue; // another key's signature
    let pub;
    try {
      pub = await subtle().importKey('raw', key.pub, { name: 'Ed25519' }, false, ['verify']);
    } catch (e) {
      throw new Error('this browser cannot check Ed25519 signatures: check with `tradeledger verify --checkpoint FILE` instead');
    }
    if (!await subtle().verify({ name: 'Ed25519' }, pub, sig.slice(4), enc.encode(text))) {
      throw new Error(`the signature of ${key.name} does not check: the checkpoint was changed or signed by another key`);
    }
    verified = true;
  }
  if (!verified) throw new Error(`the checkpoint is not signed by ${key.name}'s key`);
  const lines = text.split('\n');
  if (lines.length < 4 || !/^(0|[1-9][0-9]*)$/.test(lines[1])) throw new Error('not a checkpoint: want an origin, a tree size and a root hash');
  if (lines[0] !== key.name) throw new Error(`the checkpoint names log ${lines[0]}, the key is ${key.name}'s`);
  const root = b64(lines[2]);
  if (root.length !== 32) throw new Error('the root hash is not 32 bytes');
  return { origin: lines[0], size: Number(lines[1]), root, rootB64: lines[2] };
}

function maxpow2(n) {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

// runTreeProof is tlog's: the old and new hashes of the subtree [lo, hi)
// implied by proof p, for an old tree of n records whose root is old.
async function runTreeProof(p, lo, hi, n, old) {
  if (n === hi) {
    if (lo === 0) {
      if (p.length !== 0) throw new Error('proof failed');
      return [old, old];
    }
    if (p.length !== 1) throw new Error('proof failed');
    return [p[0], p[0]];
  }
  if (p.length === 0) throw new Error('proof failed');
  const k = maxpow2(hi - lo);
  const last = p[p.length - 1];
  if (n <= lo + k) {
    const [oh, th] = await runTreeProof(p.slice(0, -1), lo, lo + k, n, old);
    return [oh, await nodeHash(th, last)];
  }
  const [oh, th] = await runTreeProof(p.slice(0, -1), lo + k, hi, n, old);
  return [await nodeHash(last, oh), await nodeHash(last, th)];
}

// checkTree reports whether proof (base64 hashes) proves the tree of n
// records with root h a prefix of the tree of t records with root th
// (tlog.CheckTree).
export async function checkTree(proof, t, th, n, h) {
  if (t < 1 || n < 1 || n > t) return false;
  try {
    const [h2, th2] = await runTreeProof(proof.map(b64), 0, t, n, h);
    return equal(h2, h) && equal(th2, th);
  } catch {
    return false;
  }
}

// Witnesses' cosignatures (c2sp.org/tlog-cosignature, cosignature/v1):
// a note signature line "— name base64(keyid || timestamp || sig)" whose
// Ed25519 signature covers "cosignature/v1\ntime T\n" and the checkpoint
// text; the witness's verifier key is name+keyid+base64(0x04 || pub).

// parseWitnessKey reads a witness's verifier key (signature type 0x04).
export async function parseWitnessKey(vkey) {
  const m = /^([^+\s]+)\+([0-9a-f]{8})\+([A-Za-z0-9+/]+=*)$/.exec(vkey.trim());
  if (!m) throw new Error(`not a witness key (name+keyid+base64): ${vkey.trim().slice(0, 40)}`);
  const raw = b64(m[3]);
  if (raw.length !== 33 || raw[0] !== 4) throw new Error(`${m[1]}: not a cosignature/v1 key (type 0x04, 32-byte Ed25519)`);
  const hash = await sha256(enc.encode(m[1] + '\n'), raw);
  const want = parseInt(m[2], 16) >>> 0;
  const got = ((hash[0] << 24) | (hash[1] << 16) | (hash[2] << 8) | hash[3]) >>> 0;
  if (got !== want) throw new Error(`${m[1]}: the key ID does not match the name and key`);
  return { name: m[1], hash: want, pub: raw.slice(1), vkey: vkey.trim() };
}

// cosignatures checks msg's cosignatures by the witnesses whose keys are
// given, and returns one entry per witness: { name, ok, time (ms, when
// ok), problem }. A signature line that names a witness with its key ID
// but does not verify is reported, not skipped: the note is forged.
export async function cosignatures(msg, witnessKeys) {
  const keys = [];
  for (const k of witnessKeys) keys.push(await parseWitnessKey(k));
  msg = msg.replace(/\r\n/g, '\n');
  if (!msg.endsWith('\n')) msg += '\n';
  const split = msg.lastIndexOf('\n\n');
  if (split < 0) throw new Error('not a signed note: no blank line before the signatures');
  const text = enc.encode(msg.slice(0, split + 1));
  const lines = msg.slice(split + 2).split('\n').filter(Boolean);
  const out = [];
  for (const key of keys) {
    const entry = { name: key.name, ok: false, problem: 'no cosignature' };
    for (const line of lines) {
      const m = /^— (\S+) (\S+)$/.exec(line);
      if (!m || m[1] !== key.name) continue;
      const sig = b64(m[2]);
      const id = ((sig[0] << 24) | (sig[1] << 16) | (sig[2] << 8) | sig[3]) >>> 0;
      if (id !== key.hash) continue;
      if (sig.length !== 4 + 8 + 64) { entry.problem = 'its cosignature is not cosignature/v1'; break; }
      let t = 0n;
      for (let i = 4; i < 12; i++) t = (t << 8n) | BigInt(sig[i]);
      const head = enc.encode(`cosignature/v1\ntime ${t}\n`);
      const signed = new Uint8Array(head.length + text.length);
      signed.set(head);
      signed.set(text, head.length);
      let pub;
      try {
        pub = await subtle().importKey('raw', key.pub, { name: 'Ed25519' }, false, ['verify']);
      } catch (e) {
        throw new Error('this browser cannot check Ed25519 signatures: check with `tradeledger verify --checkpoint FILE --witness-key VKEY` instead');
      }
      if (await subtle().verify({ name: 'Ed25519' }, pub, sig.slice(12), signed)) {
        Object.assign(entry, { ok: true, time: Number(t) * 1000, problem: '' });
      } else {
        entry.problem = 'its cosignature does not verify: forged, or for another checkpoint';
      }
      break;
    }
    out.push(entry);
  }
  return out;
}
