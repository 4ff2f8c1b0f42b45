// Bytes as the verification core handles them: hex, base64, SHA-256 (WebCrypto only).
// Internal to the core: the entry module (../verify.js) does not export these.

export const encoder = new TextEncoder();
export const subtle = globalThis.crypto.subtle;

export function hexToBytes(hex) {
  const bytes = new Uint8Array(hex.length / 2);
  for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return bytes;
}

export function bytesToHex(bytes) {
  return Array.from(new Uint8Array(bytes), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** Base64 as Python's `b64decode(..., validate=True)` reads it: the alphabet only and
 * whole padded quads (atob would take a missing padding, or spaces: two spellings of one
 * signature would make two leaves of one entry); throws otherwise. */
export function base64ToBytes(text) {
  if (typeof text !== "string" || text.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(text)) {
    throw new Error("not base64");
  }
  const binary = atob(text);
  return Uint8Array.from(binary, (c) => c.charCodeAt(0));
}

export const strictBase64ToBytes = base64ToBytes;

export function bytesToBase64(bytes) {
  return btoa(String.fromCharCode(...bytes));
}

export function concat(...parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

export function sameBytes(a, b) {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

export async function sha256(bytes) {
  return new Uint8Array(await subtle.digest("SHA-256", bytes));
}
