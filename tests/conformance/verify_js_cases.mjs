// Every conformance case of docs/vectors/cases through verify.js, the one module the
// table page and the npm package share. `files` maps each path the index names
// (relative to docs/vectors) to its text, so that Node and Chromium run the same code.
// Resolves to: case name -> {ok, first_bad_seq, reason, not_fair} (or {error}).

export async function runCases(v, files) {
  const index = JSON.parse(files["cases/index.json"]);
  const said = {};
  for (const c of index.cases) {
    try {
      said[c.name] = await runCase(v, files, c);
    } catch (error) {
      said[c.name] = { error: String(error && error.stack ? error.stack : error) };
    }
  }
  return said;
}

const verdict = (ok, seq, reason, notFair = []) => ({
  ok,
  first_bad_seq: seq ?? null,
  reason: reason ?? "",
  not_fair: notFair.map((item) => (typeof item === "object" ? item.seq : item)).sort((a, b) => a - b),
});

async function runCase(v, files, c) {
  const inputs = c.inputs;
  const served = JSON.parse(files[inputs.keys]);
  const keys = await v.importKeys(served);
  if (c.kind === "cosignature") {
    try {
      // A cosigned note holds only if the log signed it too (as `fairroll verify
      // --cosigned` checks): opened with the log's keys, then the cosigner's line.
      const note = files[inputs.note];
      const origin = note.slice(0, note.indexOf("\n"));
      const name = origin.slice(0, origin.lastIndexOf("/"));
      const logKeys = await Promise.all([...keys.values()].map((k) => v.signerVerifier(name, k.raw, k.key)));
      await v.openNote(note, logKeys);
      await v.verifyCosignature(note, inputs.vkey);
      return verdict(true, null, "");
    } catch (error) {
      return verdict(false, null, error.message);
    }
  }
  if (c.kind === "receipt") {
    const entry = JSON.parse(files[inputs.entry]);
    try {
      await v.verifyReceipt(entry, JSON.parse(files[inputs.receipt]), await v.trustedKeys(served, inputs.root));
      return verdict(true, null, "");
    } catch (error) {
      return verdict(false, entry.seq, error.message);
    }
  }
  const options = {
    root: inputs.root,
    // Kept checkpoints (`--checkpoint`, `--since`) and receipts, as the CLI takes them.
    checkpoints: [...(inputs.checkpoints ?? []), ...(inputs.since ?? [])].map((p) => JSON.parse(files[p])),
    receipts: (inputs.receipts ?? []).map((p) => JSON.parse(files[p])),
  };
  if (inputs.base) {
    const base = JSON.parse(files[inputs.base]);
    await v.verifyCheckpoint(base, keys);
    Object.assign(options, { previousHash: base.head_hash, previousSeq: base.size, frontier: base.frontier });
  }
  const lines = files[inputs.log].split("\n").filter((line) => line);
  const entries = [];
  for (const line of lines) {
    try {
      entries.push(v.parseStrict(line));
    } catch (error) {
      const seq = (() => { try { return JSON.parse(line).seq; } catch { return null; } })();
      return verdict(false, seq, error.message);
    }
  }
  const log = new v.LogVerifier(keys, options);
  await log.add(entries);
  // The core's own verdict: the first problem a reader meets, as the page and the npm
  // client report it.
  const said = log.verdict();
  const notFair = said.not_fair;
  if (said.first_bad_seq !== null || said.ok === false) {
    return verdict(false, said.first_bad_seq, said.reason, notFair);
  }
  const end = typeof log.finish === "function" ? await log.finish() : null;
  if (end && end.ok === false) return verdict(false, end.badSeq ?? end.seq, (end.problems || []).join("; "), notFair);
  return verdict(true, null, "", notFair);
}
