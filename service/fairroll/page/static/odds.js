// Odds in pictures: each odds answer as charts of bars, every bar carrying its exact
// fraction, or, for an estimate, its count of battles and 95 % interval. Every odds answer has one shape (`distributions`, each with its `title` and
// its `chances`, labelled by the server in the system's words), so one function draws
// them all. `charts()` is pure (tested under Node); `drawCharts()` makes the DOM.

// The charts of one odds answer: [{title, bars: [{label, exact, value}]}]. An estimate
// (`exact: false`) is not a chance but a count of seeded battles: each of its bars also
// carries `estimate: {count, battles, low, high}` (its 95 % interval), and the words
// drawn for it never say "exactly".
export function charts(odds) {
  const battles = odds.exact === false ? odds.estimate?.battles : undefined;
  return odds.distributions.map((d) => ({
    title: d.title,
    bars: d.chances.map((c) => {
      const bar = { label: c.label, exact: c.probability.exact, value: c.probability.value };
      if (battles) {
        const count = Math.round(c.probability.value * battles);
        bar.estimate = { count, battles, ...wilson(count, battles) };
      }
      return bar;
    }),
  }));
}

// The 95 % Wilson score interval of `count` in `n`, as the server computes it.
export function wilson(count, n) {
  const z = 1.959963984540054;
  const p = count / n;
  const z2 = z * z;
  const centre = (p + z2 / (2 * n)) / (1 + z2 / n);
  const half = (z * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n))) / (1 + z2 / n);
  return { low: Math.max(0, centre - half), high: Math.min(1, centre + half) };
}

// What a bar says in words: its percentage and, read out or hovered, where it comes from:
// "exactly 5/12" beside an exact chance, the count of battles and the interval beside an
// estimate (never "exactly", never a bare "100 %" for a count).
export function said(bar) {
  if (!bar.estimate) {
    return { text: percent(bar.value, bar.exact), detail: `exactly ${bar.exact}` };
  }
  const { count, battles, low, high } = bar.estimate;
  const share = (x) => `${(x * 100).toFixed(1)} %`;
  return {
    text: `≈ ${share(bar.value)}`,
    detail: `estimated: ${count} of ${battles} seeded battles, 95 % interval ${share(low)} to ${share(high)}`,
  };
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
      for (const bar of bars) {
        const { label, value } = bar;
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
        const { text, detail } = said(bar);
        number.textContent = text;
        number.title = detail;
        const fraction = document.createElement("span");
        fraction.className = "visually-hidden";
        fraction.textContent = ` (${detail})`;
        number.append(fraction);
      }
      figure.append(caption, table);
      return figure;
    }),
  );
}
