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

  // The systems and their mechanics as the server declares them (GET /v1/systems).
  const [spec, listed] = await Promise.all([
    fetch("/schema/openapi.json").then((r) => r.json()),
    fetch("/v1/systems").then((r) => r.json()),
  ]);
  const shelves = await loadShelves(spec);
  const operations = rollOperations(spec);
  for (const system of listed.systems) {
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
    current = operations.find((o) => o.id === id) ?? operations[0];
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
    const headers = { "content-type": "application/json", "idempotency-key": crypto.randomUUID() };
    if (key.value) headers.authorization = `Bearer ${key.value}`;
    button.disabled = true;
    said.className = "";
    said.textContent = "Rolling…";
    try {
      const response = await fetch(current.path, { method: "POST", headers, body: JSON.stringify(request) });
      const answer = await response.json();
      if (!response.ok) {
        showProblem(answer);
        return;
      }
      const [, came] = describe(answer.words);
      said.className = "ok";
      said.textContent = `Rolled #${answer.receipt.seq}: ${came}`;
      onRolled(answer.receipt.seq);
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
