// The RFC 6962 Merkle tree of a table's log (docs/audit.md, "The Merkle tree"): each
// entry a leaf, a seq an epoch declared lost a leaf of its own, the tree's right edge
// grown entry by entry, and the proofs (RFC 9162) that a leaf is in a tree and that a
// tree is a prefix of a larger one. As the Python core's fairroll.audit.merkle.

import { concat, encoder, sha256 } from "./bytes.js";

/** The leaf of a seq an epoch declared lost. */
export async function lostLeaf(seq) {
  return sha256(concat(new Uint8Array([0]), encoder.encode(`fairroll/lost/v1:${seq}`)));
}

async function node(left, right) {
  return sha256(concat(new Uint8Array([1]), left, right));
}

/** The right edge of a Merkle tree: the hashes of its complete subtrees, largest first. */
export class Frontier {
  constructor(size = 0, levels = [], hashes = []) {
    this.size = size;
    this.levels = levels;
    this.hashes = hashes;
  }

  /** The frontier of a tree of `size` from its subtree hashes (an archive base's). */
  static of(size, hashes) {
    const levels = [];
    for (let level = 52; level >= 0; level--) if (Math.floor(size / 2 ** level) % 2) levels.push(level);
    if (levels.length !== hashes.length) throw new Error(`a tree of ${size} has ${levels.length} frontier hashes`);
    return new Frontier(size, levels, hashes);
  }

  async append(leaf) {
    const levels = [...this.levels, 0];
    const hashes = [...this.hashes, leaf];
    while (levels.length > 1 && levels.at(-1) === levels.at(-2)) {
      const right = hashes.pop();
      const left = hashes.pop();
      const level = levels.pop();
      levels[levels.length - 1] = level + 1;
      hashes.push(await node(left, right));
    }
    return new Frontier(this.size + 1, levels, hashes);
  }

  async root() {
    if (!this.hashes.length) return sha256(new Uint8Array());
    let root = this.hashes.at(-1);
    for (let i = this.hashes.length - 2; i >= 0; i--) root = await node(this.hashes[i], root);
    return root;
  }
}

/** RFC 9162 2.1.4.2: is the tree of `oldSize` (root `oldRoot`) a prefix of the tree of
 * `newSize`? Roots and proof hashes as bytes. Throws naming what fails. */
export async function verifyConsistency(oldSize, newSize, oldRoot, newRoot, proof) {
  const same = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);
  if (oldSize > newSize) throw new Error(`the tree shrank from ${oldSize} to ${newSize}`);
  if (oldSize === newSize) {
    if (proof.length || !same(oldRoot, newRoot)) throw new Error(`two different roots for size ${oldSize}`);
    return;
  }
  if (oldSize === 0) return;
  const path = [...proof];
  if (!path.length) throw new Error("the consistency proof is empty");
  const m = BigInt(oldSize);
  if ((m & (m - 1n)) === 0n) path.unshift(oldRoot);  // a power of two: the old root is the first node
  let fn = BigInt(oldSize - 1);
  let sn = BigInt(newSize - 1);
  while (fn & 1n) {
    fn >>= 1n;
    sn >>= 1n;
  }
  let fr = path[0];
  let sr = path[0];
  for (const c of path.slice(1)) {
    if (sn === 0n) throw new Error("the consistency proof is too long");
    if (fn & 1n || fn === sn) {
      fr = await node(c, fr);
      sr = await node(c, sr);
      if (!(fn & 1n)) {
        while (fn && !(fn & 1n)) {
          fn >>= 1n;
          sn >>= 1n;
        }
      }
    } else {
      sr = await node(sr, c);
    }
    fn >>= 1n;
    sn >>= 1n;
  }
  if (sn !== 0n) throw new Error("the consistency proof is too short");
  if (!same(fr, oldRoot)) throw new Error("the proof does not lead to the kept checkpoint's root: the log was rewritten");
  if (!same(sr, newRoot)) throw new Error("the proof does not lead to the new checkpoint's root");
}

/** RFC 9162 2.1.3.2: does `proof` lead from `leaf` (bytes, at `index`) to `root` of the
 * tree of `size`? Throws naming what fails. */
export async function verifyInclusion(index, size, leaf, root, proof) {
  if (!(index >= 0 && index < size)) throw new Error(`leaf ${index} is not in a tree of ${size}`);
  let fn = BigInt(index);
  let sn = BigInt(size - 1);
  let r = leaf;
  for (const p of proof) {
    if (sn === 0n) throw new Error("the inclusion proof is too long");
    if ((fn & 1n) === 1n || fn === sn) {
      r = await node(p, r);
      while ((fn & 1n) === 0n && fn !== 0n) {
        fn >>= 1n;
        sn >>= 1n;
      }
    } else {
      r = await node(r, p);
    }
    fn >>= 1n;
    sn >>= 1n;
  }
  if (sn !== 0n) throw new Error("the inclusion proof is too short");
  if (!(r.length === root.length && r.every((x, i) => x === root[i]))) {
    throw new Error("the inclusion proof does not lead to the tree's root");
  }
}
