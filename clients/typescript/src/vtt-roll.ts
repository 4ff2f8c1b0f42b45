// What a VTT plugin does with fairroll, through this client: open a table (keeping its
// write key), roll one mechanic of each system on it fairly (in the player's own seed
// session, each answer checked here before it is shown: client seed, session, nonce,
// link, dice, receipt under the pinned root), with a retry-safe Idempotency-Key, show
// the dice, and verify the table's whole log here under the pinned root, never on the
// server's word (its own verification is not asked for).
//
//   npm run build && node dist/vtt-roll.js http://127.0.0.1:8000 ed25519:<root key id>
//
// The root key id comes out of band (FAIRROLL_ROOT works too); without it every roll and
// the log say NOT VERIFIED and the script exits 4, as `fairroll verify` does. Prints one
// JSON line per roll and a summary line; exits 1 on any mismatch.

import { createFairroll, NOT_VERIFIED } from "./index.js";
import type { components } from "./generated/fairroll.js";

type Die = components["schemas"]["Die"];

const baseUrl = process.argv[2] ?? "http://127.0.0.1:8000";
const root = process.argv[3] ?? process.env.FAIRROLL_ROOT;

function fail(message: string, code = 1): never {
  console.error(message);
  process.exit(code);
}

function faces(dice: Die[]): string {
  return dice.map((d) => (d.sides === 2 ? (d.face === 2 ? "H" : "T") : `${d.face}/d${d.sides}`)).join(" ");
}

async function main(): Promise<void> {
  if (!root) fail(`${NOT_VERIFIED} (pass the root key id, obtained out of band, or set FAIRROLL_ROOT)`, 4);
  const open = createFairroll({ baseUrl, root, player: "vtt-example" });
  const { table, write_key } = await open.createTable();
  const dice = open.withKey(write_key);

  // Every mechanic, fair by default: no seed, no dice, no session in the body.
  const rolls: Array<[string, string, Record<string, unknown>]> = [
    ["tft", "/v1/tft/contests", { a: { name: "Roth", attribute: 16, talents: 2 }, b: { name: "Sheena", attribute: 12 }, victory_levels: true }],
    ["fbc", "/v1/fbc/rolls", { pool: 10, risk: 5 }],
    ["tribute", "/v1/tribute/tests", { reality: "d12", rank: 2, focus: 6, burden: 6, difficulty: 3 }],
    ["stat-skill", "/v1/stat-skill/checks", { stat: 4, skill: 5, tn: 10, stat_name: "Agility", skill_name: "Firearms" }],
    [
      "fast-battle",
      "/v1/fast-battle/attacks",
      {
        attacker: { name: "Zippy the Mean", st: 3, qk: 1, in: 1, ma: 1, mr: 2, max_hp: 6, weapon: "Standard Issue Sword" },
        defender: { name: "Grub", st: 3, qk: 2, in: 1, ma: 2, mr: 1, max_hp: 7, armor: "Light Robe" },
      },
    ],
  ];

  const seqs: number[] = [];
  for (const [system, path, body] of rolls) {
    // The Idempotency-Key makes a retry safe: the same key answers the same roll.
    const rolled = await dice.roll(path, { table, ...body }, `vtt-${system}`);
    if (rolled.receipt.table !== table) fail(`${system}: receipt ${JSON.stringify(rolled.receipt)} is not of ${table}`);
    if (rolled.source !== "committed" || !rolled.verdict?.verified) {
      fail(`${system}: not a fair roll checked under the root: ${JSON.stringify(rolled.verdict)}`);
    }
    seqs.push(rolled.receipt.seq);
    console.log(JSON.stringify({ system, mechanic: rolled.mechanic, seq: rolled.receipt.seq, dice: faces(rolled.dice), entry_hash: rolled.receipt.entry_hash }));
  }

  const odds = await dice.api.POST("/v1/tft/contests/odds", { body: { a: { attribute: 16, talents: 2 }, b: { attribute: 12 } } });
  if (!odds.data) fail(`odds: ${JSON.stringify(odds.error)}`);

  const refused = await open.rawApi.POST("/v1/fbc/rolls", { body: { table, pool: 10, risk: 5 } });
  if (refused.response.status !== 401) fail(`a roll without the write key answered ${refused.response.status}`);

  // The whole log, checked here under the pinned root (not the server's verification).
  const verified = await dice.verifyExport(await dice.exportTable(table));
  if (!verified.ok || !verified.verified) fail(`verification: ${verified.problems.join("; ")}`);
  const unfair = verified.not_fair.filter((n) => seqs.includes(n.seq));
  if (unfair.length) fail(`not fair: ${JSON.stringify(unfair)}`);
  console.log(JSON.stringify({ table, rolls: seqs.length, seqs, verified: verified.ok && verified.verified, fair: true, a_wins: chanceOf(odds.data, "victor", "a") }));
}

/** The exact probability of one outcome of one distribution of an odds answer. */
function chanceOf(odds: components["schemas"]["Odds"], name: string, outcome: string | number): string {
  const found = odds.distributions.find((d) => d.name === name)?.chances.find((c) => c.outcome === outcome);
  if (!found) fail(`no ${name} ${outcome} in the odds`);
  return found.probability.exact;
}

await main();
