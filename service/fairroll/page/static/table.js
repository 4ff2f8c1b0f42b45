// The table page: a table's rolls, newest first, live; every entry verified here, in the
// browser, with WebCrypto (verify.js) — never on the server's word.
import {
  LogVerifier, NOT_VERIFIED, cosignNote, revealSealed, cosignerVkey, importKeys, trustedKeys, verifyCheckpoint, verifyConsistency,
  verifyCosignature,
} from "./verify.js";
import { startRollPanel } from "./roll.js";
import { describe, dieInWords, sealedInWords } from "./words.js";
import { drawCharts } from "./odds.js";
import { fitInWords, goodnessOfFit } from "./stats.js";
import { startTilesCheck } from "./mirror.js";

const PIPS = ["⚀", "⚁", "⚂", "⚃", "⚄", "⚅"];
const main = document.querySelector("main[data-table]");
const table = main.dataset.table;
const list = document.getElementById("entries");
const status = document.getElementById("status");
const trust = document.getElementById("trust");
let after = 0;
let keys = null;  // the keys served, for version 1 entries and a log read from its middle
let trusted = new Map();  // the signing keys the pinned root certifies: nothing else is trusted
let log = null;

// The pinned root: from the table's URL (?root=<key id>, as the operator published it out
// of band) or the one this player pinned before, kept in this browser. Never the one the
// server names: with none, the page says NOT VERIFIED and draws no ✓.
const asked = new URLSearchParams(location.search);
let root = asked.get("root") || localStorage.getItem("fairroll:root") || null;
if (asked.get("root")) localStorage.setItem("fairroll:root", root);
// Cosigners this player trusts: verifier keys it pinned (?cosigner=<vkey>, repeatable, as a
// friend shares it over a channel the operator does not run), kept in this browser.
const pinnedCosigners = new Set(JSON.parse(localStorage.getItem("fairroll:cosigners") ?? "[]"));
for (const vkey of asked.getAll("cosigner")) pinnedCosigners.add(vkey);
localStorage.setItem("fairroll:cosigners", JSON.stringify([...pinnedCosigners]));
const marks = new Map();  // seq -> the entry's mark element, redrawn when a reveal checks it
const players = new Map();  // seed_id -> the player its session.commit names (sealed lines)

function element(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  for (const child of children) node.append(child);
  return node;
}

function dieElement(die, label, flags = {}) {
  const words = dieInWords(die);
  const face = die.sides === 2 ? (die.face === 2 ? "H" : "T") : die.sides === 6 ? PIPS[die.face - 1] : String(die.face);
  const kind = die.sides === 2 ? "coin" : `d${die.sides}`;
  const marks = [flags.dropped && "dropped", flags.rerolled && "rerolled"].filter(Boolean);
  const said = `${label}: ${words}${marks.length ? ` (${marks.join(", ")}: does not count)` : ""}`;
  const classes = ["die", kind, ...marks].join(" ");
  return element("span", { class: classes, role: "img", "aria-label": said, title: said }, face);
}

// Whom a group of dice belongs to, in the request's own names: "a" is Roth, "p2.risk"
// is Sue's risk; a group the request names no one for keeps its name.
function groupLabel(group, request) {
  const [head, ...rest] = group.split(".");
  const participant = /^p(\d+)$/.exec(head);
  const named = participant ? request?.participants?.[Number(participant[1]) - 1]?.name : request?.[head]?.name;
  const who = named ?? (/^[ab]$/.test(head) ? head.toUpperCase() : head);
  return [who, ...rest].join(" ");
}

// The dice of an entry in rows a player reads: by default one row, each group labelled
// by whom it belongs to; a formula's dice by term, with the dropped and rerolled ones
// marked; a battle's by turn and fighter. Rows are built from the outcome only where
// its dice are the entry's own, face for face; otherwise the default rows.
const PRESENTERS = {
  "dice.roll": formulaRows,
  "fast-battle.battle": battleRows,
};

function rowsOf(entry) {
  const rows = PRESENTERS[entry.mechanic]?.(entry);
  return rows ?? [{ label: null, grouped: true, dice: entry.dice.map((die) => ({ die })) }];
}

function termDice(terms, into = []) {
  for (const term of terms ?? []) {
    if (Array.isArray(term.dice)) into.push({ term, dice: term.dice });
    if (term.terms) termDice(term.terms, into);
  }
  return into;
}

function formulaRows(entry) {
  const terms = termDice(entry.outcome?.terms);
  const rows = [];
  let at = 0;
  for (const { term, dice } of terms) {
    const row = { label: term.text, grouped: false, dice: [] };  // the term says the die
    for (const rolled of dice) {
      const die = entry.dice[at++];
      if (!die || rolled.value !== die.face - (term.fate ? 2 : 0)) return null;
      row.dice.push({ die, flags: { dropped: rolled.dropped, rerolled: rolled.rerolled } });
    }
    rows.push(row);
  }
  return at === entry.dice.length ? rows : null;
}

function battleRows(entry) {
  const outcome = entry.outcome;
  const rows = [];
  let at = 0;
  const take = (label, faces) => {
    const dice = entry.dice.slice(at, at + faces.length);
    if (dice.length !== faces.length || dice.some((die, i) => die.face !== faces[i])) return false;
    at += faces.length;
    rows.push({ label, grouped: true, dice: dice.map((die) => ({ die })) });
    return true;
  };
  const ties = outcome?.initiative?.tie_flips ?? [];
  if (ties.length && !take("Initiative", ties)) return null;
  for (const turn of outcome?.turns ?? []) {
    const verb = { attack: "attacks", spell: `casts ${turn.spell?.spell ?? "a spell"} at`, potion: "drinks", pass: "waits" }[turn.action] ?? turn.action;
    const label = `Turn ${turn.number}: ${turn.actor} ${verb}${turn.target && turn.action !== "potion" ? ` ${turn.target}` : turn.potion ? ` ${turn.potion}` : ""}`;
    const faces = turn.attack ? [...turn.attack.attack_flips, ...turn.attack.armor_flips]
      : turn.spell ? [...turn.spell.spell_flips, ...turn.spell.resist_flips] : [];
    if (!take(label, faces)) return null;
  }
  return at === entry.dice.length ? rows : null;
}

function diceElement(entry) {
  const rows = rowsOf(entry);
  const drawn = rows.map((row) => {
    const line = element("p", { class: "dice" });
    if (row.label) line.append(element("span", { class: "row-label" }, row.label), " ");
    let group = null;
    for (const { die, flags } of row.dice) {
      const label = groupLabel(die.group, entry.request);
      if (row.grouped && die.group !== group) {
        group = die.group;  // a visible label where each group of dice starts
        line.append(element("span", { class: "group", "aria-hidden": "true" }, `${label}:`), " ");
      }
      line.append(dieElement(die, label, flags), " ");
    }
    return line;
  });
  if (drawn.length <= 6) return drawn;
  // A long battle: its turns folded, the first line saying how many.
  return [element("details", { class: "turns" }, element("summary", {}, `${rows.length} rows of dice, turn by turn`), ...drawn)];
}

// What each source of dice proves, in a player's words; the page's "sources" section
// says more (each line links to it).
const SOURCES = {
  committed: ["fair", "✓ fair: rolled in a seed session the server committed to before the roll"],
  drawn: ["trusting", "◐ fair if the operator is honest: the server drew the seed"],
  chosen: ["unfair", "⚠ not fair: the caller chose the seed"],
  seeded: ["unfair", "⚠ not fair: the caller gave the seed"],
  supplied: ["elsewhere", "⚀ rolled elsewhere: fairroll judged dice it did not roll"],
};

// The page's explanation of each source is headed by the same words as its line.
for (const [source, [, words]] of Object.entries(SOURCES)) {
  document.getElementById(`source-${source}`)?.replaceChildren(words);
}

function fairnessElement(source, result) {
  const known = SOURCES[source];
  if (!known) return "";
  let [kind, words] = known;
  if (result?.notFair) [kind, words] = ["unfair", `⚠ not fair: ${result.notFair}`];
  else if (!root && source === "committed") [kind, words] = ["trusting", "NOT VERIFIED: rolled in a seed session, but no root is pinned"];
  return element("p", { class: `fairness ${kind}` }, `${words} `, element("a", { href: `#source-${source}` }, "what this means"));
}

function markElement(result) {
  const dice = result.checks.dice;
  const how = dice === "re-derived" ? ", dice re-derived from the seed"
    : dice === "re-derived after the reveal" ? ", dice re-derived from the revealed seed"
    : dice === "re-derived from the revealed link" ? ", dice re-derived from the chain's revealed link"
    : dice.startsWith("committed") ? "; dice checkable once the session is revealed"
    : dice.startsWith("sealed") ? ", the chain's link; its dice are checked when it is revealed"
    : dice.startsWith("reveal of sealed roll") && !dice.endsWith("not checked")
      ? "; the opening matched: it opens the sealed roll's commitment, dice re-derived with the roller's blind"
    : "";
  if (result.ok && !root) return element("p", { class: "mark unverified" }, `NOT VERIFIED (no root pinned): hash and link hold${how}`);
  return result.ok
    ? element("p", { class: "mark ok" }, `✓ verified: hash, link, signature${how}`)
    : element("p", { class: "mark bad", role: "alert" }, `✗ ${result.problems.join("; ")}`);
}

let titles = new Map();  // mechanic -> its name in words, from GET /v1/systems
async function readTitles() {
  const listed = await (await fetch("/v1/systems")).json();
  titles = new Map(listed.systems.flatMap((system) => system.mechanics.map((m) => [m.name, `${system.title} · ${m.name.split(".").slice(1).join(" ").replaceAll("-", " ")}`])));
}
const STATEMENTS = { session: "Seed session", audit: "The log", key: "Signing key", table: "The table", sealed: "Sealed roll" };
function titleOf(mechanic) {
  const [head, ...rest] = mechanic.split(".");
  return titles.get(mechanic) ?? `${STATEMENTS[head] ?? head} · ${rest.join(" ").replaceAll("-", " ")}`;
}

/** The entry's time in the reader's own time zone: the time alone today, else the date. */
function timeElement(iso) {
  const at = new Date(iso);
  const today = at.toDateString() === new Date().toDateString();
  const shown = today
    ? at.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit" })
    : at.toLocaleString([], { dateStyle: "medium", timeStyle: "short" });
  return element("time", { datetime: iso, title: iso }, shown);
}

const SEALED_ROLL = "sealed.roll";
const SEALED_REVEAL = "sealed.reveal";

/** [the request in words, the outcome in words] of an entry. A sealed roll shows a sealed
 * line, whoever rolled it and whom it is for, never its dice (the log holds none); a
 * reveal shows the roll it opens, in the server's words when it has them. */
function wordsOf(entry, words) {
  if (entry.mechanic === SEALED_ROLL) {
    const player = players.get(entry.session?.seed_id);
    return [sealedInWords(entry.seq, player, entry.request?.audience), "its dice and outcome stay sealed until it is revealed"];
  }
  if (entry.mechanic === SEALED_REVEAL) {
    const opening = entry.request?.opening;
    let came = "";
    try {
      came = describe(words)[1];
    } catch {
      came = "";  // no words from the server: the dice speak
    }
    return [`sealed roll #${entry.request?.seq} revealed: ${titleOf(String(opening?.mechanic ?? "?"))}`, came];
  }
  return entry.source === "statement" ? [describe(words)[1], ""] : describe(words);
}

/** The dice a reveal opens, drawn as the sealed roll's own would be. */
function revealedDice(entry) {
  const opening = entry.request?.opening;
  if (!opening || !Array.isArray(opening.dice)) return [];
  return diceElement({ mechanic: opening.mechanic, request: opening.request, outcome: opening.outcome, dice: opening.dice });
}

function entryElement(entry, result, words) {
  const statement = entry.source === "statement";
  if (entry.mechanic === "session.commit" && typeof entry.request?.player === "string") players.set(entry.request.seed_id, entry.request.player);
  const [asked, came] = wordsOf(entry, words);
  const mark = markElement(result);
  marks.set(entry.seq, mark);
  const heading = element("h3", {}, `#${entry.seq} · ${titleOf(entry.mechanic)} `, element("small", {}, timeElement(entry.time)));
  heading.title = entry.mechanic;
  const sealed = entry.mechanic === SEALED_ROLL ? " sealed" : entry.mechanic === SEALED_REVEAL ? " revealing" : "";
  return element(
    "li",
    { id: `entry-${entry.seq}`, "data-seq": String(entry.seq), "data-mechanic": entry.mechanic, class: (result.ok ? "entry" : "entry tampered") + sealed },
    heading,
    element("p", { class: "asked" }, asked),
    ...(entry.mechanic === SEALED_REVEAL ? revealedDice(entry) : diceElement(entry)),
    element("p", { class: "outcome" }, came),
    mark,
    statement ? "" : fairnessElement(entry.source, result),
    entry.mechanic === SEALED_ROLL && result.ok ? revealElement(entry.seq) : "",
  );
}

// The openings of the sealed rolls this browser made on this table (roll.js keeps them):
// their lines offer to reveal them, whenever the player likes.
const openingsKey = `fairroll:sealed:${table}`;
const keptOpenings = () => JSON.parse(localStorage.getItem(openingsKey) ?? "{}");
function forgetOpening(seq) {
  const kept = keptOpenings();
  delete kept[seq];
  localStorage.setItem(openingsKey, JSON.stringify(kept));
}

async function call(method, path, body) {
  const response = await fetch(path, {
    method,
    headers: body === undefined ? {} : { "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return [response.status, text ? JSON.parse(text) : null];
}

/** "Reveal" on a sealed line whose opening this browser holds: checked against the entry
 * first (verify.js revealSealed), then published as a sealed.reveal statement. */
function revealElement(seq) {
  const opening = keptOpenings()[seq];
  if (!opening) return "";
  const button = element("button", { type: "button", class: "reveal" }, `Reveal sealed roll #${seq} (this browser holds its opening)`);
  button.addEventListener("click", async () => {
    button.disabled = true;
    try {
      const made = await revealSealed(call, table, seq, opening, root ? trusted : null);
      forgetOpening(seq);
      button.replaceWith(element("p", { class: "revealed-note" }, `Revealed at #${made.receipt.seq}.`));
      announce();
    } catch (error) {
      button.disabled = false;
      button.after(element("p", { class: "mark bad", role: "alert" }, `✗ Not revealed: ${error.message}`));
    }
  });
  return button;
}

/** A sealed roll this browser just made: its line may have come over the live events
 * before roll.js kept the opening, so it is offered the reveal now. */
function offerReveal(seq) {
  const line = document.getElementById(`entry-${seq}`);
  if (!line || line.dataset.mechanic !== SEALED_ROLL || line.classList.contains("tampered")) return;
  if (line.classList.contains("revealed") || line.querySelector("button.reveal")) return;
  const button = revealElement(seq);
  if (button) line.append(button);
}

/** A reveal that matched: the sealed roll's line (if shown) says so and links to it. */
function markRevealed(entry, result) {
  if (entry.mechanic !== SEALED_REVEAL || !result.ok) return;
  if (keptOpenings()[entry.request.seq]) forgetOpening(entry.request.seq);
  const line = document.getElementById(`entry-${entry.request.seq}`);
  if (!line || line.dataset.mechanic !== SEALED_ROLL) return;
  line.querySelector("button.reveal")?.remove();
  line.classList.add("revealed");
  const mark = line.querySelector(".mark.ok");
  if (mark) mark.textContent = mark.textContent.replace("its dice are checked when it is revealed", `its reveal (#${entry.seq}) opened it, dice re-derived with the roller's blind`);
  line.querySelector(".outcome")?.replaceChildren(
    "revealed in ", element("a", { href: `#entry-${entry.seq}` }, `#${entry.seq}`), ": the opening matched its commitment",
  );
  line.querySelector(".outcome")?.after(...revealedDice(entry));
}

// The auditor's picture: every face of fairroll's own dice (derived from a seed) of the
// entries verified here, per die size, with its goodness-of-fit test (stats.js).
const DERIVED = new Set(["drawn", "chosen", "committed", "seeded"]);
const faceCounts = new Map();  // sides -> counts, counts[i] for face i + 1

function countFaces(entry, result) {
  // A sealed roll's dice are fairroll's own once its reveal opened them (and were checked).
  const opened = entry.mechanic === SEALED_REVEAL && result.ok && !result.checks.dice.endsWith("not checked");
  const dice = opened ? entry.request.opening.dice : entry.dice;
  if (!result.ok || !(opened || DERIVED.has(entry.source))) return false;
  for (const die of dice) {
    if (!faceCounts.has(die.sides)) faceCounts.set(die.sides, new Array(die.sides).fill(0));
    faceCounts.get(die.sides)[die.face - 1] += 1;
  }
  return dice.length > 0;
}

function drawFaces() {
  const sizes = [...faceCounts.keys()].sort((a, b) => a - b);
  const panel = document.getElementById("faces");
  drawCharts(panel, sizes.map((sides) => {
    const counts = faceCounts.get(sides);
    const total = counts.reduce((s, c) => s + c, 0);
    // One name for a die everywhere, as `fairroll verify` names it: a coin is a d2.
    return {
      title: `d${sides}: ${total} ${total === 1 ? "die" : "dice"}; ${fitInWords(goodnessOfFit(counts))}`,
      bars: counts.map((count, i) => ({
        label: sides === 2 ? (i === 1 ? "heads" : "tails") : String(i + 1),
        exact: `${count}/${total}`,
        value: count / total,
      })),
    };
  }));
  for (const [i, figure] of [...panel.querySelectorAll("figure")].entries()) figure.dataset.sides = String(sizes[i]);
}

// The newest roll in the header, linked to its entry: on a phone the list starts below
// the form, and a player wants to see at once what came.
function showLatest(entries, words) {
  const i = entries.findLastIndex((entry) => entry.source !== "statement");
  if (i < 0) return;
  const [asked, came] = wordsOf(entries[i], words[i]);
  const latest = document.getElementById("latest");
  latest.replaceChildren("Latest: ", element("a", { href: `#entry-${entries[i].seq}` }, `#${entries[i].seq}`), ` ${asked} → ${came}`);
}

function b64(text) {
  return Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
}

/** The table's signed checkpoint, checked here, and against the one this browser kept:
 * a log rewritten or cut back since the last visit cannot be consistent with it. */
async function checkHistory() {
  const base = `/v1/tables/${encodeURIComponent(table)}`;
  const storeKey = `fairroll:checkpoint:${table}`;
  try {
    const checkpoint = await (await fetch(`${base}/checkpoint`)).json();
    if (!root) throw new Error(NOT_VERIFIED.replace("pass the root key id", "open this page with ?root=<the root key id>,"));
    const { size, root: treeRoot } = await verifyCheckpoint(checkpoint, trusted, { table });
    const kept = JSON.parse(localStorage.getItem(storeKey) ?? "null");
    if (kept && kept.size > 0 && kept.size <= size) {
      let proof = [];
      if (kept.size < size) {
        const answer = await (await fetch(`${base}/proofs/consistency?from=${kept.size}&to=${size}`)).json();
        proof = answer.proof.map(b64);
      }
      await verifyConsistency(kept.size, size, b64(kept.root_hash), treeRoot, proof);
    } else if (kept && kept.size > size) {
      throw new Error(`the log has ${size} entries, but this browser saw ${kept.size}`);
    }
    if (log && log.seq === size) {
      const mine = await log.root();
      if (mine && btoa(String.fromCharCode(...mine)) !== checkpoint.root_hash) {
        throw new Error("the entries shown are not the ones the checkpoint signs");
      }
    }
    localStorage.setItem(storeKey, JSON.stringify({ size, root_hash: checkpoint.root_hash, seen: new Date().toISOString() }));
    const views = size > 0 ? await compareViews(base, checkpoint) : "";
    trust.className = "trust ok";
    trust.textContent = (kept
      ? `✓ signed checkpoint of ${size} entries, consistent with the one this browser kept (${kept.size} entries, ${kept.seen})`
      : `✓ signed checkpoint of ${size} entries checked and kept in this browser`) + views;
  } catch (error) {
    trust.className = "trust bad";
    trust.setAttribute("role", "alert");
    trust.textContent = `✗ history check failed: ${error.message}`;
  }
}

// This browser as a witness: it cosigns (C2SP tlog-cosignature) each checkpoint it has
// verified, with an Ed25519 key of its own (WebCrypto, kept in this browser), posts the
// cosignature to the table, and reads the other players' cosignatures: one of the same
// size over another tree is a split view, shown as an alarm with both signed notes.
async function playerKey() {
  const kept = JSON.parse(localStorage.getItem("fairroll:cosigner") ?? "null");
  if (kept) {
    const privateKey = await crypto.subtle.importKey("jwk", kept.jwk, { name: "Ed25519" }, false, ["sign"]);
    return { privateKey, raw: b64(kept.raw), name: kept.name };
  }
  const pair = await crypto.subtle.generateKey({ name: "Ed25519" }, true, ["sign", "verify"]);
  const raw = new Uint8Array(await crypto.subtle.exportKey("raw", pair.publicKey));
  const name = `player-${Array.from(raw.slice(0, 4), (b) => b.toString(16).padStart(2, "0")).join("")}.fairroll`;
  const jwk = await crypto.subtle.exportKey("jwk", pair.privateKey);
  localStorage.setItem("fairroll:cosigner", JSON.stringify({ jwk, raw: btoa(String.fromCharCode(...raw)), name }));
  return { privateKey: pair.privateKey, raw, name };
}

/** The cosigner name a verifier key names (`<name>+<key ID>+<key>`): the name its
 * cosignature lines carry, whatever name a listing gives beside it. */
function cosignerName(vkey) {
  return vkey.slice(0, vkey.indexOf("+"));
}

/** Post this browser's cosignature of the checkpoint it verified, then read the table's
 * cosignatures. A pinned friend counts as confirming this view only for what the friend
 * signed (the note's body, never the listing's fields, which the server writes): this
 * very tree (the same origin, size, root and head as the note verified here), or a
 * larger tree of this log that a consistency proof shows this one is a prefix of. A
 * cosignature of an older tree, of another table's log, or by a key this player did not
 * pin confirms nothing. */
async function compareViews(base, checkpoint) {
  const me = await playerKey();
  const vkey = await cosignerVkey(me.name, me.raw);
  const body = checkpoint.text.slice(0, checkpoint.text.indexOf("\n\n") + 1);
  const [origin, size, rootHash] = body.split("\n", 3);
  const note = body + "\n" + checkpoint.text.split("\n\n")[1].split("\n")[0] + "\n";
  const line = await cosignNote(note, me.name, me.privateKey, me.raw, Math.floor(Date.now() / 1000));
  // This browser's seed session on the table (roll.js keeps it) is its credential for
  // posting: a keyed table takes cosignatures only with a write key or a player's session.
  const session = JSON.parse(localStorage.getItem(`fairroll:session:${checkpoint.table}`) ?? "null");
  const credential = session?.seedId && session?.token ? { session: { seed_id: session.seedId, token: session.token } } : {};
  const posted = await fetch(`${base}/cosignatures`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ vkey, note: `${note}${line}\n`, ...credential }),
  });
  if (posted.status === 409) {
    const problem = await posted.json();
    // A name another key holds is not a split view: this browser's cosignature is just not kept.
    if (!(problem.invalid_params ?? []).some((p) => p.name === "vkey")) throw new Error(`split view: ${problem.detail}`);
  }
  const { cosignatures } = await (await fetch(`${base}/cosignatures`)).json();
  const others = new Set();
  const unknown = new Set();
  for (const cosigned of cosignatures) {
    if (cosigned.vkey === vkey) continue;
    try {
      await verifyCosignature(cosigned.note, cosigned.vkey);
    } catch {
      continue;  // a cosignature that does not verify says nothing
    }
    const name = cosignerName(cosigned.vkey);
    const theirs = cosigned.note.slice(0, cosigned.note.indexOf("\n\n") + 1);
    const [theirOrigin, theirSize, theirRoot] = theirs.split("\n", 3);
    if (theirOrigin !== origin) continue;  // another log's tree says nothing of this one
    if (theirSize === size && theirRoot !== rootHash) {
      throw new Error(`split view: ${name} cosigned another tree of ${size} entries:\n${cosigned.note}\nthis browser's:\n${checkpoint.text}`);
    }
    // Only a key this player pinned counts: anyone can post cosignatures under any name.
    if (!pinnedCosigners.has(cosigned.vkey)) {
      if (theirs === body) unknown.add(name);
      continue;
    }
    if (theirs === body || (await extends_(base, checkpoint, theirs))) others.add(name);
  }
  const kept = posted.status === 201;
  const strangers = unknown.size ? `; ${unknown.size} unknown cosigner(s), not counted: ${[...unknown].join(", ")}` : "";
  const named = [...others].join(", ");
  const said = kept
    ? others.size ? `; cosigned by you and ${others.size} other player(s): ${named}` : "; cosigned by you"
    : `; your cosignature was not kept (HTTP ${posted.status})${others.size ? `; cosigned by ${others.size} player(s) whose key you pinned: ${named}` : ""}`;
  const alone = others.size ? "" : "; no player whose key you pinned has cosigned this checkpoint yet, so your view is unconfirmed";
  return said + alone + strangers;
}

/** Does the note body `theirs` (a friend's cosigned tree of this log) state a larger tree
 * that the checkpoint verified here is a prefix of? The server proves it (RFC 9162), the
 * proof is checked here; no proof, no confirmation. */
async function extends_(base, checkpoint, theirs) {
  const [, size, rootHash] = theirs.split("\n", 3);
  if (!/^[1-9][0-9]*$/.test(size) || Number(size) <= checkpoint.size) return false;
  try {
    const answer = await fetch(`${base}/proofs/consistency?from=${checkpoint.size}&to=${size}`);
    if (!answer.ok) return false;
    const { proof } = await answer.json();
    await verifyConsistency(checkpoint.size, Number(size), b64(checkpoint.root_hash), b64(rootHash), proof.map(b64));
    return true;
  } catch {
    return false;
  }
}

async function poll() {
  try {
    const response = await fetch(`/v1/tables/${encodeURIComponent(table)}/entries?after=${after}&limit=100`);
    if (!response.ok) throw new Error(`the server answered ${response.status}`);
    const page = await response.json();
    if (page.entries.length) {
      if (log === null) {
        // An archived table starts after its signed base: the first entry chains on it.
        const base = page.entries[0].seq > 1
          ? await (await fetch(`/v1/tables/${encodeURIComponent(table)}/base`)).json()
          : { head_hash: "0".repeat(64), size: 0, frontier: null };
        after = base.size;
        log = new LogVerifier(root ? trusted : keys, { previousHash: base.head_hash, previousSeq: base.size, frontier: base.frontier, root });
      }
      if (page.entries.some((entry) => !keys.has(entry.key_id))) {
        keys = await readKeys();  // the server rotated its key while the page was open
        log.keys = new Map(root ? trusted : keys);
      }
      const { results, revised } = await log.add(page.entries);
      keepRetirements();
      page.entries.forEach((entry, i) => {
        list.prepend(entryElement(entry, results[i], page.words[i]));
        markRevealed(entry, results[i]);
      });
      if (page.entries.map((entry, i) => countFaces(entry, results[i])).some(Boolean)) drawFaces();
      showLatest(page.entries, page.words);
      for (const result of revised) {
        const old = marks.get(result.seq);
        if (old) {
          const mark = markElement(result);
          old.replaceWith(mark);
          marks.set(result.seq, mark);
          old.closest("li").className = result.ok ? "entry" : "entry tampered";
        }
      }
      after = page.entries.at(-1).seq;
    }
    const bad = list.querySelectorAll(".tampered").length;
    status.textContent = `${after} ${after === 1 ? "entry" : "entries"}, live${streaming ? " (events)" : ""}${bad ? ` — ${bad} failed verification` : ""}`;
    if (page.next_after !== null) return poll();
  } catch (error) {
    status.textContent = `Cannot read the table: ${error.message}`;
  }
}

let wake = null;  // a roll made on this page reads the table at once, not at the next tick
startRollPanel({ table, onRolled: (seq) => { offerReveal(seq); announce(); }, trust: async () => ({ root, keys: await keysReady.then(() => trusted) }) }).catch((error) => {
  document.getElementById("odds-note").textContent = `Cannot build the roll form: ${error.message}`;
});
async function readKeys() {
  const served = await (await fetch("/v1/keys")).json();
  trusted = root ? await trustedKeys(served, root) : new Map();
  keepRetirements();
  return importKeys(served);
}

/** The log's own retirements (each key.retire the history check read: `log.ring.retired`)
 * on the trusted keys (`retiredAt`), so the roll panel and the history check hold a
 * retired key to the position the log gives it, not only to the listing's `not_after`:
 * it opens a note below that seq (a receipt of before the rotation) and none past it. */
function keepRetirements() {
  for (const [keyId, seq] of log?.ring.retired ?? []) {
    const key = trusted.get(keyId);
    if (key && (key.retiredAt === undefined || key.retiredAt === null || seq < key.retiredAt)) key.retiredAt = seq;
  }
}

// New entries are announced by the table's live events (Server-Sent Events, from any
// replica): each one wakes the reader below, which reads and verifies them. Polling is the
// fallback: every 1.5 s while the events are down, every 30 s (a safety net) while up.
let streaming = false;
// An announcement that came while the reader was busy (a history check, a slow read) is
// kept, so the reader reads at once instead of waiting for the safety net.
let announced = false;
function announce() {
  announced = true;
  wake?.();
}
function follow() {  // after the first read: the events start where the page is
  if (!("EventSource" in window)) return;
  const events = new EventSource(`/v1/tables/${encodeURIComponent(table)}/events?after=${after}`);
  events.addEventListener("open", () => { streaming = true; announce(); });
  events.addEventListener("entry", announce);
  events.addEventListener("error", () => { streaming = false; });
}

const keysReady = readKeys();
startTilesCheck({ table, trust: async () => ({ root, keys: await keysReady.then(() => trusted) }) });
[keys] = await Promise.all([keysReady, readTitles().catch(() => {})]);
for (let round = 0; ; round++) {  // one read at a time: a slow answer never overlaps the next
  const before = after;
  await poll();
  if (round === 0) follow();
  // The checkpoint line follows the rolls: checked again whenever entries came.
  if (round % 20 === 0 || after !== before) await checkHistory();
  if (announced) {
    announced = false;
    continue;
  }
  await new Promise((resolve) => {
    wake = resolve;
    setTimeout(resolve, streaming ? 30000 : 1500);
  });
  wake = null;
  announced = false;
}
