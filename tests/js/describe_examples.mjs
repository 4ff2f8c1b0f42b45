// node describe_examples.mjs <words.js> <examples.json>
// Prints [operation, name, request in words, outcome in words, dice in words] for every
// roll example, from the words the server gave.
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const [moduleFile, examplesFile] = process.argv.slice(2);
const { describe, dieInWords } = await import(pathToFileURL(moduleFile).href);
const rows = [];
for (const example of JSON.parse(readFileSync(examplesFile, "utf8"))) {
  const response = example.response;
  if (!response || typeof response !== "object" || !("receipt" in response) || !("dice" in response)) continue;
  const [asked, came] = describe(response.words);
  rows.push([example.operation, example.name, asked, came, response.dice.map(dieInWords)]);
}
console.log(JSON.stringify(rows));
