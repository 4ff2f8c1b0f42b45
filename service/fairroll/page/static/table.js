// The table page: a table's rolls, newest first, live; every entry verified here, in the
// browser, with WebCrypto (verify.js) — never on the server's word.
import { LogVerifier, cosignNote, cosignerVkey, importKeys, verifyCheckpoint, verifyConsistency, verifyCosignature } from "./verify.js";
import { startRollPanel } from "./roll.js";
import { describe, dieInWords } from "./words.js";

const PIPS = ["⚀", "⚁", "⚂", "⚃", "⚄", "⚅"];
const main = document.querySelector("main[data-table]");
const table = main.dataset.table;
const list = document.getElementById("entries");
const status = document.getElementById("status");
const trust = document.getElementById("trust");
let after = 0;
let keys = null;
let log = null;
const marks = new Map();  // seq -> the entry's mark element, redrawn when a reveal checks it

function element(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  for (const child of children) node.append(child);
  return node;
}

function dieElement(die) {
  const words = dieInWords(die);
  const face = die.sides === 2 ? (die.face === 2 ? "H" : "T") : die.sides === 6 ? PIPS[die.face - 1] : String(die.face);
  const kind = die.sides === 2 ? "coin" : `d${die.sides}`;
  return element("span", { class: `die ${kind}`, role: "img", "aria-label": `${die.group}: ${words}`, title: `${die.group}: ${words}` }, face);
}

function markElement(result) {
  const dice = result.checks.dice;
  const how = dice === "re-derived" ? ", dice re-derived from the seed"
    : dice === "re-derived after the reveal" ? ", dice re-derived from the revealed seed"
    : dice.startsWith("committed") ? "; dice checkable once the session is revealed" : "";
  const proves = result.proves ? ` — ${result.proves}` : "";
  return result.ok
    ? element("p", { class: "mark ok" }, `✓ verified: hash, link, signature${how}${proves}`)
    : element("p", { class: "mark bad", role: "alert" }, `✗ ${result.problems.join("; ")}`);
}

function entryElement(entry, result, words) {
  const statement = entry.source === "statement";
  const [asked, came] = statement ? [describe(words)[1], ""] : describe(words);
  const mark = markElement(result);
  marks.set(entry.seq, mark);
  const dice = element("p", { class: "dice" });
  let group = null;
  for (const die of entry.dice) {
    if (die.group !== group) {  // a visible label where each group of dice starts
      group = die.group;
      dice.append(element("span", { class: "group", "aria-hidden": "true" }, `${group}:`), " ");
    }
    dice.append(dieElement(die), " ");
  }
  return element(
    "li",
    { "data-seq": String(entry.seq), class: result.ok ? "entry" : "entry tampered" },
    element("h3", {}, `#${entry.seq} · ${entry.mechanic}`, element("small", {}, ` ${entry.time} · ${entry.source}`)),
    element("p", { class: "asked" }, asked),
    dice,
    element("p", { class: "outcome" }, came),
    mark,
  );
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
    const { size, root } = await verifyCheckpoint(checkpoint, keys);
    const kept = JSON.parse(localStorage.getItem(storeKey) ?? "null");
    if (kept && kept.size > 0 && kept.size <= size) {
      let proof = [];
      if (kept.size < size) {
        const answer = await (await fetch(`${base}/proofs/consistency?from=${kept.size}&to=${size}`)).json();
        proof = answer.proof.map(b64);
      }
      await verifyConsistency(kept.size, size, b64(kept.root_hash), root, proof);
    } else if (kept && kept.size > size) {
      throw new Error(`the log has ${size} entries, but this browser saw ${kept.size}`);
    }
    if (log && log.seq === size) {
      const mine = await log.root();
      if (mine && btoa(String.fromCharCode(...mine)) !== checkpoint.root_hash) {
        throw new Error("the entries shown are not the ones the checkpoint signs");
      }
    }
    if (rootMismatch) throw new Error(rootMismatch);
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

async function compareViews(base, checkpoint) {
  const me = await playerKey();
  const vkey = await cosignerVkey(me.name, me.raw);
  const note = checkpoint.text.split("\n\n")[0] + "\n\n" + checkpoint.text.split("\n\n")[1].split("\n")[0] + "\n";
  const line = await cosignNote(note, me.name, me.privateKey, me.raw, Math.floor(Date.now() / 1000));
  const posted = await fetch(`${base}/cosignatures`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ vkey, note: `${note}${line}\n` }),
  });
  if (posted.status === 409) throw new Error(`split view: ${(await posted.json()).detail}`);
  const { cosignatures } = await (await fetch(`${base}/cosignatures`)).json();
  const others = [];
  for (const cosigned of cosignatures) {
    if (cosigned.vkey === vkey) continue;
    try {
      await verifyCosignature(cosigned.note, cosigned.vkey);
    } catch {
      continue;  // a cosignature that does not verify says nothing
    }
    if (cosigned.size === checkpoint.size && cosigned.root_hash !== checkpoint.root_hash) {
      throw new Error(`split view: ${cosigned.name} cosigned another tree of ${cosigned.size} entries:\n${cosigned.note}\nthis browser's:\n${checkpoint.text}`);
    }
    if (cosigned.size === checkpoint.size) others.push(cosigned.name);
  }
  return others.length
    ? `; cosigned by you and ${others.length} other player(s): ${others.join(", ")}`
    : "; cosigned by you; no other player has cosigned this checkpoint yet, so your view is unconfirmed";
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
        log = new LogVerifier(keys, { previousHash: base.head_hash, previousSeq: base.size, frontier: base.frontier, root });
      }
      if (page.entries.some((entry) => !keys.has(entry.key_id))) {
        keys = await readKeys();  // the server rotated its key while the page was open
        log.keys = keys;
      }
      const { results, revised } = await log.add(page.entries);
      page.entries.forEach((entry, i) => list.prepend(entryElement(entry, results[i], page.words[i])));
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
startRollPanel({ table, onRolled: () => announce() }).catch((error) => {
  document.getElementById("odds-note").textContent = `Cannot build the roll form: ${error.message}`;
});
let root = null;
let rootMismatch = null;
async function readKeys() {
  const served = await (await fetch("/v1/keys")).json();
  // The root is pinned in this browser the first time it is seen (trust on first use):
  // a server that later names another root is not believed.
  const pinned = localStorage.getItem("fairroll:root");
  if (pinned && pinned !== served.root) {
    rootMismatch = `the server names root key ${served.root}, not ${pinned} that this browser pinned`;
  } else if (!pinned) {
    localStorage.setItem("fairroll:root", served.root);
  }
  root = pinned ?? served.root;
  return importKeys(served);
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

keys = await readKeys();
for (let round = 0; ; round++) {  // one read at a time: a slow answer never overlaps the next
  await poll();
  if (round === 0) follow();
  if (round % 20 === 0) await checkHistory();
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
