// One entry checked alone (docs/audit.md, "What a verifier checks"): its hash, its link
// to the previous one when at hand, its signature, its source for its version and
// mechanic, and its dice re-derived where its seed is known. As the Python core's
// fairroll.audit.verify.entries.

import { base64ToBytes, encoder, subtle } from "./bytes.js";
import { entryHash, isObject, pyRepr } from "./canonical.js";
import { chainPrevious, LINK, MAX_LENGTH, wrongDie } from "./dice.js";
import { SEALED_REVEAL, SEALED_ROLL, sealedRollProblem } from "./sealed.js";

const SIGNATURE_CONTEXT = "fairroll/entry/v1:";

/** Check one entry; `previousHash` is the entry_hash of seq - 1 (64 zeros before seq 1),
 * or null when the previous entry is not at hand (then the link is not checked).
 * Returns {seq, ok, problems: [..], checks: {...}}. */
export async function verifyEntry(entry, keys, previousHash = null, { signature = true } = {}) {
  const problems = [];
  const checks = { hash: false, link: previousHash !== null, signature: false, dice: "none" };
  let computed = null;
  try {
    if (!/^([0-9a-fA-F]{2})*$/.test(entry.prev_hash)) problems.push("prev_hash is not hex");
    else computed = await entryHash(entry);
  } catch (error) {
    problems.push(`the entry has no canonical form: ${error.message}`);
  }
  if (computed !== null && computed !== entry.entry_hash) {
    problems.push(`entry_hash does not match the entry's content (computed ${computed.slice(0, 12)}…)`);
  } else if (computed !== null) {
    checks.hash = true;
  }
  if (previousHash !== null && entry.prev_hash !== previousHash) {
    problems.push("prev_hash does not match the previous entry's entry_hash");
  }
  const signer = keys.get(entry.key_id);
  if (!signature) {
    // the log's key checks named why this entry's key is not trusted
  } else if (!signer) {
    problems.push(`unknown signing key ${pyRepr(entry.key_id)}`);
  } else {
    let good = false;
    try {
      const signed = encoder.encode(SIGNATURE_CONTEXT + entry.entry_hash);
      good = await subtle.verify({ name: "Ed25519" }, signer.key, base64ToBytes(entry.signature), signed);
    } catch {
      good = false;  // not base64: no signature
    }
    if (!good) problems.push("the signature does not verify");
    else if (signer.notAfter && entry.v < 2 && entry.time > signer.notAfter) {
      problems.push(`signed at ${entry.time}, after key ${entry.key_id} was retired at ${signer.notAfter}`);
    } else checks.signature = true;
  }
  const seeded = ["drawn", "chosen", "seeded"].includes(entry.source);
  if (entry.v >= 2 && seeded && entry.source !== "seeded" && (typeof entry.seed !== "string" || !entry.seed)) {
    problems.push(`a ${entry.source} entry has no seed`);
  } else if (entry.v >= 2 && entry.source === "drawn" && !/^[0-9a-f]{64}$/.test(entry.seed)) {
    problems.push("a drawn seed is 64 hex digits: this one was not drawn by the server");
  }
  if (entry.v >= 2 && entry.source === "supplied" && entry.seed !== null && entry.seed !== undefined) {
    problems.push("a supplied roll has no seed");
  }
  // An empty seed is no key (WebCrypto refuses it): "has no seed" above, nothing to derive.
  if (seeded && typeof entry.seed === "string" && entry.seed) {
    checks.dice = "re-derived";
    const wrong = await wrongDie(entry.seed, entry.dice);
    if (wrong) {
      problems.push(wrong);
      checks.dice = "wrong";
    }
  } else if (entry.source === "committed" && entry.session?.link !== undefined) {
    // A hash-chain roll checks alone: its link hashes to its chain's anchor in as many steps
    // as it stands from the chain's start, and its dice derive from it now.
    const ref = entry.session;
    const steps = ref.nonce - ref.first_nonce + 1;
    if (steps > MAX_LENGTH) {
      // No chain has more links; hashing the link back that far could take forever.
      problems.push(`nonce ${ref.nonce} is past its chain's ${MAX_LENGTH} links`);
      checks.dice = "wrong";
    } else if (!LINK.test(ref.link) || !(steps >= 1) || (await chainPrevious(ref.link, steps)) !== ref.commitment) {
      problems.push("the revealed link does not hash to its chain's anchor");
      checks.dice = "wrong";
    } else if (entry.mechanic === SEALED_ROLL) {
      // Its dice mix the roller's blind: they are checked when its reveal opens it.
      checks.dice = "sealed (its dice are checked at its reveal)";
    } else {
      const wrong = await wrongDie(`${ref.link}:${ref.client_seed}:${ref.nonce}`, entry.dice);
      checks.dice = wrong ? "wrong" : "re-derived from the revealed link";
      if (wrong) problems.push(wrong);
    }
  } else if (entry.source === "committed") {
    checks.dice = "committed (checkable after the reveal)";
  } else if (entry.source === "supplied") {
    checks.dice = "supplied (rolled elsewhere)";
  } else if (entry.source === "statement") {
    checks.dice = "statement (no dice)";
  }
  checks.source = entry.source;
  return { seq: entry.seq, ok: problems.length === 0, problems, checks, proves: PROVES[entry.source] ?? null };
}

/** What a roll of each source proves (fairroll.audit.verify's words, held equal by a test). */
export const PROVES = {
  drawn:
    "fair if the operator is honest: the server drew the seed after it saw the request, so a " +
    "dishonest operator could have drawn again until it liked the dice, unseen; roll in a seed " +
    "session to take that power away",
  chosen: "reproducible, not fair: the caller chose the seed and could have tried many before this one",
  committed:
    "fair: the server committed to its seeds (a hash chain's anchor, or a server seed's SHA-256) " +
    "before the player's client seed was known, and the nonces run without a gap",
  supplied: "rolled elsewhere: fairroll only adjudicated these dice",
  seeded: "version 1: drawn or chosen (who chose the seed is not recorded)",
};

/** What a server that refuses rolls in a seed session can and cannot do. */
export const SELECTIVE_REFUSAL =
  "a server can refuse a roll in a seed session, but not change its dice: refused, the same " +
  "nonce and client seed give the same dice when it is made; a selective refusal shows as the " +
  "same nonce and client seed refused again and again";

/** The mechanic of an operator's signed statement that acknowledged seqs were lost for
 * good (docs/audit.md): it may follow exactly the gap it declares. */
export const EPOCH_MECHANIC = "audit.epoch";

/** Who chose a version 2 entry's seed: one of these, and `statement` exactly for the
 * statement mechanics (fairroll.audit.verify's `_SOURCES_V2` and `_STATEMENTS`). A roll
 * relabelled `statement`, `seeded` (version 1's word) or anything else is refused. */
export const SOURCES = new Set(["drawn", "chosen", "committed", "supplied", "statement"]);
export const STATEMENTS = new Set([
  "session.commit", "session.renew", "session.reveal", "table.policy", EPOCH_MECHANIC, "key.retire", SEALED_REVEAL,
]);
const SOURCES_V1 = new Set(["seeded", "committed", "supplied"]);

/** What is wrong with an entry's source for its version and mechanic, or null. */
export function sourceProblem(entry) {
  const { source, mechanic } = entry;
  if (entry.v >= 2) {
    if (!SOURCES.has(source)) return `unknown dice source ${pyRepr(source)}`;
    // Row 25: a sealed roll drawn, chosen or supplied would hide dice no session fixed.
    if (mechanic === SEALED_ROLL && source !== "committed") return sealedRollProblem(entry);
    if ((source === "statement") !== STATEMENTS.has(mechanic)) {
      return `a ${mechanic} entry cannot have source ${pyRepr(source)}`;
    }
    if (source === "statement" && (entry.dice ?? []).length) return "a statement rolls no dice";
    return null;
  }
  if (mechanic !== EPOCH_MECHANIC && !SOURCES_V1.has(source)) return `unknown dice source ${pyRepr(source)}`;
  return null;
}

/** An epoch entry declares the seqs after `previousSeq` lost: it may follow the gap. */
export function declaresGap(entry, previousSeq) {
  const request = entry.request;
  return (
    entry.mechanic === EPOCH_MECHANIC &&
    isObject(request) &&
    entry.seq > previousSeq &&
    request.lost_after === previousSeq &&
    request.resume_after === entry.seq - 1
  );
}
