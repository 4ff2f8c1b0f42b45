// A roll in words, in each system's own terms: what was asked and what came of it.
// Pure functions of an audit entry's `mechanic`, `request` and `outcome`; no DOM, no
// dependency. The table page and VTT plugins show these beside the dice.

const SIDE = { a: "A", b: "B" };

function named(name, fallback) {
  return name ?? fallback;
}

export function plural(n, one, many = `${one}s`) {
  return `${n} ${n === 1 ? one : many}`;
}

function capitalise(text) {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

export const RESULT = {
  full_success: "Full success",
  partial_success: "Partial success",
  failure: "Failure",
  critical_success: "Critical success",
  catastrophic_failure: "Catastrophic failure",
};

function checkInWords(check) {
  const final = RESULT[check.final] ?? check.final;
  if (check.final === "partial_success" && check.short) {
    return `${final} — ${capitalise(check.short)} fell short`;
  }
  return final;
}

function tftRequest(request) {
  const side = (who, fallback) => {
    const dice = who.dice_count !== undefined && who.dice_count !== null
      ? plural(who.dice_count, "die", "dice")
      : `attribute ${who.attribute}${who.talents ? `, ${plural(who.talents, "talent")}` : ""}`;
    return `${named(who.name, fallback)} (${dice})`;
  };
  return `${side(request.a, "A")} against ${side(request.b, "B")}`;
}

function tftOutcome(outcome) {
  if (!outcome.victor) {
    return outcome.no_victor_reason === "all_dice_tied"
      ? "No victor: every die tied"
      : "No victor: the tied dice ran out";
  }
  const who = named(outcome.victor_name, SIDE[outcome.victor]);
  const level = outcome.victory_level ? ` — Level ${outcome.victory_level} victory` : "";
  return `${who} wins${level}`;
}

function fbcRollOutcome(outcome) {
  const parts = [plural(outcome.successes, "success", "successes")];
  if (outcome.converted) parts.push(`${outcome.converted} converted`);
  return `${parts.join(", ")}; Pool ${outcome.new_pool ?? "?"}`;
}

function tributeOutcome(outcome) {
  const chosen = outcome.actor.chosen;
  const word = { win: "Win", match: "Match", fail: "Fail" }[outcome.outcome] ?? outcome.outcome;
  const extras = [];
  if (chosen.profit) extras.push(plural(chosen.profit, "Profit", "Profit"));
  if (chosen.waste) extras.push(plural(chosen.waste, "Waste", "Waste"));
  const result = chosen.result >= 0 ? `+${chosen.result}` : `${chosen.result}`;
  return `${word} with ${extras.length ? extras.join(" and ") : "no Profit or Waste"} (${result} against ${outcome.opposition_result >= 0 ? "+" : ""}${outcome.opposition_result})`;
}

function statSkillRequest(request) {
  const stat = request.stat_name ? `${request.stat_name} ${request.stat}` : `Stat ${request.stat}`;
  const skill = request.skill_name ? `${request.skill_name} ${request.skill}` : `Skill ${request.skill}`;
  return `${stat} + ${skill} against TN ${request.tn}`;
}

function complexOutcome(outcome) {
  const last = outcome.periods.at(-1);
  const total = last ? last.total : 0;
  return outcome.completed
    ? `Done in ${plural(outcome.completed_in, "period")} (${outcome.elapsed})`
    : `Not done: ${plural(total, "success", "successes")} after ${plural(outcome.periods.length, "period")}`;
}

function fighterName(fighter) {
  return fighter?.name ?? "?";
}

const DESCRIBE = {
  "tft.contest": [tftRequest, tftOutcome],
  "fbc.roll": [(r) => `Pool ${r.pool}, risking ${plural(r.risk, "die", "dice")}`, fbcRollOutcome],
  "fbc.conflict": [
    (r) => `Conflict: ${r.participants.map((p) => p.name).join(", ")}`,
    (o) => `Narration order: ${o.narration_order.join(", ")}`,
  ],
  "tribute.test": [
    (r) => `${plural(r.focus ?? 1, "FOCUS die", "FOCUS dice")} and ${plural(r.burden ?? 1, "BURDEN die", "BURDEN dice")} (${r.reality}), rank ${r.rank}${r.opponent ? ` against ${named(r.opponent.name, "the opposition")}` : `, difficulty ${r.difficulty}`}`,
    tributeOutcome,
  ],
  "stat-skill.check": [statSkillRequest, checkInWords],
  "stat-skill.contest": [
    (r) => `Stat ${r.a.stat} / Skill ${r.a.skill} against Stat ${r.b.stat} / Skill ${r.b.skill}`,
    (o) => `A: ${checkInWords(o.a)}; B: ${checkInWords(o.b)}`,
  ],
  "stat-skill.complex-check": [
    (r) => `${statSkillRequest(r)}, ${plural(r.required_successes, "success", "successes")} needed`,
    complexOutcome,
  ],
  "fast-battle.character": [
    (r) => `Create ${r.name}`,
    (o) => `${o.character.name}: ST ${o.character.st}, QK ${o.character.qk}, IN ${o.character.in}, MA ${o.character.ma}, MR ${o.character.mr}, HP ${o.character.max_hp}, ${plural(o.gold, "gold piece")} left`,
  ],
  "fast-battle.attack": [
    (r) => `${fighterName(r.attacker)} attacks ${fighterName(r.defender)}`,
    (o) => `${plural(o.damage, "point")} of damage${o.knocked_out ? " — knocked out" : `, ${o.defender_hp} HP left`}`,
  ],
  "fast-battle.spell": [
    (r) => `${fighterName(r.attacker)} casts ${typeof r.spell === "string" ? r.spell : r.spell.name} at ${fighterName(r.defender)}`,
    (o) => (o.nullified ? `${o.spell} has no effect` : `${o.spell}: ${plural(o.damage, "point")} of damage${o.knocked_out ? " — knocked out" : ""}`),
  ],
  "fast-battle.initiative": [
    (r) => `Initiative: ${r.fighters.map(fighterName).join(", ")}`,
    (o) => `Order: ${o.order.join(", ")}`,
  ],
  "fast-battle.battle": [
    (r) => `Battle: ${r.fighters.map(fighterName).join(" against ")}`,
    (o) => (o.winner ? `${o.winner} wins after ${plural(o.turns.length, "turn")}` : `No winner after ${plural(o.turns.length, "turn")}`),
  ],
  "fast-battle.level-up": [
    (r) => `Level up ${r.character.name} (${r.character.xp ?? "0"} XP + ${r.xp_gained ?? "0"})`,
    (o) => `Level ${o.character.level}, ${o.character.xp} XP left`,
  ],
};

/** [the request in words, the outcome in words] for an entry (or a roll response). */
export function describe(mechanic, request, outcome) {
  const known = DESCRIBE[mechanic];
  if (!known) return [mechanic, JSON.stringify(outcome)];
  return [known[0](request), known[1](outcome)];
}

/** A die as shown: coins as heads/tails, others as "face on dN". */
export function dieInWords(die) {
  if (die.sides === 2) return die.face === 2 ? "heads" : "tails";
  return `${die.face} on a d${die.sides}`;
}
