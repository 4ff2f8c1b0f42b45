// The roll panel: pick a mechanic, fill its form (built from the spec, started from the
// seed's example), see the exact odds of the current input beside it, and roll on this
// page's table. The new entry arrives in the list below like any other, verified.
import { controlFor, loadShelves, mechanicForm, oddsBody, rollOperations } from "./form.js";
import { charts, drawCharts } from "./odds.js";
import { describe } from "./words.js";

export async function startRollPanel({ table, onRolled }) {
  const select = document.getElementById("mechanic");
  const form = document.getElementById("roll-form");
  const fields = document.getElementById("fields");
  const seed = document.getElementById("seed");
  const key = document.getElementById("write-key");
  const said = document.getElementById("roll-result");
  const oddsPanel = document.getElementById("odds");
  const oddsNote = document.getElementById("odds-note");
  const button = form.querySelector("button[type=submit]");
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
  // seed session (docs/randomness.md). The client seed is drawn here by the browser's
  // CSPRNG and kept, with the session and the next nonce, in this browser; a roll that
  // did not go through is sent again with the same nonce, client seed and Idempotency-Key,
  // so a server that refuses it can only refuse it again, never change its dice.
  const sessionKey = `fairroll:session:${table}`;
  let pending = null;  // { nonce, idempotencyKey, asked } of a roll that did not go through

  function authorized(headers) {
    if (key.value) headers.authorization = `Bearer ${key.value}`;
    return headers;
  }

  async function playerSession() {
    const kept = JSON.parse(localStorage.getItem(sessionKey) ?? "null");
    if (kept?.seed_id && kept?.client_seed) return kept;
    const response = await fetch(`/v1/tables/${encodeURIComponent(table)}/seeds`, {
      method: "POST",
      headers: authorized({ "content-type": "application/json" }),
      body: JSON.stringify({ player: "this browser" }),
    });
    const answer = await response.json();
    if (!response.ok) throw Object.assign(new Error(answer.detail), { problem: answer });
    const made = {
      seed_id: answer.seed_id, client_seed: freshSeed(), nonce: 1,
      anchor: answer.commitment, first: 1, length: answer.length,
    };
    localStorage.setItem(sessionKey, JSON.stringify(made));
    return made;
  }

  function freshSeed() {
    const secret = crypto.getRandomValues(new Uint8Array(16));
    return Array.from(secret, (b) => b.toString(16).padStart(2, "0")).join("");
  }

  // A used-up chain: its next one was committed by the roll that used its last link;
  // learn it and draw a new client seed for it (a server that knew the client seed
  // before drawing a chain could grind the chain for it). Else open a new session.
  async function nextChain(session) {
    const seen = await fetch(`/v1/tables/${encodeURIComponent(table)}/seeds/${session.seed_id}`);
    const status = seen.ok ? await seen.json() : null;
    if (status && status.first_nonce === session.nonce && !status.revealed) {
      const renewed = { ...session, anchor: status.commitment, first: session.nonce, length: status.length, client_seed: freshSeed() };
      keep(renewed);
      return renewed;
    }
    localStorage.removeItem(sessionKey);
    return playerSession();
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
          : `Estimated odds of the input as it stands, from ${answer.estimate.battles} seeded battles (standard error ${answer.estimate.standard_error.toFixed(3)}).`;
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
    said.textContent = "Rolling…";
    try {
      let session = null;
      for (let attempt = 0; attempt < 3; attempt += 1) {
        if (request.seed === undefined) {
          session = await playerSession();
          if (!pending && session.length && session.nonce > session.first + session.length - 1) {
            session = await nextChain(session);
          }
          const nonce = pending?.nonce ?? session.nonce;
          request.session = { seed_id: session.seed_id, client_seed: session.client_seed, nonce };
          // The same request again keeps its Idempotency-Key; another one takes a new key
          // (but the same nonce and client seed, so the same dice).
          const asked = JSON.stringify({ ...request, session: undefined });
          const again = pending?.asked === asked ? pending.idempotencyKey : crypto.randomUUID();
          pending = { nonce, idempotencyKey: again, asked };
        }
        const idempotencyKey = pending?.idempotencyKey ?? crypto.randomUUID();
        const headers = authorized({ "content-type": "application/json", "idempotency-key": idempotencyKey });
        const response = await fetch(current.path, { method: "POST", headers, body: JSON.stringify(request) });
        const answer = await response.json();
        if (response.status === 409 && session && Number.isInteger(answer.nonce)) {
          // The session is further on (another tab of this browser rolled): take its nonce.
          keep({ ...session, nonce: answer.nonce });
          pending = null;
          continue;
        }
        if (session && (response.status === 404 || (response.status === 409 && /revealed/.test(answer.detail ?? "")))) {
          localStorage.removeItem(sessionKey);  // closed or gone: open a new one
          pending = null;
          continue;
        }
        if (response.status >= 500) throw new Error(answer.detail ?? `HTTP ${response.status}`);
        pending = null;
        if (!response.ok) {
          showProblem(answer);
          return;
        }
        if (session) keep({ ...session, nonce: answer.session.nonce + 1 });
        const [, came] = describe(answer.words);
        said.className = "ok";
        const where = session ? ` in your seed session (nonce ${answer.session.nonce})` : "";
        said.textContent = `Rolled #${answer.receipt.seq}${where}: ${came}`;
        onRolled(answer.receipt.seq);
        return;
      }
      said.className = "bad";
      said.textContent = "The roll did not go through: the seed session kept moving; try again.";
    } catch (error) {
      said.className = "bad";
      said.textContent = `The roll did not go through: ${error.message}`;
    } finally {
      button.disabled = false;
    }
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
