// node cosign.mjs <verify.js> <note file> <name> <time> <python vkey> <python line>
// Cosigns the note with a fresh WebCrypto Ed25519 key (as the table page does) and
// checks the cosignature Python made; prints {vkey, line, python: <time or error>}.
import { readFileSync } from "node:fs";

const [verifyJs, noteFile, name, time, pythonVkey, pythonLine] = process.argv.slice(2);
const v = await import(verifyJs);
const note = readFileSync(noteFile, "utf8");
const pair = await crypto.subtle.generateKey({ name: "Ed25519" }, true, ["sign", "verify"]);
const raw = new Uint8Array(await crypto.subtle.exportKey("raw", pair.publicKey));
const line = await v.cosignNote(note, name, pair.privateKey, raw, Number(time));
const vkey = await v.cosignerVkey(name, raw);
let python;
try {
  python = await v.verifyCosignature(`${note}${pythonLine}\n`, pythonVkey);
} catch (error) {
  python = String(error.message);
}
let forged;
try {
  await v.verifyCosignature(`${note}${pythonLine.slice(0, -4)}AAA=\n`, pythonVkey);
  forged = "accepted";
} catch (error) {
  forged = String(error.message);
}
console.log(JSON.stringify({ vkey, line, python, forged }));
