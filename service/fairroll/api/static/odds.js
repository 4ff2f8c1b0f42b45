// Odds in pictures: each odds operation's answer as charts of bars, every bar carrying its
// exact fraction. `charts()` is pure (tested under Node); `drawCharts()` makes the DOM.
import { plural, RESULT } from "./words.js";

function bar(label, probability) {
  return { label, exact: probability.exact, value: probability.value };
}

const ZERO = { exact: "0/1", value: 0 };

function complement({ exact, value }) {
  const [n, d] = exact.split("/").map(BigInt);
  return { exact: `${d - n}/${d}`, value: 1 - value };
}

function side(request, key) {
  return request?.[key]?.name ?? key.toUpperCase();
}

const CHARTS = {
  fbcRollOdds: (odds) => [
    { title: "Successes", bars: odds.successes.map((p) => bar(plural(p.value, "success", "successes"), p.probability)) },
    { title: "Pool afterwards", bars: odds.new_pool.map((p) => bar(`Pool ${p.value}`, p.probability)) },
  ],
  statSkillCheckOdds: (odds) => [
    {
      title: "Result",
      bars: odds.final.flatMap((p) => {
        if (p.name !== "partial_success" || !odds.partial_stat_short) return [bar(RESULT[p.name] ?? p.name, p.probability)];
        return [  // the two ways of a partial success, as the text tells them apart
          bar("Partial — Stat fell short", odds.partial_stat_short),
          bar("Partial — Skill fell short", odds.partial_skill_short),
        ];
      }),
    },
  ],
  statSkillComplexCheckOdds: (odds, request) => [
    {
      title: "Periods needed",
      bars: [
        ...odds.completed_in.map((p) => bar(`Done in ${plural(p.periods, "period")}`, p.probability)),
        bar(`Not done in ${plural(request.max_periods ?? 10, "period")}`, odds.not_within_cap),
      ],
    },
  ],
  tftContestOdds: (odds, request) => {
    const a = side(request, "a");
    const b = side(request, "b");
    const result = {
      title: `Who wins (${plural(odds.a_dice, "die", "dice")} against ${odds.b_dice})`,
      bars: [bar(`${a} wins`, odds.a_wins), bar(`${b} wins`, odds.b_wins), bar("No victor", odds.no_victor)],
    };
    const levels = {
      title: "Victory levels",
      bars: [
        ...odds.a_victory_levels.map((p) => bar(`${a}: Level ${p.level}`, p.probability)),
        ...odds.b_victory_levels.map((p) => bar(`${b}: Level ${p.level}`, p.probability)),
      ],
    };
    return request.victory_levels ? [result, levels] : [result];
  },
  tributeTestOdds: (odds) => [
    { title: "Result", bars: [bar("Win", odds.win), bar("Match", odds.match), bar("Fail", odds.fail)] },
    { title: "Profit", bars: odds.profit.map((p) => bar(plural(p.value, "Profit", "Profit"), p.probability)) },
    { title: "Waste", bars: odds.waste.map((p) => bar(plural(p.value, "Waste", "Waste"), p.probability)) },
  ],
  fastBattleAttackOdds: (odds, request) => [
    {
      title: `Damage to ${request.defender?.name ?? "the defender"}`,
      bars: odds.damage.map((p) => bar(plural(p.value, "hit point"), p.probability)),
    },
    { title: "Knock-out", bars: [bar("Knocked out", odds.knock_out)] },
  ],
  fbcConflictOdds: (odds) => odds.participants.map((who) => ({
    title: `${who.name}: successes`,
    bars: who.successes.map((p) => bar(plural(p.value, "success", "successes"), p.probability)),
  })),
  statSkillContestOdds: (odds, request) => {
    const pair = (p) => bar(p.name === "standoff" ? "Standoff" : `${side(request, p.name)} wins`, p.probability);
    return [
      { title: "Stat pair", bars: odds.stat_winner.map(pair) },
      { title: "Skill pair", bars: odds.skill_winner.map(pair) },
      { title: `${side(request, "a")}: result`, bars: odds.a_final.map((p) => bar(RESULT[p.name] ?? p.name, p.probability)) },
      { title: `${side(request, "b")}: result`, bars: odds.b_final.map((p) => bar(RESULT[p.name] ?? p.name, p.probability)) },
    ];
  },
  fastBattleSpellOdds: (odds, request) => [
    { title: "The spell", bars: [bar("Takes effect", odds.takes_effect), bar("Has no effect", complement(odds.takes_effect))] },
    {
      title: `Damage to ${request.defender?.name ?? "the defender"}`,
      bars: odds.damage.map((p) => bar(plural(p.value, "hit point"), p.probability)),
    },
  ],
  fastBattleInitiativeOdds: (odds) => [
    {
      title: "Acts first",
      bars: odds.fighters.map((f) => bar(f.name, f.places.find((p) => p.value === 1)?.probability ?? ZERO)),
    },
  ],
  fastBattleCharacterOdds: (odds) => [
    { title: "Bonus points (heads of 3 coins)", bars: odds.bonus_points.map((p) => bar(plural(p.value, "point"), p.probability)) },
    { title: "Starting HP", bars: odds.max_hp.map((p) => bar(`${p.value} HP`, p.probability)) },
  ],
  fastBattleLevelUpOdds: (odds) => [
    {
      title: odds.levels_gained ? `Max HP after ${plural(odds.levels_gained, "level")}` : "No level gained: max HP stays",
      bars: odds.max_hp.map((p) => bar(`${p.value} HP`, p.probability)),
    },
  ],
  fastBattleOdds: (odds, request) => {
    const names = (request.fighters ?? []).map((f) => f.name ?? "?");
    return [
      {
        title: odds.exact ? "Who wins" : "Who wins (estimated: too many fighters for exact odds)",
        bars: [
          bar(`${names[0] ?? "First"} wins`, odds.first_wins),
          bar(`${names[1] ?? "Second"} wins`, odds.second_wins),
          bar("Turn limit reached", odds.turn_cap),
        ],
      },
    ];
  },
};

// The charts of one odds answer: [{title, bars: [{label, exact, value}]}].
export function charts(operationId, odds, request) {
  const make = CHARTS[operationId];
  return make ? make(odds, request) : [];
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
