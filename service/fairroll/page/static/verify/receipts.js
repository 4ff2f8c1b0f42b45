// A roll's receipt (docs/audit.md, "Receipts"): the entry's leaf in a signed note of its
// table's log, proved by an inclusion proof. As the Python core's fairroll.audit.receipts.

import { bytesToBase64, strictBase64ToBytes } from "./bytes.js";
import { leafHash } from "./canonical.js";
import { verifyInclusion } from "./merkle.js";
import { openCheckpoint } from "./note.js";

/** Check a roll's receipt alone against its entry: the receipt names the entry (its
 * `key_id` is the entry's signer, a key of `keys`), its leaf hash is the entry's, its
 * checkpoint note is a note of this table's log (origin `<name>/<table>`; `table`
 * defaults to the entry's) signed by a key of `keys` (trustedKeys: keys certified under
 * the pinned root) that may sign a note of its size, not necessarily the entry's: after
 * a rotation the table's checkpoint is signed by the key that took over (openCheckpoint),
 * and its inclusion proof leads from the leaf to the note's root. Returns {size, root
 * (bytes), rootHash (base64)}. */
/** @param {any} entry @param {any} receipt @param {Map<string, any>} keys
 * @param {{table?: string | null, retired?: Map<string, number> | null}} [options] */
export async function verifyReceipt(entry, receipt, keys, { table = null, retired = null } = {}) {
  for (const field of ["table", "seq", "entry_hash", "key_id"]) {
    if (receipt[field] !== entry[field]) throw new Error(`the receipt's ${field} is not the entry's`);
  }
  const leaf = await leafHash(entry);
  if (bytesToBase64(leaf) !== receipt.leaf_hash) throw new Error("the receipt's leaf_hash is not the entry's");
  if (typeof receipt.checkpoint !== "string" || !Array.isArray(receipt.proof ?? [])) {
    throw new Error("the receipt carries no checkpoint and proof");
  }
  if (!keys.has(receipt.key_id)) throw new Error(`key ${receipt.key_id} is not certified by the pinned root`);
  // The note opens under the entry's key and under every key the pinned root certified
  // (`certifiedBy`, set by trustedKeys): a key map read without a root (importKeys) proves
  // a receipt by its entry's key only, so a key merely listed never vouches for a note. A
  // retired key signs only notes of a size below its retirement's seq in this log
  // (`retired`: key id -> that seq, read from the log): openCheckpoint holds it.
  const signing = new Map([...keys].filter(([keyId, key]) => keyId === receipt.key_id || key?.certifiedBy));
  const opened = await openCheckpoint(receipt.checkpoint, signing, { table: table ?? entry.table, retired });
  if (receipt.tree_size !== undefined && receipt.tree_size !== null && opened.size !== receipt.tree_size) {
    throw new Error("the receipt's tree_size is not its note's");
  }
  let proof;
  try {
    proof = (receipt.proof ?? []).map(strictBase64ToBytes);
  } catch {
    throw new Error("the inclusion proof's hashes are not base64");
  }
  await verifyInclusion(entry.seq - 1, opened.size, leaf, opened.root, proof);
  return { size: opened.size, root: opened.root, rootHash: opened.rootText };
}
