// Live checks (docs/audit.md, rows 20, 22 and 23): a player's roll in its own hash-chain
// seed session, checked before it is shown or returned, by the page and the npm client
// alike. `call(method, path, body?, headers?)` answers [status, JSON]; `keys` are the
// signing keys certified under the pinned root (trustedKeys); `s` is the session as the
// client keeps it: {table, seedId, clientSeed, nonce, anchor, length, firstNonce, after
// (the last seq this client verified), checkpoint (the last checkpoint of the table it
// verified: {size, root_hash}), pending?}.

import { bytesToHex, strictBase64ToBytes } from "./bytes.js";
import { canonicalJson } from "./canonical.js";
import { chainPrevious, LINK, wrongDie } from "./dice.js";
import { MECHANICS, STRUCTS } from "./defaults.js";
import { verifyConsistency } from "./merkle.js";
import { verifyReceipt } from "./receipts.js";
import { NOT_VERIFIED } from "./run.js";
import { AUDIENCES, openingProblem, SEALED_ROLL, sealedRollProblem } from "./sealed.js";
import { trustedKeys } from "./trust.js";

/** An answer that does not follow from what this client sent and the committed chain, or
 * a server that will not make the roll it was sent: keep it, it is evidence. */
export class UnfairRollError extends Error {
  constructor(message, answer = null) {
    super(message);
    this.name = "UnfairRollError";
    this.answer = answer;
  }
}

/** The client seed of a chain: drawn by the platform's CSPRNG, after the client saw the
 * chain's anchor committed, and never used before (a new one for every chain). */
export function freshClientSeed() {
  const bytes = globalThis.crypto.getRandomValues(new Uint8Array(16));
  return bytesToHex(bytes);
}

const same = (a, b) => canonicalJson(a ?? null) === canonicalJson(b ?? null);

/** Does the logged request hold every field this client sent, with its value? The log
 * keeps the request as its mechanic reads it, defaults filled in: with `mechanic`, the
 * fields sent are read so too (`withDefaults`), so a field left out must be logged with
 * its default, not with another value the operator picked. */
export function holdsRequest(logged, sent, mechanic = null) {
  return requestUnlike(logged, sent, mechanic) === null;
}

/** Where the logged request is not the one sent (read as `mechanic` reads it, defaults
 * filled in): words naming the first field that differs, what the log holds and what
 * was sent (or, for a field left out, the server's default); null where it holds it. */
export function requestUnlike(logged, sent, mechanic = null) {
  const read = mechanic === null ? sent : withDefaults(mechanic, sent);
  const at = unlikeAt(logged, read, []);
  if (at === null) return null;
  const valueAt = (value) => at.reduce((v, key) => (v !== null && typeof v === "object" ? v[key] : undefined), value);
  const shown = (value) => (value === undefined ? "nothing" : canonicalJson(value));
  const name = at.reduce((words, key) => (typeof key === "number" ? `${words}[${key}]` : words ? `${words}.${key}` : key), "");
  const asked = valueAt(sent) === undefined && valueAt(read) !== undefined
    ? `the server's default ${shown(valueAt(read))} for a field this client left out`
    : `${shown(valueAt(read))} sent`;
  return `${name || "the request"}: ${shown(valueAt(logged))} logged, ${asked}`;
}

/** `sent` as the server reads a request of `mechanic`: each field left out that the
 * mechanic declares a default for filled with it, in nested structs, lists and maps of
 * them too (verify/defaults.js, made from the server's request types by
 * scripts/js_defaults.py). A mechanic this core does not know is left as sent: its
 * logged request is then held to the fields sent only. */
export function withDefaults(mechanic, sent) {
  return filledIn(sent, Object.hasOwn(MECHANICS, mechanic) ? MECHANICS[mechanic] : null);
}

function filledIn(value, type) {
  if (type === null || type === undefined || value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return type.items === undefined ? value : value.map((v) => filledIn(v, type.items));
  if (typeof type === "string") {
    const out = { ...value };
    for (const [name, field] of Object.entries(Object.hasOwn(STRUCTS, type) ? STRUCTS[type] : {})) {
      if (out[name] === undefined) {
        if (Object.hasOwn(field, "default")) out[name] = field.default;
      } else {
        out[name] = filledIn(out[name], field.type);
      }
    }
    return out;
  }
  if (type.values !== undefined) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, filledIn(v, type.values)]));
  if (type.tag !== undefined) return filledIn(value, Object.hasOwn(type.of, value[type.tag]) ? type.of[value[type.tag]] : null);
  return value;
}

/** The path of the first field of `sent` that `logged` does not hold, or null. */
function unlikeAt(logged, sent, at) {
  if (sent === null || typeof sent !== "object") return logged === sent ? null : at;
  if (Array.isArray(sent)) {
    if (!Array.isArray(logged) || logged.length !== sent.length) return at;
    for (const [i, value] of sent.entries()) {
      const found = unlikeAt(logged[i], value, [...at, i]);
      if (found !== null) return found;
    }
    return null;
  }
  if (logged === null || typeof logged !== "object" || Array.isArray(logged)) return at;
  for (const [key, value] of Object.entries(sent)) {
    const found = value === undefined ? null : unlikeAt(logged[key], value, [...at, key]);
    if (found !== null) return found;
  }
  return null;
}

/** A session's commitment as the log shows it: the entry at `status.commit_seq` is the
 * session.commit (or session.renew) of `status.seed_id` with `status.commitment`, and its
 * receipt proves it is in a note of this table signed under the pinned root. */
export async function checkCommitted(call, status, keys, table, held = null) {
  if (status?.kind !== "chain" || !LINK.test(status.commitment ?? "") || !Number.isInteger(status.commit_seq)) {
    throw new UnfairRollError("the server did not show a hash-chain session committed in the log", status);
  }
  const seq = status.chain_seq ?? status.commit_seq;
  const [got, entry] = await call("GET", `/v1/tables/${encodeURIComponent(table)}/entries/${seq}`);
  const request = entry?.request ?? {};
  if (got !== 200 || !["session.commit", "session.renew"].includes(entry.mechanic) || request.seed_id !== status.seed_id
      || request.commitment !== status.commitment || entry.table !== table) {
    throw new UnfairRollError(`seq ${seq} does not commit the chain the server named`, entry);
  }
  if (!trusting(keys)) return entry;  // NOT VERIFIED: nothing to check the note with
  let note;
  try {
    note = await verifyReceipt(entry, status.receipt ?? {}, keys, { table, retired: retiredOf(held) });
  } catch (error) {
    throw new UnfairRollError(`the commitment's receipt: ${error.message}`, status);
  }
  await heldToKept(call, held ?? { table }, note, status);
  return entry;
}

/** Check a roll's answer before it is shown (with no `keys`, no root pinned, everything
 * but the receipt's note, and the caller says NOT VERIFIED): the client seed, session and nonce are the
 * ones sent, the link hashes to the chain's anchor (so to the link before it), the dice
 * re-derive from it, the entry the receipt names holds this answer, the receipt's proof
 * leads from that entry's leaf to its note's root, the note is signed under the pinned
 * root (`keys`) and is a note of this table. Throws UnfairRollError naming what fails. */
export async function checkAnswer(answer, entry, s, nonce, keys, body = null, call = null, path = null) {
  const ref = answer?.session ?? {};
  const fail = (why) => { throw new UnfairRollError(why, answer); };
  if (ref.client_seed !== s.clientSeed) fail("the answer is not rolled with the client seed this client sent");
  if (ref.seed_id !== s.seedId) fail("the roll is not in this player's seed session");
  if (ref.nonce !== nonce) fail(`the roll is at nonce ${ref.nonce}, not at nonce ${nonce} this client sent`);
  if (!LINK.test(ref.link ?? "") || ref.first_nonce !== s.firstNonce || ref.commitment !== s.anchor) {
    fail("the roll is on another chain than the one this client saw committed");
  }
  if ((await chainPrevious(ref.link, nonce - s.firstNonce + 1)) !== s.anchor) {
    fail("the revealed link does not hash to its chain's anchor");
  }
  if (body?.sealed) {
    await checkSealed(answer, entry, s, body, fail, path);
  } else {
    const wrong = await wrongDie(`${ref.link}:${s.clientSeed}:${nonce}`, answer.dice ?? []);
    if (wrong) fail(wrong);
    if (!entry || entry.table !== s.table || entry.seq !== answer.receipt?.seq || !same(entry.session, answer.session)
        || !same(entry.dice, answer.dice) || entry.source !== "committed" || entry.mechanic !== answer.mechanic
        || !same(entry.outcome, answer.outcome)) {
      fail("the log's entry is not this answer");
    }
    // Of the mechanic the path sent rolls: another whose request holds every field sent (a
    // complex check holds a check's) would show its outcome of the same dice.
    const rolls = mechanicAt(path);
    if (rolls !== null && entry.mechanic !== rolls) {
      fail(`the log's entry rolled ${entry.mechanic}, not the ${rolls} this client sent`);
    }
    // The roll the log holds is of the request this client sent, both read as the
    // mechanic reads a request (the log fills in defaults: a field left out is logged
    // with its default, not another value the operator picked).
    const unlike = body === null ? null : requestUnlike(entry.request, { ...body, table: undefined, session: undefined }, entry.mechanic);
    if (unlike !== null) fail(`the log's entry rolled another request than the one this client sent (${unlike})`);
  }
  if (!trusting(keys)) return;  // NOT VERIFIED: the caller labels it so
  const proven = () => verifyReceipt(entry, answer.receipt, keys, { table: s.table, retired: retiredOf(s) });
  let note;
  try {
    note = await proven().catch(async (error) => {
      // A key this client has not read signed it (the entry, or the note: after a
      // rotation the key that took over signs the notes proving the old key's entries, a
      // retried roll's, a roll found in the log): the listing read again, once; a key the
      // pinned root certified since counts, none other.
      if (!call || !/not certified by the pinned root|no signature by a key/.test(error.message)) throw error;
      await retiredSince(call, keys);
      return proven();
    });
  } catch (error) {
    fail(`the receipt: ${error.message}`);
  }
  await heldToKept(call, s, note, answer);
}

/** A blind for a sealed roll (docs/audit.md, "Sealed rolls"): 32 bytes of the platform's
 * CSPRNG, drawn by the roller's client for each roll (never by the server, which could
 * grind one), as 64 lowercase hex digits. */
export function freshBlind() {
  return bytesToHex(globalThis.crypto.getRandomValues(new Uint8Array(32)));
}

/** The mechanic a roll endpoint rolls: `/v1/<system>/<part>s` rolls `<system>.<part>`, as
 * every mechanic is declared (tests/test_js_sealed.py holds them to it); null for a path
 * of another form. */
export function mechanicAt(path) {
  const named = /^\/v1\/([a-z0-9-]+)\/([a-z0-9-]+)s$/.exec(path ?? "");
  return named ? `${named[1]}.${named[2]}` : null;
}

/** The live check of a sealed answer (the session, client seed, nonce and link were
 * checked before): the log's entry is a `sealed.roll` of the mechanic and audience sent, in
 * this session at this nonce; the answer's opening holds the blind and the request sent;
 * it opens the entry's commitment and its dice derive from `link:client_seed:nonce:blind`;
 * the answer's dice and outcome are the opening's. */
async function checkSealed(answer, entry, s, body, fail, path) {
  const { audience, blind } = body.sealed;
  const opening = answer.opening;
  if (!AUDIENCES.has(audience) || !/^[0-9a-f]{64}$/.test(blind ?? "")) fail("a sealed roll is sent with an audience and a blind this client drew");
  if (!entry || entry.table !== s.table || entry.seq !== answer.receipt?.seq || !same(entry.session, answer.session)
      || entry.mechanic !== SEALED_ROLL || sealedRollProblem(entry)) {
    fail("the log's entry is not this sealed roll");
  }
  // The mechanic sealed is the one the path sent to rolls: an operator that sealed another
  // one whose request holds every field sent (a stat-skill complex check holds a check's
  // stat, skill and tn) would show that mechanic's outcome of the same dice, its pick.
  // With no path (or one of another form), the answer's word: the opening's mechanic.
  const mechanic = mechanicAt(path) ?? (answer.mechanic === SEALED_ROLL ? opening?.mechanic : answer.mechanic);
  if (entry.request.mechanic !== mechanic || entry.request.audience !== audience) {
    fail(`the log's entry seals a ${entry.request.mechanic} roll for '${entry.request.audience}', not the ${mechanic} roll for '${audience}' this client sent`);
  }
  if (opening?.blind !== blind) fail("the opening's blind is not the one this client drew");
  const sent = { ...body, table: undefined, session: undefined, sealed: undefined, seed: undefined };
  const unlike = requestUnlike(opening?.request, sent, mechanic);
  if (unlike !== null) fail(`the opening seals another request than the one this client sent (${unlike})`);
  const wrong = await openingProblem(entry, opening);
  if (wrong) fail(wrong);
  if (!same(opening.dice, answer.dice) || !same(opening.outcome, answer.outcome)) {
    fail("the answer's dice and outcome are not the ones its opening commits to");
  }
}

/** Publish the opening of the sealed roll at `seq` of `table` (POST .../sealed/{seq}/reveal):
 * checked here first against the sealed entry the log holds (row 27: it opens the
 * commitment, its dice derive with its blind), so a client never publishes an opening
 * that does not open its roll; then the statement the server appended is checked: a
 * `sealed.reveal` of that seq holding this opening, its receipt under the pinned root.
 * Returns the server's answer; throws UnfairRollError (an opening that does not open) or
 * an Error with the server's status and problem. */
/** @param {any} call @param {string} table @param {number} seq @param {any} opening
 * @param {Map<string, any> | null} [keys] @returns {Promise<any>} */
export async function revealSealed(call, table, seq, opening, keys = null) {
  const base = `/v1/tables/${encodeURIComponent(table)}`;
  const [got, sealed] = await call("GET", `${base}/entries/${seq}`);
  if (got !== 200) throw new Error(`the sealed roll at seq ${seq} was not served (HTTP ${got})`);
  const shape = sealed?.mechanic === SEALED_ROLL ? sealedRollProblem(sealed) : `seq ${seq} is no sealed roll`;
  const wrong = shape ?? (await openingProblem(sealed, opening));
  if (wrong) throw new UnfairRollError(wrong, sealed);
  const [status, answer] = await call("POST", `${base}/sealed/${seq}/reveal`, { opening });
  if (status !== 200 && status !== 201) {
    throw Object.assign(new Error(`HTTP ${status}: ${answer?.detail ?? ""}`), { status, problem: answer });
  }
  const at = answer?.receipt?.seq;
  const [found, entry] = await call("GET", `${base}/entries/${at}`);
  if (found !== 200 || entry?.mechanic !== "sealed.reveal" || entry.table !== table || entry.request?.seq !== seq
      || !same(entry.request?.opening, opening) || !(at > seq)) {
    throw new UnfairRollError(`the log's entry at seq ${at} is not the reveal of seq ${seq} this client sent`, answer);
  }
  if (trusting(keys)) {
    try {
      await verifyReceipt(entry, answer.receipt, keys, { table });
    } catch (error) {
      throw new UnfairRollError(`the reveal's receipt: ${error.message}`, answer);
    }
  }
  return answer;
}

/** The checkpoint of `s.table` this client verified last ({size, root_hash}): the
 * session's own, or the page's (kept in this browser by the table page, under
 * `fairroll:checkpoint:<table>`), whichever is larger. */
export function keptCheckpoint(s) {
  let stored = null;
  try {
    stored = JSON.parse(globalThis.localStorage?.getItem(`fairroll:checkpoint:${s.table}`) ?? "null");
  } catch {
    stored = null;  // no storage here (Node), or not ours
  }
  const mine = s.checkpoint ?? null;
  const usable = (kept) => kept && Number.isInteger(kept.size) && typeof kept.root_hash === "string";
  const both = [mine, stored].filter(usable);
  return both.length ? both.reduce((a, b) => (b.size > a.size ? b : a)) : null;
}

/** docs/audit.md, row 23: a receipt's note must be consistent with the last checkpoint this
 * client verified for the table (a consistency proof from the server between the two
 * sizes, whichever is larger; one root for one size), so a forked tree shown to one
 * player is caught at its next roll; the larger becomes the one kept. `call` null: only
 * a note of the kept size can be held to it (no proof to ask for). */
async function heldToKept(call, s, note, answer) {
  const kept = keptCheckpoint(s);
  const fail = (why) => {
    throw new UnfairRollError(
      `the receipt's note (size ${note.size}) is not consistent with the checkpoint this client verified last (size ${kept.size}): ${why}; the log shown is forked or rewritten`,
      answer,
    );
  };
  if (kept && kept.size > 0 && note.size > 0) {
    if (kept.size === note.size) {
      if (kept.root_hash !== note.rootHash) fail(`two roots for size ${note.size}`);
    } else if (call) {
      const [from, to] = kept.size < note.size ? [kept, note] : [note, kept];
      const toRoot = (x) => strictBase64ToBytes(x.root_hash ?? x.rootHash);
      const path = `/v1/tables/${encodeURIComponent(s.table)}/proofs/consistency?from=${from.size}&to=${to.size}`;
      const [status, proved] = await call("GET", path);
      if (status !== 200 || !Array.isArray(proved?.proof)) fail(`no consistency proof was served (HTTP ${status})`);
      try {
        await verifyConsistency(from.size, to.size, toRoot(from), toRoot(to), proved.proof.map(strictBase64ToBytes));
      } catch (error) {
        fail(error.message);
      }
    }
  }
  if (!kept || note.size > kept.size) {
    const checkpoint = { size: note.size, root_hash: note.rootHash };
    s.checkpoint = checkpoint;
    try {
      globalThis.localStorage?.setItem(`fairroll:checkpoint:${s.table}`, JSON.stringify({ ...checkpoint, seen: new Date().toISOString() }));
    } catch {
      // no storage here: the session keeps it
    }
  }
}

const trusting = (keys) => Boolean(keys && keys.size);
// The retirements a session read in the log (a state saved as JSON holds none).
const retiredOf = (s) => (s?.retired instanceof Map ? s.retired : null);

/** The entry of seed session `s` at `nonce` and its words, read from the table's entries
 * after the last seq this client verified (page after page), or null. A key.retire read
 * on the way is kept in `s.retired` (key id -> its seq): a receipt that key signed at or
 * after it is refused, one of before still holds. */
export async function entryAtNonce(call, s, nonce) {
  let after = s.after ?? 0;
  for (;;) {
    const [status, page] = await call("GET", `/v1/tables/${encodeURIComponent(s.table)}/entries?after=${after}&limit=100`);
    if (status !== 200) throw new Error(`the table's entries were not served (HTTP ${status})`);
    for (const e of page.entries ?? []) {
      if (e?.mechanic === "key.retire" && typeof e.request?.key_id === "string" && Number.isInteger(e.seq)) {
        if (!(s.retired instanceof Map)) s.retired = new Map();
        if (!s.retired.has(e.request.key_id)) s.retired.set(e.request.key_id, e.seq);
      }
    }
    const at = (page.entries ?? []).findIndex((e) => e.session?.seed_id === s.seedId && e.session?.nonce === nonce);
    if (at >= 0) return { entry: page.entries[at], words: page.words?.[at] ?? null };
    if (page.next_after === null || page.next_after === undefined || !page.entries?.length) return null;
    after = page.next_after;
  }
}

/** Is the roll the log holds at this client's nonce the one it sent? A sealed roll shows
 * only its mechanic and audience (its request is in the opening). */
/** Why the roll the log holds at `nonce` is not the one this client sent: another client
 * seed, or the first field of its request that differs (`requestUnlike`). */
function notSent(nonce, s, entry, body) {
  const said = `nonce ${nonce} of this session holds a roll this client did not send`;
  if (entry.session.client_seed !== s.clientSeed) return `${said} (another client seed)`;
  if (body?.sealed) return `${said} (another sealed roll: ${entry.mechanic}, for ${entry.request?.audience})`;
  const unlike = requestUnlike(entry.request, { ...body, table: undefined }, entry.mechanic);
  return unlike ? `${said} (${unlike})` : said;
}

function loggedAsSent(entry, body) {
  if (body?.sealed) return entry.mechanic === SEALED_ROLL && entry.request?.audience === body.sealed.audience;
  return holdsRequest(entry.request, { ...body, table: undefined }, entry.mechanic);
}

/** An answer for an entry found in the log: the entry's own fields, and a receipt made
 * of the table's checkpoint and the entry's inclusion proof in it. A sealed roll's dice
 * are in its opening, which the log does not hold until its reveal: the server's answer
 * was lost, and only it could send the opening again (the same Idempotency-Key). */
async function answerOf(call, s, entry, words, body = null) {
  if (body?.sealed) {
    throw new UnfairRollError(
      `nonce ${s.pending?.nonce ?? entry.session?.nonce} of this session holds this client's sealed roll (seq ${entry.seq}), but the server did not answer its opening: send it again with the same Idempotency-Key`,
      entry,
    );
  }
  const base = `/v1/tables/${encodeURIComponent(s.table)}`;
  const [got, checkpoint] = await call("GET", `${base}/checkpoint`);
  if (got !== 200) throw new Error(`the table's checkpoint was not served (HTTP ${got})`);
  const [proved, inclusion] = await call("GET", `${base}/proofs/inclusion?seq=${entry.seq}&size=${checkpoint.size}`);
  if (proved !== 200) throw new Error(`no inclusion proof of seq ${entry.seq} (HTTP ${proved})`);
  const receipt = {
    table: entry.table, seq: entry.seq, entry_hash: entry.entry_hash, key_id: checkpoint.key_id,
    leaf_hash: inclusion.leaf_hash, checkpoint: checkpoint.text, tree_size: checkpoint.size, proof: inclusion.proof,
    signature: entry.signature, source: entry.source,
  };
  return { ...entry, words, receipt, fromLog: true };
}

const CLOSED = /revealed|spent|used up|closed/;

/** Roll `body` at the session's next nonce and check the answer; returns it. A refusal
 * never lets the operator choose (docs/audit.md, row 20): a 409 naming another nonce makes
 * the client read the log for its own roll at the nonce it sent (the answer, checked, if
 * it holds this client's client seed and request; else UnfairRollError), or send the same
 * roll again (same nonce, client seed and Idempotency-Key) a few times before saying the
 * server refuses that nonce. A session answered as revealed, spent or gone is never
 * replaced: the client raises and the player starts a new one. */
/** @param {any} call @param {any} s @param {string} path @param {any} body @param {Map<string, any>} keys
 * @param {{idempotencyKey?: string | null, tries?: number}} [options] @returns {Promise<any>} */
export async function rollInSession(call, s, path, body, keys, { idempotencyKey = null, tries = 3 } = {}) {
  if (s.closed) throw new UnfairRollError(`seed session ${s.seedId} is closed: start a new session`);
  const asked = JSON.stringify({ ...body, table: s.table });
  const drawn = body.sealed && !body.sealed.blind;
  let refused = 0;
  for (;;) {
    if (!s.pending && s.nonce > s.firstNonce + s.length - 1) await nextChain(call, s, keys);
    const nonce = s.pending?.nonce ?? s.nonce;
    if (drawn) {
      // A sealed roll's blind is this client's, drawn once per nonce of its chain, not
      // once per roll: the server sees the blind before it answers, so a blind drawn
      // afresh after a refusal (any status, or a roll asked again another way) would let
      // it turn down dice it dislikes and take other ones at the same nonce. Kept, the
      // dice at a nonce are fixed as a plain roll's are: a refusal can only refuse again.
      if (s.blind?.nonce !== nonce || s.blind.clientSeed !== s.clientSeed) {
        s.blind = { nonce, clientSeed: s.clientSeed, blind: freshBlind() };
      }
      body = { ...body, sealed: { ...body.sealed, blind: s.blind.blind } };
    }
    const key = idempotencyKey ?? (s.pending?.asked === asked ? s.pending.idempotencyKey : globalThis.crypto.randomUUID());
    s.pending = { nonce, idempotencyKey: key, asked };
    const session = { seed_id: s.seedId, client_seed: s.clientSeed, nonce };
    // The session's token binds the session to this player: a stranger who read its
    // seed_id in the log cannot roll in it once the server has seen the token.
    const headers = { "Idempotency-Key": key, ...(s.token ? { "Fairroll-Session-Token": s.token } : {}) };
    const [status, answer] = await call("POST", path, { ...body, table: s.table, session }, headers);
    let made = null;
    if (status === 200) {
      const [got, entry] = await call("GET", `/v1/tables/${encodeURIComponent(s.table)}/entries/${answer?.receipt?.seq}`);
      await checkAnswer(answer, got === 200 ? entry : null, s, nonce, keys, body, call, path);
      made = answer;
    } else if (status === 409 && Number.isInteger(answer?.nonce) && answer.nonce !== nonce) {
      const { entry, words } = (await entryAtNonce(call, s, nonce)) ?? {};
      if (entry) {
        if (entry.session.client_seed !== s.clientSeed || !loggedAsSent(entry, body)) {
          throw new UnfairRollError(notSent(nonce, s, entry, body), entry);
        }
        made = await answerOf(call, s, entry, words, body);
        await checkAnswer(made, entry, s, nonce, keys, body, call, path);
      } else if ((refused += 1) >= tries) {
        throw new UnfairRollError(
          `the server refuses nonce ${nonce} of this session (it named nonce ${answer.nonce}, and no roll holds nonce ${nonce}): a refusal it cannot turn into other dice`,
          answer,
        );
      } else {
        continue;  // the same nonce, client seed and Idempotency-Key again
      }
    } else if (status === 404 || (status === 409 && CLOSED.test(answer?.detail ?? ""))) {
      // A server may roll at the nonce, look, then say the session is gone: the roll the
      // log holds there is this player's, whatever it answers.
      const { entry, words } = (await entryAtNonce(call, s, nonce).catch(() => null)) ?? {};
      if (entry) {
        if (entry.session.client_seed !== s.clientSeed || !loggedAsSent(entry, body)) {
          throw new UnfairRollError(notSent(nonce, s, entry, body), entry);
        }
        made = await answerOf(call, s, entry, words, body);
        await checkAnswer(made, entry, s, nonce, keys, body, call, path);
      }
    }
    if (made === null && (status === 404 || (status === 409 && CLOSED.test(answer?.detail ?? "")))) {
      s.pending = undefined;
      s.closed = true;
      throw new UnfairRollError(
        `seed session ${s.seedId} is ${status === 404 ? "gone" : "closed"} (${answer?.detail ?? `HTTP ${status}`}): start a new session; no roll was made in another one`,
        answer,
      );
    }
    if (made === null) {
      if (status < 500) s.pending = undefined;  // refused for what it asked: no nonce taken
      throw Object.assign(new Error(`HTTP ${status}: ${answer?.detail ?? ""}`), { status, problem: answer });
    }
    s.nonce = nonce + 1;
    s.after = Math.max(s.after ?? 0, made.receipt.seq);
    s.pending = undefined;
    // What was checked, in words a caller shows: verified only under a pinned root.
    made.verdict = trusting(keys)
      ? { verified: true, fair: true, reason: null }
      : { verified: false, fair: false, reason: NOT_VERIFIED };
    // docs/audit.md, row 22: the checked part is the log's entry (its dice re-derived, its
    // outcome as the log holds it); the words are the server's text about it, in no entry
    // and checked by nobody here, so they are handed back apart and named so.
    made.checked = { seq: made.receipt.seq, mechanic: made.mechanic, dice: made.dice, outcome: made.outcome };
    // A sealed roll: its opening (checked against the log's commitment) is what the
    // roller keeps, or whispers to the GM, to reveal it later.
    if (body.sealed) {
      made.checked.mechanic = made.opening.mechanic;
      made.checked.sealed = { seq: made.receipt.seq, audience: body.sealed.audience, opening: made.opening };
    }
    made.serverWords = made.words ?? null;
    return made;
  }
}

/** A used-up chain: its next one was committed by the roll that used its last link. The
 * client checks that commitment in the log, then draws a new client seed for it. */
async function nextChain(call, s, keys) {
  await retiredSince(call, keys);
  const [status, seen] = await call("GET", `/v1/tables/${encodeURIComponent(s.table)}/seeds/${s.seedId}?receipt=true`);
  if (status !== 200 || seen.revealed || seen.first_nonce !== s.nonce) {
    s.closed = true;
    throw new UnfairRollError(`seed session ${s.seedId} has no next chain from nonce ${s.nonce}: start a new session`, seen);
  }
  await checkCommitted(call, seen, keys, s.table, s);
  Object.assign(s, { anchor: seen.commitment, firstNonce: s.nonce, length: seen.length, clientSeed: freshClientSeed() });
  s.after = Math.max(s.after ?? 0, seen.chain_seq ?? seen.commit_seq);
}

/** The server's keys read again (GET /v1/keys) at each chain, and when an answer names a
 * key this client has not read: a trusted key the listing now marks retired is marked so
 * in `keys` (docs/audit.md, row 5: it signs nothing after its retirement), so a key
 * retired while a session runs, its operator signing on with it, is refused from the next
 * chain on; a key the pinned root certified since (`certifiedBy` of the keys trusted
 * already: trustedKeys) is added, so the key that took over after a rotation signs the
 * answers and notes from then on. The listing adds no trust of its own (a key the root
 * did not certify stays out) and takes no retirement back. */
async function retiredSince(call, keys) {
  if (!trusting(keys)) return;
  const [status, served] = await call("GET", "/v1/keys");
  if (status !== 200) throw new Error(`the server's keys were not served (HTTP ${status})`);
  for (const key of served?.keys ?? []) {
    const known = keys.get(key?.key_id);
    if (known && key.not_after && !known.notAfter) known.notAfter = key.not_after;
  }
  const root = [...keys.values()].find((key) => key?.certifiedBy)?.certifiedBy;
  if (!root) return;
  for (const [keyId, key] of await trustedKeys(served, root)) if (!keys.has(keyId)) keys.set(keyId, key);
}

/** Open a hash-chain seed session on `table` and check its commitment in the log; the
 * client seed is drawn once the anchor is seen committed. */
/** @param {any} call @param {string} table @param {Map<string, any>} keys
 * @param {{player?: string | null, length?: number | null, headers?: Record<string, string>}} [options] */
export async function openSession(call, table, keys, { player = null, length = null, headers = {} } = {}) {
  const asked = {};
  if (player) asked.player = player;
  if (length) asked.length = length;
  const [status, made] = await call("POST", `/v1/tables/${encodeURIComponent(table)}/seeds`, asked, headers);
  if (status !== 201) throw new UnfairRollError(`the seed session was not opened (HTTP ${status})`, made);
  const s = { table, checkpoint: null };
  await checkCommitted(call, made, keys, table, s);
  return Object.assign(s, {
    seedId: made.seed_id, clientSeed: freshClientSeed(), nonce: 1, anchor: made.commitment,
    length: made.length, firstNonce: 1, after: made.commit_seq,
    // The player's credential (shown once): sent with each roll in the session, and for
    // posting cosignatures with it.
    token: made.token ?? null,
  });
}
