// Odds in pictures: each odds answer as charts of bars, every bar carrying its exact
// fraction. Every odds answer has one shape (`distributions`, each with its `title` and
// its `chances`, labelled by the server in the system's words), so one function draws
// them all. `charts()` is pure (tested under Node); `drawCharts()` makes the DOM.

// The charts of one odds answer: [{title, bars: [{label, exact, value}]}].
export function charts(odds) {
  return odds.distributions.map((d) => ({
    title: d.title,
    bars: d.chances.map((c) => ({ label: c.label, exact: c.probability.exact, value: c.probability.value })),
  }));
}

// A probability as a percentage that never rounds a possible outcome to 0 % or a
// doubtful one to 100 %: the exact fraction decides those.
export function percent(value, exact) {
  const [n, d] = exact.split("/");
  if (n === "0") return "0 %";
  if (n === d) return "100 %";
  if (value < 0.00001) return "< 0.001 %";
  if (value > 0.999) return "> 99.9 %";
  const digits = value < 0.001 ? 3 : value < 0.1 ? 2 : 1;
  return `${(value * 100).toFixed(digits)} %`;
}

// Each chart as a figure holding a table: a row per outcome, its bar drawn to scale.
export function drawCharts(container, list) {
  container.replaceChildren(
    ...list.map(({ title, bars }) => {
      const figure = document.createElement("figure");
      const caption = document.createElement("figcaption");
      caption.textContent = title;
      const table = document.createElement("table");
      table.className = "chart";
      for (const { label, exact, value } of bars) {
        const row = table.insertRow();
        const head = document.createElement("th");
        head.scope = "row";
        head.textContent = label;
        row.append(head);
        const track = row.insertCell();
        track.className = "track";
        const fill = document.createElement("span");
        fill.className = "fill";
        fill.style.width = `${Math.max(value * 100, value > 0 ? 0.5 : 0)}%`;
        fill.setAttribute("aria-hidden", "true");
        track.append(fill);
        const number = row.insertCell();
        number.className = "number";
        number.textContent = percent(value, exact);
        number.title = `exactly ${exact}`;
        const fraction = document.createElement("span");
        fraction.className = "visually-hidden";
        fraction.textContent = ` (exactly ${exact})`;
        number.append(fraction);
      }
      figure.append(caption, table);
      return figure;
    }),
  );
}
