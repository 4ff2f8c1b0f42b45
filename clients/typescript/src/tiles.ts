// A table's log verified from its tiles (C2SP tlog-tiles) instead of its export: the
// server's /v1/tables/<table>/log, or a mirror of it on any static host (`fairroll
// mirror`). The reading is the service's own JavaScript core (verify/tiles.js, vendored
// with the rest of it): the checkpoint signed under the pinned root, every hash tile
// folding to its root, every bundle to its leaves; then verifyLog, as `verifyExport`.
import type { VerifiedLog } from "./index.js";
import { NOT_VERIFIED, trustedKeys } from "./vendor/verify.js";
import { verifyTiles } from "./vendor/verify/tiles.js";

/** Verify the log at `location` (an http(s) URL of a log's tiles prefix or of a mirror)
 * under the pinned `root`, with `served` the keys GET /v1/keys lists (only those the
 * root certified are trusted), holding it to `checkpoints` kept earlier (JSON of GET
 * .../checkpoint, or {text, key_id}). The verdict has `verifyExport`'s shape; a tile, a
 * bundle or a checkpoint that is not the log's makes `ok` false with its name. */
export async function verifyTilesLog(
  location: string,
  served: unknown,
  root: string | undefined,
  options: { fetch?: typeof fetch; checkpoints?: unknown[] } = {},
): Promise<VerifiedLog> {
  const known = root ? await trustedKeys(served, root) : new Map();
  const verdict: any = await verifyTiles(location, known, {
    root: root ?? null,
    checkpoints: options.checkpoints ?? [],
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  return verifiedLog(verdict, root);
}

/** A verification core's log verdict in the client's shape (`VerifiedLog`), for an export
 * and for tiles alike: one problem, the verdict's (as the Python package gives it), the
 * first bad seq and why; without a pinned root, NOT VERIFIED. */
export function verifiedLog(verdict: any, root: string | undefined): VerifiedLog {
  const problems: string[] = [];
  if (!root) problems.push(NOT_VERIFIED);
  else if (!verdict.ok) {
    problems.push(verdict.first_bad_seq !== null ? `seq ${verdict.first_bad_seq}: ${verdict.reason}` : String(verdict.reason));
  }
  const results: any[] = verdict.results;
  return {
    ok: verdict.ok,
    verified: verdict.verified,
    entries: verdict.entries,
    first_bad_seq: verdict.first_bad_seq,
    reason: verdict.reason,
    not_fair: verdict.not_fair,
    problems,
    sources: verdict.sources,
    signatures_checked: results.filter((r) => r.checks?.signature).length,
    reports: results.map((r) => ({ seq: r.seq, ok: r.ok, problems: r.problems as string[] })),
  };
}
