// node words_unknown.mjs <words.js>
// An item without the server's words is an error in words.js, not a guess.
import { pathToFileURL } from "node:url";

const { describe } = await import(pathToFileURL(process.argv[2]).href);
try {
  describe(undefined);
  console.log(JSON.stringify({ threw: false, message: "" }));
} catch (error) {
  console.log(JSON.stringify({ threw: true, message: error.message }));
}
