// The verify page (GET /verify, and its offline copy, GET /verify/offline.html): anyone
// pastes a roll's answer, its receipt, an entry, or drops a table's export, gives the
// root key id the table's operator published out of band, and reads what holds, in
// words. Every check is the table page's own JavaScript core (verify.js), imported, not
// copied: the key certified by the root, the receipt's signed checkpoint and inclusion
// proof, the entry's hash, signature and dice, the answer held to its entry, and a whole
// export run as `fairroll verify --root` runs it.

import { canonicalJson, parseStrict, PROVES, trustedKeys, verifyEntry, verifyLog, verifyReceipt } from "./verify.js";

const $ = (id) => document.getElementById(id);

/** What the pasted text is: an export (several lines), or one JSON document. */
export function readEvidence(text) {
  const lines = text.split("\n").filter((line) => line.trim());
  if (lines.length > 1 && lines.every((line) => line.trim().startsWith("{"))) {
    return { kind: "export", text };
  }
  const value = JSON.parse(text);
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new Error("this is not a receipt, an answer, an entry or an export");
  }
  if (value.receipt && typeof value.receipt === "object" && "outcome" in value) return { kind: "answer", receipt: value.receipt, roll: value };
  if (typeof value.checkpoint === "string" && "leaf_hash" in value && !("mechanic" in value)) return { kind: "receipt", receipt: value };
  if (typeof value.entry_hash === "string" && "signature" in value && "mechanic" in value) return { kind: "entry", entry: value };
  throw new Error("this is not a receipt, an answer, an entry or an export");
}

async function served(server, path) {
  if (!server) throw new Error("no server given: the entry and the keys are read from it (an export checks alone)");
  let response;
  try {
    response = await fetch(`${server.replace(/\/+$/, "")}${path}`);
  } catch (error) {
    throw new Error(`the server ${server} could not be reached (${error.message})`);
  }
  if (!response.ok) throw new Error(`the server answered ${response.status} for ${path}`);
  return parseStrict(await response.text());
}

async function keysOf(server, root, said) {
  const keys = await trustedKeys(await served(server, "/v1/keys"), root);
  if (keys.size === 0) throw new Error(`no signing key of the server is certified by the root key ${root}`);
  said.push(`The server's signing keys ${[...keys.keys()].join(", ")} are certified by the root key ${root} you gave.`);
  return keys;
}

/** Check the evidence: {ok, said: [what holds, in words], problem}. */
export async function check(evidence, root, server) {
  const said = [];
  try {
    if (!/^ed25519:[0-9a-f]{16}$/.test(root)) throw new Error("the root key id is ed25519: and 16 hex digits, as the table's operator published it");
    if (evidence.kind === "export") {
      const verdict = await verifyLog(evidence.text, new Map(), { root });
      if (!verdict.ok) throw new Error(`entry ${verdict.first_bad_seq ?? "?"}: ${verdict.reason}`);
      said.push(`All ${verdict.entries} entries of the export hold, up to seq ${verdict.last_seq}: each hash, each link to the one before, each signature under a key the log published under your root, and every die from its seed.`);
      // Row 28: a sealed roll never revealed verifies; it is listed.
      if (verdict.sealed_revealed) said.push(`${verdict.sealed_revealed} sealed roll(s) were revealed: each opening opens its commitment, and its dice derive with its blind.`);
      if (verdict.sealed_unrevealed.length) said.push(`Sealed roll(s) never revealed: seq ${verdict.sealed_unrevealed.join(", ")}. They verify, but their dice are unknown until someone who holds an opening reveals it.`);
      if (verdict.not_fair.length) said.push(`${verdict.not_fair.length} roll(s) are not fair rolls (their seed was chosen or their dice supplied): reproducible, but not proof of fairness.`);
      return { ok: true, said };
    }
    const keys = await keysOf(server, root, said);
    let entry = evidence.entry;
    const receipt = evidence.receipt;
    if (receipt) {
      entry = await served(server, `/v1/tables/${encodeURIComponent(receipt.table)}/entries/${Number(receipt.seq)}`);
      const { size } = await verifyReceipt(entry, receipt, keys);
      said.push(`The receipt's checkpoint of table ${receipt.table} (a tree of ${size} entries) is signed by that key, and its inclusion proof puts entry ${receipt.seq} in it: the log cannot drop or change it unseen.`);
    }
    const checked = await verifyEntry(entry, keys);
    if (!checked.ok) throw new Error(`entry ${entry.seq}: ${checked.problems.join("; ")}`);
    said.push(`Entry ${entry.seq}'s hash and signature hold; its dice: ${checked.checks.dice}.`);
    if (evidence.roll) {
      const roll = evidence.roll;
      const dice = (list) => (list ?? []).map((d) => ({ group: d.group, sides: d.sides, face: d.face }));
      for (const [field, logged, answered] of [
        ["mechanic", entry.mechanic, roll.mechanic],
        ["source", entry.source, roll.source],
        ["dice", dice(entry.dice), dice(roll.dice)],
        ["outcome", entry.outcome, roll.outcome],
      ]) {
        if (canonicalJson(logged ?? null) !== canonicalJson(answered ?? null)) throw new Error(`the answer's ${field} is not its entry's`);
      }
      said.push("The answer's mechanic, dice and outcome are the entry's.");
    }
    if (evidence.kind === "entry") said.push("Its place in the table's log is not checked here: paste its receipt for that.");
    const proves = PROVES[entry.source];
    if (proves) said.push(`What its source (${entry.source}) proves: ${proves}`);
    return { ok: true, said };
  } catch (error) {
    return { ok: false, said, problem: error instanceof Error ? error.message : String(error) };
  }
}

function show({ ok, said, problem }) {
  const verdict = $("verdict");
  verdict.className = ok ? "mark ok" : "mark bad";
  verdict.textContent = ok ? "✓ Verified: everything below holds." : `✗ Not verified: ${problem}`;
  const list = $("holds");
  list.replaceChildren(...said.map((line) => Object.assign(document.createElement("li"), { textContent: line })));
}

async function submit(event) {
  event.preventDefault();
  $("verdict").className = "";
  $("verdict").textContent = "Checking…";
  let evidence;
  try {
    evidence = readEvidence($("evidence").value.trim());
  } catch (error) {
    show({ ok: false, said: [], problem: error.message });
    return;
  }
  show(await check(evidence, $("root").value.trim(), $("server").value.trim()));
}

async function dropped(file) {
  $("evidence").value = await file.text();
}

function start() {
  const main = document.querySelector("main");
  const server = main.dataset.server || (location.protocol.startsWith("http") ? location.origin : "");
  if (!$("server").value) $("server").value = server;
  const params = new URLSearchParams(location.search);
  if (params.get("root")) $("root").value = params.get("root");
  $("verify-form").addEventListener("submit", (event) => void submit(event));
  $("file").addEventListener("change", () => $("file").files[0] && void dropped($("file").files[0]));
  const area = $("evidence");
  area.addEventListener("dragover", (event) => event.preventDefault());
  area.addEventListener("drop", (event) => {
    event.preventDefault();
    const file = event.dataTransfer?.files?.[0];
    if (file) void dropped(file);
  });
  document.body.dataset.ready = "true";
}

if (typeof document !== "undefined") start();
