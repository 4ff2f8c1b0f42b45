// A roll in words, in each system's own terms. The words are the server's: every roll
// response carries `words` ({asked, text, success, partial, critical, catastrophic,
// victor}), and an entry listing carries the words of each entry beside it. This module
// only reads them, so a page, a plugin and a bot all say the same thing; an item without
// words (a mechanic the server does not know) is an error, not a guess.

/** [the request in words, the outcome in words] from the server's `words`. */
export function describe(words) {
  if (!words || typeof words.text !== "string" || typeof words.asked !== "string") {
    throw new Error("no words for this roll: the server lists the words of every mechanic it knows");
  }
  return [words.asked, words.text];
}

/** A die as shown: a d2 as heads/tails, others as "face on dN". */
export function dieInWords(die) {
  if (die.sides === 2) return die.face === 2 ? "heads" : "tails";
  return `${die.face} on a d${die.sides}`;
}

/** Whom a sealed roll is shown to (docs/audit.md, "Sealed rolls"), in a player's words. */
export const AUDIENCE_WORDS = {
  gm: "for the GM",
  blind: "for the GM only (a blind roll)",
  self: "for the roller only",
};

/** A sealed roll's line until its reveal: "sealed roll #12 by Mira, for the GM". */
export function sealedInWords(seq, player, audience) {
  return `sealed roll #${seq} by ${player || "a player"}, ${AUDIENCE_WORDS[audience] ?? `for '${audience}'`}`;
}
