// node npm_tiles.mjs <client dist/index.js> <server url> <root key id> <tiles url> [export.ndjson]
// The npm client's verifyTiles on the log at <tiles url> (a mirror's or the server's),
// and its verifyExport on the export, each verdict without its per-entry reports.
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const [dist, url, root, tilesUrl, exportFile] = process.argv.slice(2);
const { createFairroll } = await import(pathToFileURL(dist).href);
const dice = createFairroll({ baseUrl: url, root });
const strip = ({ reports, ...verdict }) => verdict;
const fromTiles = strip(await dice.verifyTiles(tilesUrl));
const unpinned = strip(await createFairroll({ baseUrl: url }).verifyTiles(tilesUrl));
const fromExport = exportFile ? strip(await dice.verifyExport(readFileSync(exportFile, "utf8"))) : null;
console.log(JSON.stringify({ fromTiles, fromExport, unpinned }));
