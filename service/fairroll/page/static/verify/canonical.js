// An entry's bytes and fields (docs/audit.md, "Canonical bytes, hash and signature"):
// RFC 8785 as fairroll writes it, strict JSON (no key twice, no float), every field of
// an entry with its type, and the hashes made of them. As the Python core's
// fairroll.audit.entry and fairroll.audit.verify.entries.

import { concat, encoder, hexToBytes, bytesToHex, sha256 } from "./bytes.js";

/** A value with no RFC 8785 form fairroll accepts: a float, an integer beyond
 * +-(2^53 - 1), a lone surrogate (no UTF-8), or not a JSON value. */
export class NotCanonicalError extends Error {}

// A UTF-16 code unit of a surrogate pair without its other half: TextEncoder would write
// U+FFFD for it, so two strings would hash alike; Python refuses to encode it.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Does `text` hold no lone surrogate (so it has a UTF-8 form)? */
export const wellFormed = (text) => !LONE_SURROGATE.test(text);

/** RFC 8785 (JCS), as fairroll hashes entries: keys sorted by UTF-16 code units (what
 * Array.prototype.sort does with strings) at every level, no whitespace; strings as
 * JSON.stringify writes them; integers only, within Number.MAX_SAFE_INTEGER; a string or
 * key holding a lone surrogate is refused (it has no UTF-8), as the Python core refuses it. */
export function canonicalJson(value) {
  if (value === null || typeof value === "boolean") return JSON.stringify(value);
  if (typeof value === "number") {
    if (!Number.isSafeInteger(value)) throw new NotCanonicalError(`not an integer: ${value}`);
    return String(value);
  }
  if (typeof value === "string") {
    if (LONE_SURROGATE.test(value)) throw new NotCanonicalError("a string holds a lone surrogate");
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (typeof value !== "object") throw new NotCanonicalError(`${typeof value} is not a JSON value`);
  const keys = Object.keys(value).sort();
  for (const key of keys) {
    if (LONE_SURROGATE.test(key)) throw new NotCanonicalError("an object key holds a lone surrogate");
  }
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(value[k])}`).join(",")}}`;
}

/** JSON.parse, but a key twice in one object is an error (parsers disagree on which
 * value wins, so such an entry means different things to different verifiers), and so is
 * a number with a fraction or an exponent (an entry holds integers only). */
export function parseStrict(text) {
  let at = 0;
  const space = () => {
    while (at < text.length && " \t\n\r".includes(text[at])) at++;
  };
  const string = () => {
    const start = at++;
    while (text[at] !== '"') {
      if (at >= text.length) throw new Error("unterminated string");
      at += text[at] === "\\" ? 2 : 1;
    }
    at++;
    return JSON.parse(text.slice(start, at));
  };
  const value = () => {
    space();
    const c = text[at];
    if (c === "{") {
      at++;
      const seen = new Set();
      space();
      if (text[at] === "}") return at++;
      for (;;) {
        space();
        const key = string();
        if (seen.has(key)) throw new Error(`the key ${pyRepr(key)} appears twice in one object`);
        seen.add(key);
        space();
        at++; // :
        value();
        space();
        if (text[at++] === "}") return;
      }
    }
    if (c === "[") {
      at++;
      space();
      if (text[at] === "]") return at++;
      for (;;) {
        value();
        space();
        if (text[at++] === "]") return;
      }
    }
    if (c === '"') return string();
    const start = at;
    while (at < text.length && !",]} \t\n\r".includes(text[at])) at++;
    // JSON.parse reads 2.0 as the integer 2; an entry holds integers only (RFC 8785 form,
    // no floats), as the Python core reads it: a fraction or an exponent is refused.
    const token = text.slice(start, at);
    if (/^-?[0-9]/.test(token) && /[.eE]/.test(token)) throw new Error(`the number ${token} is not an integer: an entry holds no floats`);
  };
  const parsed = JSON.parse(text); // the grammar; then the keys
  value();
  return parsed;
}

/** A value as Python's repr writes it, so a reason reads the same in both cores. */
export function pyRepr(value) {
  if (value === null || value === undefined) return "None";
  if (typeof value !== "string") return JSON.stringify(value);
  return value.includes("'") && !value.includes('"') ? `"${value}"` : `'${value.replaceAll("'", "\\'")}'`;
}

/** Every field an entry must hold, with its type (the Python core's `_REQUIRED`). A
 * boolean is not an integer, whatever JavaScript or Python make of it. */
const REQUIRED = [
  ["v", "int"], ["table", "str"], ["seq", "int"], ["time", "str"], ["mechanic", "str"],
  ["source", "str"], ["dice", "list"], ["prev_hash", "str"], ["key_id", "str"],
  ["entry_hash", "str"], ["signature", "str"],
];

const IS = {
  int: (value) => Number.isInteger(value),
  str: (value) => typeof value === "string",
  list: (value) => Array.isArray(value),
};

/** Is `value` a JSON object (not an array, not null)? */
export const isObject = (value) => value !== null && typeof value === "object" && !Array.isArray(value);

/** What is wrong with an entry's fields, as the Python core words it, or null: {seq (the
 * entry's own if it has one, else `expectedSeq`), why}. */
export function fieldProblem(entry, expectedSeq = null) {
  if (!isObject(entry)) return { seq: expectedSeq, why: "not a JSON object" };
  const seq = Number.isInteger(entry.seq) ? entry.seq : expectedSeq;
  for (const [name, kind] of REQUIRED) {
    if (!IS[kind](entry[name])) return { seq, why: `field '${name}' is missing or not a ${kind}` };
  }
  return null;
}

/** The hash an entry must carry: SHA-256(prev_hash bytes || canonical body), hex. Throws
 * NotCanonicalError for an entry with no canonical form. */
export async function entryHash(entry) {
  const { entry_hash: _hash, signature: _signature, ...body } = entry;
  return bytesToHex(await sha256(concat(hexToBytes(entry.prev_hash), encoder.encode(canonicalJson(body)))));
}

/** The entry's RFC 6962 leaf hash: SHA-256(0x00 || JCS of the whole entry). */
export async function leafHash(entry) {
  return sha256(concat(new Uint8Array([0]), encoder.encode(canonicalJson(entry))));
}
