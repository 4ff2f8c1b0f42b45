// Seed sessions as the log states them, entry by entry (docs/audit.md, "Seed sessions"):
// a session committed before its rolls, nonces in order without a gap, each hash-chain
// roll's link hashing to the one revealed before it, renewals only at a chain's end,
// reveals that open the commitment; and which rolls are not fair: their client seed was in
// the log before their chain was committed, or a roll used it on another chain (the
// server could have ground, or picked, the chain for it). As the Python core's
// fairroll.audit.verify.sessions, word for word: each check pushes its problem and stops
// where the Python core raises.

import { bytesToHex, encoder, sha256 } from "./bytes.js";
import { isObject } from "./canonical.js";
import { chainPrevious, chainReaches, LINK, MAX_LENGTH, wrongDie } from "./dice.js";

/** The words every verifier begins a not-fair roll's `why` with (shared with the CLI). */
export const CLIENT_SEED_REUSED = "client seed reused";

const isLink = (value) => typeof value === "string" && LINK.test(value);
const isInt = (value) => Number.isInteger(value);
const has = (object, key) => Object.prototype.hasOwnProperty.call(object, key);

/** A chain's name for the client seeds rolled on it: its session and its anchor (every
 * chain's anchor is fresh; a commit-reveal session is one chain). */
export const chainOf = (seedId, commitment) => `${seedId} ${commitment}`;

class Session {
  constructor(commitment, nonce, { length = 0, first = 1 } = {}) {
    this.commitment = commitment;
    this.nonce = nonce;
    this.revealed = false;
    this.pending = [];  // [entry, result]: commit-reveal rolls waiting for the reveal
    this.length = length;  // a hash chain (length > 0): its current chain's length
    this.first = first;  // ... and first nonce
    this.last = commitment;  // the link revealed last (the anchor before the first roll)
    this.partial = false;  // met mid-log: its chain's length is not known
    this.committedAt = 0;  // the seq that committed its current chain (0: before the read)
  }

  chain(commitment, length, first, at = 0) {
    Object.assign(this, { commitment, last: commitment, length, first, committedAt: at });
  }
}

export class Sessions {
  constructor({ partial = false } = {}) {
    this.partial = partial;
    this.sessions = new Map();
    this.v1Nonces = new Set();
    this.clientSeeds = new Map();  // client seed -> the seq it first appeared at
    this.clientSeedChains = new Map();  // client seed -> Map(chainOf -> seq of its first roll there)
    this.notFair = [];  // [{seq, why}]
  }

  commit(seq, request, problems) {
    const { seed_id: seedId, commitment } = request;
    if (typeof seedId !== "string" || typeof commitment !== "string") {
      return problems.push("a commitment names its seed_id and commitment");
    }
    if (this.sessions.has(seedId)) return problems.push(`seed session ${seedId} is committed twice`);
    const session = new Session(commitment, 0);
    this.sessions.set(seedId, session);
    session.committedAt = seq;
    if (request.kind === "chain") {
      const length = chainLength(request, problems);
      if (length === null) return;
      if (request.first_nonce !== 1 || !isLink(commitment)) return problems.push("a chain's commitment is a link, from nonce 1");
      session.chain(commitment, length, 1, seq);
    }
  }

  renew(seq, request, problems) {
    const { seed_id: seedId, commitment, first_nonce: first, previous } = request;
    if (!(typeof seedId === "string" && isLink(commitment) && isInt(first) && typeof previous === "string")) {
      return problems.push("a renewal names seed_id, commitment, first_nonce, previous");
    }
    const length = chainLength(request, problems);
    if (length === null) return;
    let session = this.sessions.get(seedId);
    if (!session) {
      if (!this.partial) return problems.push(`seed session ${seedId} has no commitment earlier in the log`);
      session = new Session(previous, first - 1);
      session.chain(previous, length, first - length);
      session.partial = true;
      this.sessions.set(seedId, session);
    }
    if (!session.length || session.revealed) return problems.push(`seed session ${seedId} is not an open hash chain`);
    if (previous !== session.commitment) return problems.push(`the renewal does not follow seed session ${seedId}'s chain`);
    const usedUp = session.partial || session.nonce === session.first + session.length - 1;
    if (first !== session.nonce + 1 || !usedUp) return problems.push(`seed session ${seedId} is renewed before its chain is used up`);
    session.chain(commitment, length, first, seq);
    session.partial = false;
  }

  /** A reveal; returns the commit-reveal rolls it checks now ([entry, result] pairs,
   * their dice re-derived: `result` revised in place). */
  async reveal(seq, request, problems) {
    const { seed_id: seedId, server_seed: serverSeed, rolls, commitment } = request;
    const fail = (why) => {
      problems.push(why);
      return [];
    };
    if (!(typeof seedId === "string" && typeof serverSeed === "string" && typeof commitment === "string" && isInt(rolls))) {
      return fail("a reveal names seed_id, commitment, server_seed, rolls");
    }
    const session = this.#sessionOf(seedId, commitment, rolls, problems);
    if (!session) return [];
    if (session.revealed) return fail(`seed session ${seedId} is revealed twice`);
    if (session.length && !isLink(serverSeed)) return fail("a chain's revealed last link is 64 hex digits");
    const opens = !session.length
      ? bytesToHex(await sha256(encoder.encode(serverSeed)))
      : session.partial
        ? await chainReaches(serverSeed, commitment, MAX_LENGTH)
        : await chainPrevious(serverSeed, session.length);
    if (commitment !== session.commitment || opens !== commitment) {
      return fail("the revealed server seed does not match the commitment");
    }
    if (rolls !== session.nonce) {
      return fail(`seed session ${seedId} is revealed after ${rolls} rolls, but the log holds ${session.nonce}`);
    }
    session.revealed = true;
    const revised = [];
    for (const [roll, earlier] of session.pending) {
      const wrong = await wrongDie(`${serverSeed}:${roll.session.client_seed}:${roll.session.nonce}`, roll.dice);
      earlier.checks.dice = wrong ? "wrong" : "re-derived after the reveal";
      if (wrong) earlier.problems.push(wrong);
      revised.push(earlier);
    }
    session.pending = [];
    return revised;
  }

  /** A version 2 committed roll (its dice, from a revealed link, were checked alone). */
  async committed(entry, result, problems) {
    const seq = entry.seq;
    const ref = sessionRef(entry);
    if (!ref) return problems.push("a committed entry has no valid session");
    const { seed_id: seedId, nonce } = ref;
    if (!this.sessions.has(seedId) && this.partial && has(ref, "link")) {
      if (!(await this.#chainFromHere(ref, problems))) return;
    }
    const session = this.#sessionOf(seedId, ref.commitment, nonce - 1, problems);
    if (!session) return;
    if (ref.commitment !== session.commitment) return problems.push(`the roll's commitment is not seed session ${seedId}'s`);
    if (session.revealed) return problems.push(`a roll in seed session ${seedId} after its reveal`);
    if (nonce <= session.nonce) return problems.push(`nonce ${nonce} of seed session ${seedId} is reused`);
    if (nonce !== session.nonce + 1) {
      return problems.push(`nonce ${session.nonce + 1} of seed session ${seedId} is missing: found nonce ${nonce} (a roll was made and left out)`);
    }
    if ((session.length > 0) !== has(ref, "link")) {
      return problems.push(`the roll and seed session ${seedId} disagree on whether it is a hash chain`);
    }
    this.#freshClientSeed(seq, ref, session, result);
    if (session.length > 0) {
      if (!isLink(ref.link) || ref.first_nonce !== session.first) return problems.push("a hash-chain roll reveals its link and its chain's start");
      if (nonce > session.first + session.length - 1) return problems.push(`nonce ${nonce} is past its chain's ${session.length} links`);
      if ((await chainPrevious(ref.link)) !== session.last) {
        return problems.push("the revealed link does not hash to the one before: the seed was changed");
      }
      session.last = ref.link;
      session.nonce = nonce;
      return;
    }
    session.nonce = nonce;
    session.pending.push([entry, result]);
  }

  /** A version 1 committed roll: nonces unique per session. */
  committedV1(entry, problems) {
    const ref = sessionRef(entry);
    if (!ref) return problems.push("a committed entry has no valid session");
    const at = `${ref.seed_id}\n${ref.nonce}`;
    if (ref.nonce < 1 || this.v1Nonces.has(at)) return problems.push(`nonce ${ref.nonce} of seed session ${ref.seed_id} is reused`);
    this.v1Nonces.add(at);
  }

  /** docs/audit.md, rows 13 and 21: a client seed the log showed before the chain (or server
   * seed) this roll is on was committed (the server knew it when it drew that chain, and
   * could have drawn again until it liked the dice), or one a roll used on another chain
   * (a server holding more than one committed chain could pick the one that grinds it).
   * Either way the roll verifies; it is not fair. */
  #freshClientSeed(seq, ref, session, result) {
    const clientSeed = ref.client_seed;
    if (!this.clientSeeds.has(clientSeed)) this.clientSeeds.set(clientSeed, seq);
    const first = this.clientSeeds.get(clientSeed);
    const chain = chainOf(ref.seed_id, session.commitment);
    if (!this.clientSeedChains.has(clientSeed)) this.clientSeedChains.set(clientSeed, new Map());
    const chains = this.clientSeedChains.get(clientSeed);
    let elsewhere = 0;
    for (const [other, at] of chains) if (other !== chain && (!elsewhere || at < elsewhere)) elsewhere = at;
    if (!chains.has(chain)) chains.set(chain, seq);
    let why;
    if (session.committedAt && first < session.committedAt) {
      why = `${CLIENT_SEED_REUSED}: it is in the log at seq ${first}, before seq ${session.committedAt} committed the chain this roll is on, so the server knew it when it drew that chain and could have ground it`;
    } else if (elsewhere) {
      why = `${CLIENT_SEED_REUSED}: a roll at seq ${elsewhere} used it on another chain, so a server holding more than one committed chain could pick the chain that grinds it (a client seed belongs to one chain)`;
    } else {
      return;
    }
    this.notFair.push({ seq, why });
    result.notFair = why;
    result.proves = `not fair: ${why}`;
  }

  /** A chain committed before the first entry read: its roll's link hashes to the anchor
   * (verifyEntry checked it); take the chain from there. */
  async #chainFromHere(ref, problems) {
    const { link, first_nonce: first, nonce } = ref;
    if (!isLink(link) || !isInt(first) || !(first >= 1 && first <= nonce)) {
      problems.push("a hash-chain roll reveals its link and its chain's start");
      return false;
    }
    if (nonce - first + 1 > MAX_LENGTH) {
      problems.push(`nonce ${nonce} is past its chain's ${MAX_LENGTH} links`);
      return false;
    }
    if ((await chainPrevious(link, nonce - first + 1)) !== ref.commitment) {
      problems.push("the revealed link does not hash to its chain's anchor");
      return false;
    }
    const session = new Session(ref.commitment, nonce - 1);
    session.chain(ref.commitment, MAX_LENGTH, first);
    session.last = await chainPrevious(link);
    session.partial = true;
    this.sessions.set(ref.seed_id, session);
    return true;
  }

  #sessionOf(seedId, commitment, nonce, problems) {
    let session = this.sessions.get(seedId);
    if (!session) {
      if (!this.partial) {
        problems.push(`seed session ${seedId} has no commitment earlier in the log`);
        return null;
      }
      session = new Session(commitment, nonce);  // committed before the first entry read
      this.sessions.set(seedId, session);
    }
    return session;
  }
}

function chainLength(request, problems) {
  const length = request.length;
  if (!isInt(length) || length < 1 || length > MAX_LENGTH) {
    problems.push(`a chain has 1 to ${MAX_LENGTH} links`);
    return null;
  }
  return length;
}

function sessionRef(entry) {
  const session = entry.session;
  if (!isObject(session)) return null;
  const typed = typeof session.seed_id === "string" && typeof session.commitment === "string"
    && typeof session.client_seed === "string" && isInt(session.nonce);
  return typed ? session : null;
}
