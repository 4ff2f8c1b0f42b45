// node chart_examples.mjs <odds.js> <examples.json>
// Prints [operation, name, charts, percentages] for every odds example: the bars the
// table page draws beside the roll form for that answer.
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const [moduleFile, examplesFile] = process.argv.slice(2);
const { charts, percent } = await import(pathToFileURL(moduleFile).href);
const rows = [];
for (const example of JSON.parse(readFileSync(examplesFile, "utf8"))) {
  if (!example.operation.endsWith("Odds")) continue;
  const drawn = charts(example.response);
  const shown = drawn.map((chart) => chart.bars.map((bar) => percent(bar.value, bar.exact)));
  rows.push([example.operation, example.name, drawn, shown]);
}
console.log(JSON.stringify(rows));
