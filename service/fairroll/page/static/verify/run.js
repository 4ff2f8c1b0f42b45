// A table's log verified as it is read (docs/audit.md, "What a verifier checks"): each
// entry after the one before, the keys the log publishes under the pinned root, the
// sessions, the policy, the Merkle tree grown by each entry, and the checkpoints and
// receipts a player kept held to (a rewritten, forked or truncated log, or a kept one
// inside a declared-lost range, is caught). As the Python core's
// fairroll.audit.verify.run, with its verdict's shape and words.

import { base64ToBytes, sameBytes } from "./bytes.js";
import { fieldProblem, isObject, leafHash, parseStrict } from "./canonical.js";
import { declaresGap, EPOCH_MECHANIC, sourceProblem, verifyEntry } from "./entry.js";
import { Frontier, lostLeaf } from "./merkle.js";
import { verifyCheckpoint } from "./note.js";
import { SEALED_REVEAL, SEALED_ROLL, SealedRolls, sealedRollProblem } from "./sealed.js";
import { Sessions } from "./sessions.js";
import { KeyRing } from "./trust.js";

/** What a verdict says when no root is pinned: nothing the log's keys signed can be
 * trusted, whatever it holds. */
export const NOT_VERIFIED =
  "NOT VERIFIED: no root is pinned; pass the root key id published out of band (a key " +
  "the server names itself proves nothing)";

/** A table's log verified as it is read, page after page: the chain, the sessions'
 * nonces and reveals, the policy, and the Merkle tree. `keys`: the keys a server lists
 * (importKeys; trustedKeys under a pinned root), used only for version 1 entries, a log
 * read from its middle, and kept checkpoints. `root`: the pinned root key id; then a
 * version 2 entry is checked only with a key this log published under that root before it
 * or in it (a certificate signed by the root), as `fairroll verify --root` does; without
 * it nothing is trusted (`verdict()` says NOT VERIFIED). `previousHash`/`previousSeq`:
 * where the log starts (64 zeros and 0 from seq 1; an archived table's base `head_hash`
 * and `size`, with `frontier` its base's frontier hashes, base64). `checkpoints`: the
 * signed checkpoints a player kept (JSON of GET .../checkpoint; the last one verified
 * too, as `fairroll verify --since`), `receipts` the receipts it kept ({seq, entry_hash}
 * at least), as `fairroll verify --checkpoint/--receipt`: the log must still hold each
 * (its entry hash at the seq, its Merkle root at the size), or it was rewritten, forked
 * or truncated. `table` pins the table's name. */
export class LogVerifier {
  /** @param {Map<string, any>} keys
   * @param {{previousHash?: string | null, previousSeq?: number | null, frontier?: string[] | null, root?: string | null,
   *   checkpoints?: any[], receipts?: any[], table?: string | null}} [options] */
  constructor(keys, { previousHash = null, previousSeq = null, frontier = null, root = null, checkpoints = [], receipts = [], table = null } = {}) {
    this.keys = new Map(keys);
    this.pinnedRoot = root;  // the pinned root key id: keys count only as the log publishes them
    this.ring = new KeyRing(this.keys, root);
    this.previous = previousHash;
    this.seq = previousSeq;
    this.partial = previousSeq !== null && previousSeq > 0;
    this.baseProblem = null;  // an archive base whose frontier does not fit its size
    try {
      this.tree = previousSeq === null || previousSeq === 0
        ? new Frontier()
        : frontier ? Frontier.of(previousSeq, frontier.map(base64ToBytes)) : null;
    } catch (error) {
      this.tree = null;
      this.baseProblem = `the archive base's frontier does not fit its size: ${error.message}`;
    }
    this.sessions = null;  // Sessions, from the first entry read (partial or not)
    this.sealed = new SealedRolls();  // the sealed rolls until their reveals (rows 25-28)
    this.policy = {};
    this.pinnedTable = table;
    this.table = table;
    this.failures = [];  // results found bad, in the order a reader meets them
    this.count = 0;
    this.sources = {};
    this.lost = [];  // [{epoch_seq, lost_after, resume_after, reason}]
    this.kept = { checkpoints, receipts, opened: false };
    this.expected = new Map();  // seq -> entry_hash a kept checkpoint or receipt saw
    this.expectedRoots = new Map();  // size -> Merkle root (bytes) a kept checkpoint signed
  }

  /** The rolls that verify but are not fair: [{seq, why}]. */
  get notFair() {
    return this.sessions?.notFair ?? [];
  }

  /** Row 28: the seqs of the sealed rolls read and never revealed. */
  get sealedUnrevealed() {
    return this.sealed.unrevealed;
  }

  /** The Merkle root (bytes) of the entries so far, or null if not known (a range). */
  async root() {
    return this.tree ? this.tree.root() : null;
  }

  /** Verify the next entries; returns their results, and `revised`: results of earlier
   * committed rolls that a reveal among these entries has now checked. */
  async add(entries) {
    await this.#openKept();
    const results = [];
    const revised = [];
    for (const entry of entries) {
      const result = await this.#one(entry, revised);
      result.ok = result.problems.length === 0;
      if (!result.ok) this.failures.push(result);
      results.push(result);
    }
    for (const earlier of revised) {
      const wasOk = earlier.ok;
      earlier.ok = earlier.problems.length === 0;
      if (wasOk && !earlier.ok) this.failures.push(earlier);
    }
    return { results, revised };
  }

  async #one(entry, revised) {
    const expectedSeq = this.seq !== null ? this.seq + 1 : null;
    if (this.baseProblem) {
      // The Python core's verdict: the first entry after the base, in the same words.
      const [why, at] = [this.baseProblem, expectedSeq];
      this.baseProblem = null;
      return { seq: at, ok: false, problems: [why], checks: {}, proves: null };
    }
    const malformed = fieldProblem(entry, expectedSeq);
    if (malformed) {
      // Nothing else of it can be read: the verdict stops here, as the Python core's.
      this.tree = null;
      return { seq: malformed.seq, ok: false, problems: [malformed.why], checks: {}, proves: null };
    }
    if (this.seq === null) {
      this.partial = entry.seq !== 1;
      if (this.partial) this.tree = null;
    }
    this.sealed.firstSeq ??= this.seq !== null ? this.seq + 1 : entry.seq;
    this.sessions ??= new Sessions({ partial: this.partial });
    this.ring.partial = this.partial;
    this.ring.keys = this.keys;  // a page sets `keys` anew when the server rotates its key
    const expected = this.previous ?? (entry.seq === 1 ? "0".repeat(64) : null);
    const early = [];
    const signing = entry.v >= 2 ? await this.ring.signing(entry, early) : this.keys;
    const result = await verifyEntry(entry, signing ?? new Map(), expected, { signature: signing !== null });
    result.problems.unshift(...early);
    if (entry.seq === 1 && !this.seq && entry.prev_hash !== expected) {
      // The Python core's words for the first entry's link.
      const at = result.problems.indexOf("prev_hash does not match the previous entry's entry_hash");
      if (at >= 0) result.problems[at] = "the first entry does not chain on the genesis hash";
    }
    if (this.version !== undefined && entry.v < this.version) {
      // The Python core's words: a version-1 entry slipped in later would escape the
      // rules of version 2 (the policy, the sources, the pinned root).
      result.problems.push(`the entry's version ${entry.v} is below the previous entry's ${this.version}: a log's version never goes down`);
    }
    this.version = entry.v;
    const gap = this.seq !== null && entry.seq > this.seq + 1 && declaresGap(entry, this.seq);
    if (this.seq !== null && entry.seq !== this.seq + 1 && !gap) {
      result.problems.push(`seq ${this.seq + 1} is missing: found seq ${entry.seq}`);
      result.badSeq = this.seq + 1;  // the seq a verifier names: the first one missing
    }
    this.table ??= entry.table;
    if (entry.table !== this.table) {
      result.problems.push(this.pinnedTable ? `the entry belongs to table '${entry.table}', not '${this.pinnedTable}'` : "the entry belongs to another table");
    }
    if (entry.mechanic === EPOCH_MECHANIC && isObject(entry.request)) {
      result.checks.dice = `epoch: seqs ${entry.request.lost_after + 1}..${entry.request.resume_after} declared lost`;
    }
    const wrongSource = sourceProblem(entry);
    if (wrongSource) {
      result.problems.push(wrongSource);
      result.proves = null;
    } else if (entry.v >= 2) {
      await this.#sourceChecks(entry, result, revised);
    } else {
      this.#v1Checks(entry, result);
    }
    if (entry.source !== "statement" && !(entry.v < 2 && entry.mechanic === EPOCH_MECHANIC)) {
      this.sources[entry.source] = (this.sources[entry.source] ?? 0) + 1;
    }
    if (gap) this.#lost(entry, result);
    // A gap no epoch declares is already the verdict: the tree stops there (filling it
    // with lost leaves up to a seq of 2^53 would never end).
    if (this.seq !== null && entry.seq > this.seq + 1 && !gap) this.tree = null;
    await this.#grow(entry, result);
    if (this.expected.has(entry.seq) && entry.entry_hash !== this.expected.get(entry.seq)) {
      result.problems.push("this entry differs from an earlier checkpoint or receipt: rewritten or forked");
    }
    this.previous = entry.entry_hash;
    this.seq = entry.seq;
    this.count += 1;
    return result;
  }

  /** The entry's leaf in the tree (lost seqs as their own leaves), and the root at a size
   * a kept checkpoint signed. */
  async #grow(entry, result) {
    if (!this.tree) return;
    let leaf;
    try {
      leaf = await leafHash(entry);
    } catch {
      this.tree = null;  // no canonical form: already a problem of the entry
      return;
    }
    while (this.tree.size + 1 < entry.seq) this.tree = await this.tree.append(await lostLeaf(this.tree.size + 1));
    this.tree = await this.tree.append(leaf);
    const want = this.expectedRoots.get(entry.seq);
    if (want && !sameBytes(await this.tree.root(), want)) {
      result.problems.push(`the Merkle root at size ${entry.seq} is not the one a kept checkpoint signed: rewritten or forked`);
    }
  }

  /** The seqs after `lost_after` up to this epoch entry are declared lost: named in the
   * verdict with the epoch's reason. A kept checkpoint or receipt of a seq among them saw
   * entries the log no longer holds: nothing here can show it consistent, so it is
   * refused, not skipped. */
  #lost(epoch, result) {
    const lostAfter = this.seq;
    const reason = typeof epoch.request?.reason === "string" ? epoch.request.reason : "";
    this.lost.push({ epoch_seq: epoch.seq, lost_after: lostAfter, resume_after: epoch.seq - 1, reason });
    const kept = [...this.expected.keys(), ...this.expectedRoots.keys()].filter((s) => s > lostAfter && s < epoch.seq).sort((a, b) => a - b);
    if (kept.length) {
      result.problems.push(
        `a kept checkpoint or receipt saw seq ${kept[0]}, but this epoch declares seqs ${lostAfter + 1}..${epoch.seq - 1} lost: ` +
        "the log no longer holds what a player kept, so it cannot be shown consistent with it",
      );
    }
  }

  /** The kept checkpoints (each opened with `keys`) and receipts, once: two checkpoints of
   * one size with two roots are an equivocation, whatever the entries say. */
  async #openKept() {
    if (this.kept.opened) return;
    this.kept.opened = true;
    const roots = new Map();
    for (const checkpoint of this.kept.checkpoints) {
      let opened;
      try {
        opened = await verifyCheckpoint(checkpoint, this.keys, { table: this.pinnedTable ?? checkpoint.table ?? null });
      } catch (error) {
        this.failures.push({ seq: null, ok: false, problems: [`a kept checkpoint does not verify: ${error.message}`] });
        continue;
      }
      if (!opened.size) continue;
      const seen = roots.get(opened.size);
      if (seen && !sameBytes(seen, opened.root)) {
        this.failures.push({
          seq: opened.size, ok: false,
          problems: [`two kept checkpoints of size ${opened.size} disagree on the root: the log showed two histories (an equivocation)`],
        });
      }
      roots.set(opened.size, opened.root);
      this.expectedRoots.set(opened.size, opened.root);
      this.expected.set(opened.size, opened.headHash);
    }
    for (const receipt of this.kept.receipts) {
      if (Number.isInteger(receipt?.seq) && typeof receipt.entry_hash === "string") this.expected.set(receipt.seq, receipt.entry_hash);
    }
  }

  /** The end of what was read: a kept checkpoint or receipt beyond it means the log was
   * cut back. Returns a result ({ok, seq, badSeq, problems}); a failure counts in the
   * verdict. */
  async finish() {
    await this.#openKept();
    const last = this.seq ?? 0;
    const beyond = [...this.expected.keys(), ...this.expectedRoots.keys()].filter((s) => s > last);
    const result = { seq: last + 1, ok: true, problems: [] };
    if (beyond.length && !this.failures.length) {
      result.problems.push(`the log ends at seq ${last}, but a checkpoint or receipt saw seq ${Math.max(...beyond)}: truncated`);
      result.ok = false;
      this.failures.push(result);
    }
    return result;
  }

  /** The verdict on what was read, in the CLI's shape (`fairroll verify --root`): ok, the
   * first bad seq and why (the first problem a reader meets, as the CLI stops there), the
   * rolls that verify but are not fair, the ranges epochs declared lost, and NOT VERIFIED
   * when no root is pinned. */
  verdict() {
    const bad = this.failures[0] ?? null;
    const verified = Boolean(this.pinnedRoot);
    return {
      ok: verified && !bad,
      verified,
      entries: this.count,
      last_seq: this.seq,
      first_bad_seq: bad ? (bad.badSeq ?? bad.seq) : null,
      reason: bad ? bad.problems.join("; ") : verified ? null : NOT_VERIFIED,
      not_fair: this.notFair.map((n) => ({ ...n })),
      lost: this.lost.map((r) => ({ ...r })),
      sources: { ...this.sources },
      // Row 28: a sealed roll never revealed verifies; it is listed. A reveal of a roll
      // before the part read (a range, an archive base) is counted, not checked.
      sealed_unrevealed: this.sealedUnrevealed,
      sealed_revealed: this.sealed.revealed,
      sealed_unchecked: this.sealed.unchecked,
    };
  }

  async #sourceChecks(entry, result, revised) {
    const problems = result.problems;
    if (entry.source === "statement") {
      const request = entry.request;
      if (!isObject(request)) {
        problems.push(`a ${entry.mechanic} entry has no request object`);
        return;
      }
      if (entry.mechanic === "key.retire") {
        if (typeof request.key_id !== "string") problems.push("a key.retire entry names the key_id it retires");
        else this.ring.retire(request.key_id, entry.seq);
      } else if (entry.mechanic === "table.policy") {
        if (entry.seq !== 1) problems.push("a table's policy is its first entry, only");
        else this.policy = request;
      } else if (entry.mechanic === "session.commit") {
        this.sessions.commit(entry.seq, request, problems);
        result.checks.dice = `commitment of seed session ${request.seed_id}`;
      } else if (entry.mechanic === "session.renew") {
        this.sessions.renew(entry.seq, request, problems);
        result.checks.dice = `next chain of seed session ${request.seed_id}, from nonce ${request.first_nonce}`;
      } else if (entry.mechanic === "session.reveal") {
        const checked = await this.sessions.reveal(entry.seq, request, problems);
        revised.push(...checked);
        result.checks.dice = `reveal of seed session ${request.seed_id}: ${checked.length} roll(s) re-derived`;
      } else if (entry.mechanic === SEALED_REVEAL) {
        await this.sealed.reveal(entry, problems, result.checks);
      }
    } else if (entry.source === "committed") {
      // Row 25 first, as the Python core: a sealed roll of the wrong shape goes no further.
      const unsealed = entry.mechanic === SEALED_ROLL ? sealedRollProblem(entry) : null;
      if (unsealed) return problems.push(unsealed);
      await this.sessions.committed(entry, result, problems);
      if (entry.mechanic === SEALED_ROLL) this.sealed.roll(entry);
    } else if (entry.source === "drawn" && this.policy.drawn_seeds === false) {
      problems.push("the table's policy refuses server-drawn seeds");
    } else if (entry.source === "chosen" && this.policy.chosen_seeds === false) {
      problems.push("the table's policy refuses caller-chosen seeds");
    } else if (entry.source === "supplied" && this.policy.supplied_dice === false) {
      problems.push("the table's policy refuses supplied dice");
    }
  }

  #v1Checks(entry, result) {
    if (entry.mechanic === EPOCH_MECHANIC) return;
    if (entry.source === "seeded" && (typeof entry.seed !== "string" || !entry.seed)) result.problems.push("a seeded entry has no seed");
    else if (entry.source === "committed") this.sessions.committedV1(entry, result.problems);
  }
}

/** Check a run of consecutive entries (ascending seq); the first one's link is checked
 * against `previousHash` when given (64 zeros for a table from seq 1; an archived
 * table's base `head_hash`, with `previousSeq` its `size`). Every seq must follow the
 * one before, but for the gap an epoch entry declares.
 * @param {object[]} entries
 * @param {Map<string, object>} keys from importKeys
 * @param {string | null} [previousHash]
 * @param {number | null} [previousSeq]
 * @returns {Promise<Array<{seq: number, ok: boolean, problems: string[], checks: {hash: boolean, link: boolean, signature: boolean, dice: string}}>>} */
export async function verifyEntries(entries, keys, previousHash = null, previousSeq = null) {
  const log = new LogVerifier(keys, { previousHash, previousSeq });
  return (await log.add(entries)).results;
}

/** A whole export (NDJSON text, from seq 1 or from `previousSeq`) verified under the
 * pinned `root`, as `fairroll verify --root <root>` verifies it (with `checkpoints` and
 * `receipts` kept, as `--checkpoint`/`--since` and `--receipt`): returns `verdict()`'s
 * shape ({ok, verified, first_bad_seq, reason, not_fair, lost, ...}) and the per-entry
 * `results`. A line that is not strict JSON stops the reading there, at its seq. With no
 * root the verdict is NOT VERIFIED (ok false), whatever the log holds. */
/** @param {string} text @param {Map<string, any>} keys
 * @param {{root?: string | null, previousHash?: string | null, previousSeq?: number | null, frontier?: string[] | null,
 *   checkpoints?: any[], receipts?: any[], table?: string | null}} [options] */
export async function verifyLog(text, keys, options = {}) {
  const log = new LogVerifier(keys, options);
  const results = [];
  for (const line of text.split("\n")) {
    if (!line.trim()) continue;
    let entry;
    try {
      entry = parseStrict(line);
    } catch (error) {
      const seq = log.seq !== null ? log.seq + 1 : seqHint(line);
      const verdict = log.verdict();
      if (verdict.first_bad_seq !== null || !verdict.ok && verdict.verified) return { ...verdict, results, log };
      return { ...verdict, ok: false, first_bad_seq: seq, reason: `not a JSON entry: ${error.message}`, results, log };
    }
    results.push(...(await log.add([entry])).results);
  }
  await log.finish();
  return { ...log.verdict(), results, log };
}

function seqHint(line) {
  const found = /"seq"\s*:\s*(\d+)/.exec(line);
  return found ? Number(found[1]) : null;
}

