// Sealed rolls (docs/audit.md, "Sealed rolls", rows 25 to 28): a roll in a hash-chain seed
// session whose entry holds only a commitment to its request, dice and outcome, until a
// `sealed.reveal` statement publishes the opening. The dice mix a blind the roller's client
// drew, so the link the roll reveals at once does not give them away. Checked here as the
// Python core (fairroll.audit.verify) checks them, but for the outcome replayed by the rules
// (the JavaScript core shows the dice it re-derived next to the outcome, as for every roll).

import { bytesToHex, encoder, sha256 } from "./bytes.js";
import { canonicalJson, isObject } from "./canonical.js";
import { LINK, wrongDie } from "./dice.js";

/** The mechanic of a sealed roll's entry, and of the statement that opens it. */
export const SEALED_ROLL = "sealed.roll";
export const SEALED_REVEAL = "sealed.reveal";
/** Whom the roller's VTT shows a sealed roll to: roller and GM, the GM only, the roller only. */
export const AUDIENCES = new Set(["gm", "blind", "self"]);

const DOMAIN = "fairroll/sealed/v1\n";
const OPENING_FIELDS = ["blind", "dice", "mechanic", "outcome", "request"];
const REQUEST_FIELDS = ["audience", "commitment", "mechanic"];
const sameKeys = (object, fields) => Object.keys(object).sort().join() === fields.join();

/** The commitment a sealed entry holds to `opening`: hex SHA-256 of the domain line and
 * the opening's RFC 8785 bytes. Throws NotCanonicalError for an opening with no canonical
 * form (a float, a lone surrogate). */
export async function sealedCommitment(opening) {
  return bytesToHex(await sha256(encoder.encode(DOMAIN + canonicalJson(opening))));
}

/** Row 25: what is wrong with a `sealed.roll` entry's shape, or null. It is a committed
 * roll in a hash-chain session (its link revealed, so the order checks hold unchanged)
 * that shows nothing: no dice, no outcome, no seed, and a request of exactly the mechanic,
 * the audience and the commitment. */
export function sealedRollProblem(entry) {
  if (entry.source !== "committed" || !isObject(entry.session)) {
    return "a sealed roll rolls in a hash-chain seed session (source committed)";
  }
  if (typeof entry.session.link !== "string" || !LINK.test(entry.session.link)) {
    return "a sealed roll rolls in a hash-chain seed session: it reveals its link";
  }
  if (entry.dice.length || (entry.outcome ?? null) !== null || (entry.seed ?? null) !== null) {
    return "a sealed roll shows no dice, outcome or seed: its commitment hides them";
  }
  const request = entry.request;
  if (!isObject(request) || !sameKeys(request, REQUEST_FIELDS)) {
    return "a sealed roll's request is exactly {mechanic, audience, commitment}: an audience of gm, blind or self and a commitment of 64 hex digits";
  }
  if (typeof request.mechanic !== "string" || !AUDIENCES.has(request.audience) || typeof request.commitment !== "string"
      || !LINK.test(request.commitment)) {
    return "a sealed roll's request is exactly {mechanic, audience, commitment}: an audience of gm, blind or self and a commitment of 64 hex digits";
  }
  return null;
}

/** Row 27: why `opening` does not open the sealed entry `sealed` (whose shape is row
 * 25's), or null: the opening's fields, its commitment, its mechanic, and every die
 * derived from `link:client_seed:nonce:blind` of the sealed entry's session. The live
 * check of a sealed answer asks the same. */
export async function openingProblem(sealed, opening) {
  const seq = sealed.seq;
  let commitment;
  try {
    commitment = await sealedCommitment(opening);
  } catch (error) {
    return `the opening has no canonical form: ${error.message}`;
  }
  if (commitment !== sealed.request.commitment) return `the opening does not open the commitment of seq ${seq}`;
  // Only a sealed roll that committed to a malformed opening gets here.
  if (!isObject(opening) || !sameKeys(opening, OPENING_FIELDS) || typeof opening.blind !== "string"
      || !LINK.test(opening.blind) || !isObject(opening.request) || !Array.isArray(opening.dice)) {
    return `the opening of seq ${seq} is not {blind, mechanic, request, dice, outcome} with a blind of 64 lowercase hex digits`;
  }
  if (opening.mechanic !== sealed.request.mechanic) return `the opening's mechanic is not the one seq ${seq} sealed`;
  const { link, client_seed: clientSeed, nonce } = sealed.session;
  const wrong = await wrongDie(`${link}:${clientSeed}:${nonce}:${opening.blind}`, opening.dice);
  if (wrong) return `the opening of seq ${seq}: ${wrong.replaceAll("the seed", "its seed")} (link:client_seed:nonce:blind)`;
  return null;
}

/** The sealed rolls of a log as it is read: each one until its reveal, the reveals
 * (rows 26 and 27), and what the verdict lists (row 28). `firstSeq`: the first seq read
 * (a range, an archive base): a reveal of a roll before it is counted unchecked, not bad. */
export class SealedRolls {
  constructor() {
    this.firstSeq = null;
    this.rolls = new Map();  // seq -> {entry, revealed}
    this.revealed = 0;
    this.unchecked = 0;
  }

  /** A `sealed.roll` entry whose shape row 25 accepted. */
  roll(entry) {
    this.rolls.set(entry.seq, { entry, revealed: false });
  }

  /** A `sealed.reveal` statement (rows 26 and 27); pushes its problems. */
  async reveal(entry, problems, checks) {
    const request = entry.request;
    if (!isObject(request) || !sameKeys(request, ["opening", "seq"]) || !Number.isInteger(request.seq)) {
      return problems.push("a sealed.reveal names the seq it reveals and its opening");
    }
    const at = request.seq;
    // Before the part of the log read (a range, an archive base): seqs start at 1, so a
    // reveal of seq 0 or below reveals nothing, wherever the log is read from.
    if (this.firstSeq !== null && at > 0 && at < this.firstSeq) {
      this.unchecked += 1;
      checks.dice = `reveal of sealed roll #${at}, before the part of the log read: not checked`;
      return;
    }
    const sealed = this.rolls.get(at);
    if (sealed?.revealed) return problems.push(`the sealed roll at seq ${at} is revealed twice`);
    if (!sealed || at >= entry.seq) {
      return problems.push(`the reveal at seq ${entry.seq} reveals no sealed roll: seq ${at} is not a sealed.roll earlier in this log`);
    }
    const wrong = await openingProblem(sealed.entry, request.opening);
    if (wrong) return problems.push(wrong);
    sealed.revealed = true;
    this.revealed += 1;
    checks.dice = `reveal of sealed roll #${at}: it opens its commitment, ${request.opening.dice.length} dice re-derived with its blind`;
  }

  /** Row 28: the seqs of the sealed rolls never revealed (they verify; they are listed). */
  get unrevealed() {
    return [...this.rolls].filter(([, roll]) => !roll.revealed).map(([seq]) => seq).sort((a, b) => a - b);
  }
}
