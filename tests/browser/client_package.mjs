// node client_package.mjs <page-url>
// Opens a page that imports the installed @fairroll/client (an import map, no bundler) and
// rolls, follows and verifies a table with it, in Debian's chromium; prints what it saw
// (and, if the page never finishes, the errors and failed requests that stopped it).
import { launch } from "./launch.mjs";

const [url] = process.argv.slice(2);
const browser = await launch();
try {
  const page = await browser.newPage();
  const errors = [];
  page.on("pageerror", (error) => errors.push(String(error)));
  page.on("console", (message) => message.type() === "error" && errors.push(message.text()));
  page.on("requestfailed", (request) => {
    // The event stream the plugin stops reading (a `break`) is cancelled: that is no error.
    const why = request.failure()?.errorText ?? "";
    if (!(why === "net::ERR_ABORTED" && request.url().endsWith("/events"))) {
      errors.push(`failed: ${request.url()} ${why}`);
    }
  });
  await page.goto(url);
  const result = await page
    .waitForFunction(() => window.result ?? null, null, { timeout: 30000 })
    .then((handle) => handle.jsonValue())
    .catch((error) => ({ error: String(error) }));
  console.log(JSON.stringify({ ...result, errors }));
} finally {
  await browser.close();
}
