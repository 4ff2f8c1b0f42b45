// What a VTT plugin does with fairroll, through a client generated from the spec:
// open a table (keeping its write key), roll one mechanic of each system on it with
// a retry-safe Idempotency-Key, show the dice, read each audit entry back and check
// it is the one the receipt names, and ask the server to verify the chain.
//
//   npm run build && node dist/vtt-roll.js http://127.0.0.1:8000
//
// Prints one JSON line per roll and a summary line; exits 1 on any mismatch.

import createClient from "openapi-fetch";
import type { components, paths } from "./generated/fairroll.js";

type Receipt = components["schemas"]["Receipt"];
type Die = components["schemas"]["Die"];

interface Rolled {
  mechanic: string;
  dice: Die[];
  receipt: Receipt;
  outcome: unknown;
}

const baseUrl = process.argv[2] ?? "http://127.0.0.1:8000";
const api = createClient<paths>({ baseUrl });

function fail(message: string): never {
  console.error(message);
  process.exit(1);
}

function faces(dice: Die[]): string {
  return dice.map((d) => (d.sides === 2 ? (d.face === 2 ? "H" : "T") : `${d.face}/d${d.sides}`)).join(" ");
}

async function main(): Promise<void> {
  const created = await api.POST("/v1/tables");
  if (!created.data) fail(`create table: ${JSON.stringify(created.error)}`);
  const { table, write_key } = created.data;
  const headers = (key: string) => ({ Authorization: `Bearer ${write_key}`, "Idempotency-Key": key });

  const rolls: Array<[string, () => Promise<Rolled | undefined>]> = [
    [
      "tft",
      async () =>
        (
          await api.POST("/v1/tft/contests", {
            body: {
              table,
              a: { name: "Roth", attribute: 16, talents: 2 },
              b: { name: "Sheena", attribute: 12 },
              victory_levels: true,
              seed: "vtt/tft",
            },
            headers: headers("vtt-tft"),
          })
        ).data,
    ],
    [
      "fbc",
      async () =>
        (
          await api.POST("/v1/fbc/rolls", {
            body: { table, pool: 10, risk: 5, seed: "vtt/fbc" },
            headers: headers("vtt-fbc"),
          })
        ).data,
    ],
    [
      "tribute",
      async () =>
        (
          await api.POST("/v1/tribute/tests", {
            body: { table, reality: "d12", rank: 2, focus: 6, burden: 6, difficulty: 3, seed: "vtt/tribute" },
            headers: headers("vtt-tribute"),
          })
        ).data,
    ],
    [
      "stat-skill",
      async () =>
        (
          await api.POST("/v1/stat-skill/checks", {
            body: { table, stat: 4, skill: 5, tn: 10, stat_name: "Agility", skill_name: "Firearms", seed: "vtt/s2" },
            headers: headers("vtt-stat-skill"),
          })
        ).data,
    ],
    [
      "fast-battle",
      async () =>
        (
          await api.POST("/v1/fast-battle/attacks", {
            body: {
              table,
              attacker: { name: "Zippy the Mean", st: 3, qk: 1, in: 1, ma: 1, mr: 2, max_hp: 6, weapon: "Standard Issue Sword" },
              defender: { name: "Grub", st: 3, qk: 2, in: 1, ma: 2, mr: 1, max_hp: 7, armor: "Light Robe" },
              seed: "vtt/fast-battle",
            },
            headers: headers("vtt-fast-battle"),
          })
        ).data,
    ],
  ];

  let seq = 0;
  for (const [system, roll] of rolls) {
    const rolled = await roll();
    if (!rolled) fail(`${system}: the roll was refused`);
    seq += 1;
    if (rolled.receipt.table !== table || rolled.receipt.seq !== seq) {
      fail(`${system}: receipt ${JSON.stringify(rolled.receipt)} is not seq ${seq} of ${table}`);
    }
    const entry = await api.GET("/v1/tables/{table}/entries/{seq}", {
      params: { path: { table, seq: rolled.receipt.seq } },
    });
    if (!entry.data) fail(`${system}: entry ${seq}: ${JSON.stringify(entry.error)}`);
    if (entry.data.entry_hash !== rolled.receipt.entry_hash || entry.data.mechanic !== rolled.mechanic) {
      fail(`${system}: entry ${seq} is not the one the receipt names`);
    }
    console.log(
      JSON.stringify({ system, mechanic: rolled.mechanic, seq, dice: faces(rolled.dice), entry_hash: entry.data.entry_hash }),
    );
  }

  const odds = await api.POST("/v1/tft/contests/odds", {
    body: { a: { attribute: 16, talents: 2 }, b: { attribute: 12 } },
  });
  if (!odds.data) fail(`odds: ${JSON.stringify(odds.error)}`);

  const refused = await api.POST("/v1/fbc/rolls", { body: { table, pool: 10, risk: 5 } });
  if (refused.response.status !== 401 || refused.error?.status !== 401) {
    fail(`a roll without the write key answered ${refused.response.status}`);
  }

  const verified = await api.GET("/v1/tables/{table}/verification", { params: { path: { table } } });
  if (!verified.data?.ok) fail(`verification: ${JSON.stringify(verified.data ?? verified.error)}`);
  console.log(
    JSON.stringify({ table, rolls: seq, verified: verified.data.ok, a_wins: chanceOf(odds.data, "victor", "a") }),
  );
}

/** The exact probability of one outcome of one distribution of an odds answer. */
function chanceOf(odds: components["schemas"]["Odds"], name: string, outcome: string | number): string {
  const found = odds.distributions.find((d) => d.name === name)?.chances.find((c) => c.outcome === outcome);
  if (!found) fail(`no ${name} ${outcome} in the odds`);
  return found.probability.exact;
}

await main();
