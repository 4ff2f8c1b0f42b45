// The roll panel: pick a mechanic, fill its form (built from the spec, started from the
// seed's example), see the exact odds of the current input beside it, and roll on this
// page's table. The new entry arrives in the list below like any other, verified.
import { controlFor, loadShelves, mechanicForm, oddsBody, rollOperations } from "./form.js";
import { charts, drawCharts } from "./odds.js";
import { AUDIENCE_WORDS, describe, dieInWords } from "./words.js";
import { openSession, revealSealed, rollInSession, UnfairRollError } from "./verify.js";

// An estimate's odds note: its sample and how far each chance may be off, from the
// intervals the server states (`estimate.intervals`, at `estimate.confidence`).
function estimateNote({ estimate, distributions }) {
  const chance = new Map(
    distributions.flatMap((d) => d.chances.map((c) => [`${d.name}\n${c.outcome}`, c.probability.value])),
  );
  const widest = Math.max(
    ...estimate.intervals.map(({ distribution, outcome, low, high }) => {
      const value = chance.get(`${distribution}\n${outcome}`);
      return Math.max(high - value, value - low);
    }),
  );
  return `Estimated odds of the input as it stands, from ${estimate.battles} seeded battles (each chance within ±${(100 * widest).toFixed(1)} points at ${Math.round(100 * estimate.confidence)} %; the same request gives the same estimate).`;
}

/** `trust()` answers {root, keys}: the pinned root (null: none) and the signing keys it
 * certifies, which every answer's receipt is checked under. */
export async function startRollPanel({ table, onRolled, trust }) {
  const select = document.getElementById("mechanic");
  const form = document.getElementById("roll-form");
  const fields = document.getElementById("fields");
  const seed = document.getElementById("seed");
  const key = document.getElementById("write-key");
  const said = document.getElementById("roll-result");
  const oddsPanel = document.getElementById("odds");
  const oddsNote = document.getElementById("odds-note");
  const button = form.querySelector("button[type=submit]");
  const sealedChoice = sealedControl(form, button);
  // On a phone the odds start folded, so the table's latest rolls are near the top.
  if (matchMedia("(max-width: 56rem)").matches) document.getElementById("odds-details").open = false;

  // The systems and their mechanics as the server declares them (GET /v1/systems).
  const [spec, listed] = await Promise.all([
    fetch("/schema/openapi.json").then((r) => r.json()),
    fetch("/v1/systems").then((r) => r.json()),
  ]);
  const shelves = await loadShelves(spec);
  const operations = rollOperations(spec);
  // Dice formulas first: every table rolls them; then the systems as the server lists them.
  const systems = [...listed.systems].sort((a, b) => (b.slug === "dice") - (a.slug === "dice"));
  for (const system of systems) {
    const group = document.createElement("optgroup");
    group.label = system.title;
    for (const operation of operations.filter((o) => o.system === system.slug)) {
      group.append(new Option(operation.summary, operation.id));
    }
    select.append(group);
  }

  let current = null;
  let oddsTimer = null;
  let oddsRequest = null;

  function choose(id) {
    const first = select.querySelector("option")?.value;
    current = operations.find((o) => o.id === id) ?? operations.find((o) => o.id === first) ?? operations[0];
    select.value = current.id;
    const made = mechanicForm(spec, current, shelves);
    current.read = made.read;
    fields.replaceChildren(...made.nodes);
    said.replaceChildren();
    drawCharts(oddsPanel, []);
    oddsNote.textContent = "Working out the odds…";
    document.getElementById("example-note").textContent = current.exampleName
      ? `Starting values from the rules' worked example “${current.exampleName}”; the dice are rolled fresh.`
      : "";
    updateOdds();
  }

  function body() {
    const value = current.read();
    if (seed.value.trim()) value.seed = seed.value.trim();
    return value;
  }

  // Fair by default: unless a seed is typed, every roll is in this player's own hash-chain
  // seed session (docs/randomness.md), made and checked by verify.js's live checks: the
  // session's anchor is seen committed in the log before the client seed is drawn (a new
  // one for every chain), and every answer is checked before it is drawn (client seed,
  // session, nonce, link, dice, and its receipt under the pinned root, of this table). A
  // refusal never lets the operator choose: a 409 naming another nonce is looked up in the
  // log; a session answered as revealed or gone is never replaced without the player.
  const sessionKey = `fairroll:session:${table}`;

  function authorized(headers) {
    if (key.value) headers.authorization = `Bearer ${key.value}`;
    return headers;
  }

  async function call(method, path, body, headers = {}) {
    const response = await fetch(path, {
      method,
      headers: authorized({ ...headers, ...(body === undefined ? {} : { "content-type": "application/json" }) }),
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    let answer = null;
    try {
      answer = text ? JSON.parse(text) : null;
    } catch {
      answer = { detail: text };
    }
    return [response.status, answer];
  }

  async function playerSession(keys) {
    const kept = JSON.parse(localStorage.getItem(sessionKey) ?? "null");
    if (kept?.seedId && kept?.clientSeed) return kept;
    const made = await openSession(call, table, keys, { player: "this browser" });
    keep(made);
    return made;
  }

  function keep(session) {
    localStorage.setItem(sessionKey, JSON.stringify(session));
  }

  function updateOdds() {
    clearTimeout(oddsTimer);
    oddsRequest?.abort();
    if (!current.odds) {
      drawCharts(oddsPanel, []);
      oddsNote.textContent = "The API has no odds for this mechanic.";
      return;
    }
    oddsTimer = setTimeout(async () => {
      if (!form.checkValidity()) {
        oddsNote.textContent = "Odds appear when every field is valid.";
        return;
      }
      const request = body();
      const asked = oddsBody(current, request);
      oddsRequest = new AbortController();
      oddsNote.textContent = "Working out the odds…";
      try {
        const response = await fetch(current.odds.path, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(asked),
          signal: oddsRequest.signal,
        });
        const answer = await response.json();
        if (!response.ok) {
          drawCharts(oddsPanel, []);
          oddsNote.textContent = `No odds for this input: ${answer.detail}`;
          return;
        }
        drawCharts(oddsPanel, charts(answer));
        oddsNote.textContent = answer.exact
          ? "Exact odds of the input as it stands; hover or read out a bar for its fraction."
          : estimateNote(answer);
      } catch (error) {
        if (error.name !== "AbortError") oddsNote.textContent = `Cannot read the odds: ${error.message}`;
      }
    }, 200);
  }

  async function roll(event) {
    event.preventDefault();
    for (const bad of form.querySelectorAll("[aria-invalid=true]")) bad.removeAttribute("aria-invalid");
    const request = { ...body(), table };
    button.disabled = true;
    said.className = "";
    said.removeAttribute("role");
    said.textContent = "Rolling…";
    let session = null;
    try {
      let answer;
      if (request.seed === undefined) {
        const { keys } = await trust();
        session = await playerSession(keys);
        // "Roll sealed": the log records only a commitment; this browser draws the blind
        // and keeps the opening, to reveal it later (docs/audit.md, "Sealed rolls").
        const audience = sealedChoice.value;
        try {
          answer = await rollInSession(call, session, current.path, { ...body(), ...(audience ? { sealed: { audience } } : {}) }, keys);
        } finally {
          keep(session);  // its next nonce, or the roll still pending, or closed
        }
      } else {
        const [status, made] = await call("POST", current.path, request, { "idempotency-key": crypto.randomUUID() });
        if (status >= 500) throw new Error(made?.detail ?? `HTTP ${status}`);
        if (status !== 200) {
          showProblem(made);
          return;
        }
        answer = made;
      }
      showRolled(answer, session);
      onRolled(answer.receipt.seq);
    } catch (error) {
      said.className = "bad";
      said.setAttribute("role", "alert");
      if (error instanceof UnfairRollError) {
        said.textContent = `✗ Not a fair roll: ${error.message}`;
        if (session?.closed) said.append(" ", newSessionButton());
      } else if (error.problem) {
        showProblem(error.problem);
      } else {
        said.textContent = `The roll did not go through: ${error.message}`;
      }
    } finally {
      button.disabled = false;
    }
  }

  // docs/audit.md, row 22: what was checked (the log's dice, re-derived here, and its outcome
  // as the log holds it) under the check mark; the words apart, as the server's: no entry
  // carries them and nothing here checked them.
  function showRolled(answer, session) {
    const verified = Boolean(session && answer.verdict?.verified);
    const held = answer.checked ?? { seq: answer.receipt.seq, dice: answer.dice ?? [], outcome: answer.outcome };
    const where = session ? ` in your seed session (nonce ${answer.session.nonce})` : "";
    const dice = held.dice.map(dieInWords).join(", ") || "no dice";
    const check = verified
      ? "✓ checked here: your client seed, nonce, the chain's link, the dice, and the receipt under the pinned root"
      : session ? "NOT VERIFIED: no root is pinned (open this page with ?root=<key id>)"
      : "not checked here (a chosen seed)";
    const facts = document.createElement("p");
    facts.textContent = `Rolled #${held.seq}${where}: ${dice}${outcomeHeld(held.outcome)} — ${check}`;
    const words = document.createElement("p");
    words.className = "server-words";
    words.textContent = `The server's words (not checked): ${describe(answer.serverWords ?? answer.words)[1]}`;
    said.className = verified ? "ok" : "unverified";
    said.replaceChildren(facts, words);
    const sealed = answer.checked?.sealed;
    if (sealed) {
      keepOpening(sealed);
      const line = document.createElement("p");
      line.className = "sealed-note";
      line.textContent = `Sealed ${AUDIENCE_WORDS[sealed.audience]}: the table sees only a sealed line at #${sealed.seq} until you reveal it; this browser keeps its opening. `;
      line.append(revealButton(sealed));
      said.append(line);
    }
  }

  // The openings of this browser's sealed rolls on this table, kept until revealed.
  const openingsKey = `fairroll:sealed:${table}`;
  function keepOpening({ seq, opening }) {
    const kept = JSON.parse(localStorage.getItem(openingsKey) ?? "{}");
    kept[seq] = opening;
    localStorage.setItem(openingsKey, JSON.stringify(kept));
  }

  // Reveal: the opening, checked here against the sealed entry first, is published as a
  // sealed.reveal statement; the list below then shows the roll with its dice.
  function revealButton({ seq, opening }) {
    const reveal = document.createElement("button");
    reveal.type = "button";
    reveal.textContent = `Reveal sealed roll #${seq}`;
    reveal.addEventListener("click", async () => {
      reveal.disabled = true;
      try {
        const { keys } = await trust();
        const made = await revealSealed(call, table, seq, opening, keys);
        const kept = JSON.parse(localStorage.getItem(openingsKey) ?? "{}");
        delete kept[seq];
        localStorage.setItem(openingsKey, JSON.stringify(kept));
        reveal.replaceWith(`Revealed at #${made.receipt.seq}.`);
        onRolled(made.receipt.seq);
      } catch (error) {
        reveal.disabled = false;
        reveal.after(` ✗ Not revealed: ${error.message}`);
      }
    });
    return reveal;
  }

  // The outcome's own values as the log holds them (its numbers, names and flags; the
  // dice are listed already), not words about them.
  function outcomeHeld(outcome) {
    if (outcome === null || typeof outcome !== "object") return outcome == null ? "" : `; outcome ${outcome}`;
    const values = Object.entries(outcome).filter(([, value]) => value !== null && typeof value !== "object");
    return values.length ? `; outcome as the log holds it: ${values.map(([key, value]) => `${key} ${value}`).join(", ")}` : "";
  }

  // The player, not the page, starts a new seed session after one was closed.
  function newSessionButton() {
    const start = document.createElement("button");
    start.type = "button";
    start.textContent = "Start a new seed session";
    start.addEventListener("click", () => {
      localStorage.removeItem(sessionKey);
      said.className = "";
      said.removeAttribute("role");
      said.textContent = "A new seed session will be opened with your next roll.";
    });
    return start;
  }

  function showProblem(problem) {
    said.className = "bad";
    const params = problem.invalid_params ?? [];
    const items = params.length === 1 && params[0].reason === problem.detail ? [] : params.map((p) => `${p.name}: ${p.reason}`);
    said.replaceChildren(`${problem.title}: ${problem.detail}`);
    if (items.length) {
      const list = document.createElement("ul");
      for (const item of items) list.append(Object.assign(document.createElement("li"), { textContent: item }));
      said.append(list);
    }
    let first = null;
    for (const param of problem.invalid_params ?? []) {
      const control = controlFor(form, param.name);
      if (control) {
        control.setAttribute("aria-invalid", "true");
        first ??= control;
      }
    }
    first?.focus();
  }

  select.addEventListener("change", () => {
    history.replaceState(null, "", `#${select.value}`);
    choose(select.value);
  });
  form.addEventListener("input", updateOdds);
  form.addEventListener("submit", roll);
  choose(location.hash.slice(1));
}

/** The "roll sealed" choice, before the roll button: in the open (the default), or sealed
 * for the GM, for the GM only (blind), or for the roller only. A sealed roll is made in
 * the player's seed session only (a typed seed rolls in the open). */
function sealedControl(form, button) {
  const field = document.createElement("div");
  field.className = "field";
  const label = document.createElement("label");
  label.htmlFor = "sealed";
  label.textContent = "Who sees it";
  const choice = document.createElement("select");
  choice.id = "sealed";
  choice.append(new Option("everyone (an open roll)", ""));
  for (const [audience, words] of Object.entries(AUDIENCE_WORDS)) choice.append(new Option(`roll sealed, ${words}`, audience));
  const hint = document.createElement("small");
  hint.id = "sealed-hint";
  hint.textContent = "A sealed roll is in the log at once, as a commitment: the table sees a sealed line, and its dice when you reveal it.";
  choice.setAttribute("aria-describedby", hint.id);
  field.append(label, choice, hint);
  form.insertBefore(field, button);
  return choice;
}
