// Dice from a seed and hash chains (docs/randomness.md): a die's face is HMAC-SHA-256
// of the seed over its position, sides and a counter, rejection-sampled; a hash chain's
// link is SHA-256 of the domain and the link after it. As the Python core's
// fairroll.randomness and fairroll.chain.

import { bytesToHex, concat, encoder, hexToBytes, sha256, subtle } from "./bytes.js";
import { wellFormed } from "./canonical.js";

const DOMAIN = encoder.encode("fairroll/die/v1");
const WORD_SPACE = 1n << 64n;
/** The most sides a die may have, and the most links a chain may have. */
export const MAX_SIDES = 1000;
export const MAX_LENGTH = 10000;

/** The faces of `count` dice of `sides` sides from `seed`, at positions start.. */
export async function deriveFaces(seed, sides, count, start = 0) {
  const key = await subtle.importKey(
    "raw",
    encoder.encode(seed),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const faces = [];
  for (let position = start; position < start + count; position++) {
    faces.push(await deriveFace(key, position, sides));
  }
  return faces;
}

function u32(value) {
  const bytes = new Uint8Array(4);
  new DataView(bytes.buffer).setUint32(0, value);
  return bytes;
}

async function deriveFace(key, position, sides) {
  const limit = WORD_SPACE - (WORD_SPACE % BigInt(sides));
  for (let counter = 0; ; counter++) {
    const message = concat(DOMAIN, u32(position), u32(sides), u32(counter));
    const block = new DataView(await subtle.sign("HMAC", key, message));
    for (let at = 0; at < 32; at += 8) {
      const word = block.getBigUint64(at);
      if (word < limit) return Number(word % BigInt(sides)) + 1;
    }
  }
}

const CHAIN_DOMAIN = encoder.encode("fairroll/chain/v1");
/** A link (and a drawn seed): 64 lowercase hex digits. */
export const LINK = /^[0-9a-f]{64}$/;

/** A hash chain's link `steps` before `link` (docs/randomness.md, "Hash-chain seed sessions"). */
export async function chainPrevious(link, steps = 1) {
  let raw = hexToBytes(link);
  for (let i = 0; i < steps; i++) raw = await sha256(concat(CHAIN_DOMAIN, raw));
  return bytesToHex(raw);
}

export async function chainReaches(link, anchor, most) {
  let at = link;
  for (let i = 0; i < most && at !== anchor; i++) at = await chainPrevious(at);
  return at;
}

/** Why `dice` do not derive from `seed` (the first die that does not), or null. */
export async function wrongDie(seed, dice) {
  if (typeof seed !== "string" || !wellFormed(seed)) return "the seed holds a lone surrogate: not UTF-8";
  if (!Array.isArray(dice)) return "the dice are not a list";
  for (let i = 0; i < dice.length; i++) {
    const die = dice[i];
    const sides = die?.sides;
    if (!Number.isInteger(sides) || sides < 1 || sides > MAX_SIDES) return `die ${i} has no valid sides`;
    const [face] = await deriveFaces(seed, die.sides, 1, i);
    if (face !== die.face) return `die ${i + 1} (${die.group}) is ${die.face}; the seed gives ${face}: it does not derive from the seed`;
  }
  return null;
}
