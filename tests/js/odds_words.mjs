// node odds_words.mjs <odds.js> <answer.json>
// Prints, for each bar of the answer's charts, [label, text, detail]: what the table page
// shows beside the bar and what it reads out (or shows on hover).
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const [moduleFile, answerFile] = process.argv.slice(2);
const { charts, said } = await import(pathToFileURL(moduleFile).href);
const answer = JSON.parse(readFileSync(answerFile, "utf8"));
const rows = [];
for (const chart of charts(answer)) {
  for (const bar of chart.bars) {
    const { text, detail } = said(bar);
    rows.push([chart.title, bar.label, text, detail]);
  }
}
console.log(JSON.stringify(rows));
