// Trust, rooted once (docs/audit.md, "Keys in the log, trust rooted once"): a key's id,
// the keys a server lists (imported, or only those the pinned root certified), and the
// keys a log publishes under the pinned root as it is read (KeyRing). As the Python
// core's fairroll.audit.verify.trust.

import { base64ToBytes, bytesToHex, encoder, sha256, subtle } from "./bytes.js";
import { isObject, pyRepr } from "./canonical.js";

/** A key's id: "ed25519:" and the first 16 hex digits of SHA-256 of its raw bytes. */
export async function keyIdOf(raw) {
  return `ed25519:${bytesToHex(await sha256(raw)).slice(0, 16)}`;
}

/** Public keys as served by GET /v1/keys, imported for verification, by key_id. */
export async function importKeys(served) {
  const keys = new Map();
  for (const key of served.keys) {
    const imported = await subtle.importKey("raw", base64ToBytes(key.public_key), { name: "Ed25519" }, false, ["verify"]);
    keys.set(key.key_id, { key: imported, raw: base64ToBytes(key.public_key), notAfter: key.not_after });
  }
  return keys;
}

/** Does the root key of `rootRaw` sign `certificate`'s statement? */
async function certifies(rootRaw, certificate) {
  const rootKey = await subtle.importKey("raw", rootRaw, { name: "Ed25519" }, false, ["verify"]);
  const message = encoder.encode(`fairroll/key/v1\n${certificate.key_id}\n${certificate.public_key}\n`);
  return subtle.verify({ name: "Ed25519" }, rootKey, base64ToBytes(certificate.signature), message);
}

/** The keys of a GET /v1/keys answer whose certificate the pinned `root` (a key id
 * published out of band) signed, imported as `importKeys` does, each marked with the
 * root that certified it (`certifiedBy`); any other key is left out, whatever the answer
 * says. */
export async function trustedKeys(served, root) {
  const keys = new Map();
  for (const key of served.keys ?? []) {
    const certificate = key.certificate;
    if (!certificate || certificate.certified_by !== root || certificate.key_id !== key.key_id) continue;
    if (certificate.public_key !== key.public_key) continue;
    try {
      const raw = base64ToBytes(certificate.public_key ?? "");
      const rootRaw = base64ToBytes(certificate.root_public_key ?? "");
      if ((await keyIdOf(raw)) !== certificate.key_id || (await keyIdOf(rootRaw)) !== root) continue;
      if (!(await certifies(rootRaw, certificate))) continue;
      const imported = await subtle.importKey("raw", raw, { name: "Ed25519" }, false, ["verify"]);
      keys.set(key.key_id, { key: imported, raw, notAfter: key.not_after, certifiedBy: root });
    } catch {
      continue;  // not base64, not a key: not trusted
    }
  }
  return keys;
}

const CERTIFICATE_FIELDS = ["key_id", "public_key", "certified_by", "root_public_key", "signature"];

/** The keys an entry's signature may be checked with, as the log read so far publishes
 * and retires them, under the pinned `root`; `keys` (a server's list) for version 1
 * entries and a log read from the middle (`partial`). */
export class KeyRing {
  constructor(keys, root, { partial = false } = {}) {
    this.keys = keys;
    this.root = root;
    this.partial = partial;
    this.published = new Map();  // key id -> imported key, from the log's own certificates
    this.retired = new Map();  // key id -> the seq of its key.retire
  }

  retire(keyId, seq) {
    if (!this.retired.has(keyId)) this.retired.set(keyId, seq);
  }

  /** A version 2 entry's keys: a key signs only from its first entry in the log, which
   * carries its certificate by the root (by the pinned root if given), and never after
   * its key.retire entry. Returns the keys to check the entry's signature with, or null
   * when `problems` already says why no key of this log may sign it. */
  async signing(entry, problems) {
    const retiredAt = this.retired.get(entry.key_id);
    if (retiredAt !== undefined) {
      problems.push(`signed by key ${entry.key_id} after its retirement at seq ${retiredAt} of this log`);
      return null;
    }
    const certificate = entry.certificate;
    if (certificate !== null && certificate !== undefined) {
      const problem = await this.#publish(entry, certificate);
      if (problem) {
        problems.push(problem);
        return null;
      }
    }
    const published = this.published.get(entry.key_id);
    if (published) return new Map([[entry.key_id, published]]);
    if (this.root && !this.partial) {
      problems.push(`signed by key ${entry.key_id}, which this log did not publish before it`);
      return null;
    }
    if (!this.keys.has(entry.key_id)) {
      problems.push(`unknown signing key ${pyRepr(entry.key_id)}`);
      return null;
    }
    return this.keys;
  }

  async #publish(entry, certificate) {
    if (!isObject(certificate) || !CERTIFICATE_FIELDS.every((name) => typeof certificate[name] === "string")) {
      return "the entry's certificate is not a key certificate";
    }
    if (certificate.key_id !== entry.key_id) return "a certificate publishes the key that signs its entry";
    const who = this.root ? `the pinned root ${this.root}` : "its root";
    const byHand = `key ${certificate.key_id} is not certified by ${who}: a key added by hand`;
    try {
      const raw = base64ToBytes(certificate.public_key);
      const rootRaw = base64ToBytes(certificate.root_public_key);
      if ((await keyIdOf(raw)) !== certificate.key_id || (await keyIdOf(rootRaw)) !== certificate.certified_by) {
        return byHand;
      }
      if (this.root && certificate.certified_by !== this.root) return byHand;
      if (!(await certifies(rootRaw, certificate))) return byHand;
      const key = await subtle.importKey("raw", raw, { name: "Ed25519" }, false, ["verify"]);
      this.published.set(certificate.key_id, { key, raw, notAfter: null });
    } catch {
      return byHand;
    }
    return null;
  }
}
