// fairroll's audit entries, verified where they are shown: in the browser (or Node >= 20),
// with WebCrypto only, taking nothing the server says about them on trust. The one
// JavaScript verification core: the table page imports it, the npm client vendors it
// (clients/typescript/scripts/vendor.mjs copies this file and verify/). Every row of the
// checks table in docs/audit.md ("What a verifier checks") is checked here as the Python
// core (fairroll.audit.verify) checks it, with its verdict, first bad seq and words.
//
// This module is the public API; the work is done by job in verify/:
//   - canonical.js: RFC 8785 bytes, strict JSON (no key twice, no float, no lone
//                   surrogate), every field of an entry with its type, the hashes;
//   - merkle.js:    the RFC 6962 tree, inclusion and consistency proofs;
//   - note.js:      signed notes as Go's sumdb/note (a verifier per key, openNote with a
//                   set of them, the key hash checked), checkpoints and cosignatures;
//   - receipts.js:  a roll's receipt against its entry;
//   - trust.js:     key ids, keys trusted under the pinned root, keys a log publishes;
//   - dice.js:      dice from a seed, hash chains;
//   - entry.js:     one entry alone (hash, link, signature, source, dice);
//   - sessions.js:  the seed sessions' state machine and the rolls that are not fair;
//   - sealed.js:    sealed rolls: their entries, their reveals opening the commitments,
//                   the ones never revealed;
//   - run.js:       the run over a log (LogVerifier, verifyLog), kept checkpoints and
//                   receipts held to, the verdict;
//   - live.js:      a player's roll checked before it is shown (openSession, rollInSession);
//   - defaults.js:  each mechanic's request defaults, made by scripts/js_defaults.py from
//                   the server's request types, so a field a client left out is read
//                   as the server reads it;
//   - tiles.js:     a log read from its C2SP tlog-tiles (a server's or a static mirror's),
//                   checked tile by tile, then verified as its export is.
// The rules themselves (outcome from dice) are replayed by `fairroll verify`; a page
// shows the dice it re-derived next to the outcome.
//
// No build step, no dependency: import it as an ES module.

export { canonicalJson, entryHash, fieldProblem, leafHash, NotCanonicalError, parseStrict } from "./verify/canonical.js";
export { Frontier, lostLeaf, verifyConsistency, verifyInclusion } from "./verify/merkle.js";
export {
  cosignerVerifier, cosignerVkey, cosignNote, keyHash, NoteError, openNote, signatureLine, signerVerifier,
  verifyCheckpoint, verifyCosignature,
} from "./verify/note.js";
export { verifyReceipt } from "./verify/receipts.js";
export { importKeys, keyIdOf, trustedKeys } from "./verify/trust.js";
export { chainPrevious, deriveFaces } from "./verify/dice.js";
export { EPOCH_MECHANIC, PROVES, SELECTIVE_REFUSAL, SOURCES, sourceProblem, STATEMENTS, verifyEntry } from "./verify/entry.js";
export { CLIENT_SEED_REUSED } from "./verify/sessions.js";
export { AUDIENCES, openingProblem, SEALED_REVEAL, SEALED_ROLL, sealedCommitment, sealedRollProblem } from "./verify/sealed.js";
export { LogVerifier, NOT_VERIFIED, verifyEntries, verifyLog } from "./verify/run.js";
export {
  checkAnswer, checkCommitted, entryAtNonce, freshBlind, freshClientSeed, holdsRequest, keptCheckpoint, openSession,
  revealSealed, rollInSession, UnfairRollError,
} from "./verify/live.js";
export { readTiles, TileError, tilePath, tilesLoader, tilesOf, verifyTiles } from "./verify/tiles.js";
