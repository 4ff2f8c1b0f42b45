// rpg-dice-roller on rigged faces: each line of stdin is {"formula", "faces"}, each line
// of stdout what it rolled: the total, every die with its marks, and the faces left over.
// Its number generator's engine is replaced with one that hands out the faces given
// (random-js maps engine.next() = face - 1 to that face for any die of up to 2^32 sides).
import { createInterface } from "node:readline";
import { DiceRoll, NumberGenerator } from "@dice-roller/rpg-dice-roller";

const queue = [];
NumberGenerator.generator.engine = {
  next() {
    if (queue.length === 0) throw new Error("ran out of faces");
    return queue.shift() - 1;
  },
};

function dice(results) {
  // Every die, term by term, with the marks rpg-dice-roller gives it.
  const out = [];
  for (const group of results) {
    if (group && Array.isArray(group.rolls)) {
      out.push(
        group.rolls.map((r) => ({
          value: r.value,
          modifiers: [...r.modifiers],
        })),
      );
    }
  }
  return out;
}

for await (const line of createInterface({ input: process.stdin })) {
  const { formula, faces } = JSON.parse(line);
  queue.length = 0;
  queue.push(...faces);
  try {
    const roll = new DiceRoll(formula);
    const terms = dice(roll.rolls);
    console.log(JSON.stringify({ total: roll.total, terms, left: queue.length, output: roll.output }));
  } catch (error) {
    console.log(JSON.stringify({ error: String(error) }));
  }
}
