// node policy.mjs <url> <selector> [text]
// Opens <url> in Debian's chromium, waits for <selector> (and, given, for [text] in the
// page), and prints every Content-Security-Policy violation the page met, every request
// that left the server's origin, and the page's errors.
import { launch } from "./launch.mjs";

const [url, selector, text] = process.argv.slice(2);
const origin = new URL(url).origin;
const browser = await launch();
try {
  const page = await browser.newPage();
  const violations = [];
  const foreign = [];
  const errors = [];
  page.on("console", (message) => {
    if (message.text().includes("Content Security Policy")) violations.push(message.text());
  });
  page.on("pageerror", (error) => errors.push(String(error)));
  page.on("request", (request) => {
    const target = request.url();
    if (!target.startsWith(origin) && !target.startsWith("blob:") && !target.startsWith("data:")) {
      foreign.push(target);
    }
  });
  await page.exposeFunction("reportViolation", (v) => violations.push(v));
  await page.addInitScript(() => {
    document.addEventListener("securitypolicyviolation", (event) =>
      globalThis.reportViolation(`${event.violatedDirective} ${event.blockedURI}`),
    );
  });
  await page.goto(url);
  await page.waitForSelector(selector, { timeout: 30000 });
  if (text) await page.waitForFunction((t) => document.body.innerText.includes(t), text);
  await page.waitForTimeout(500);
  console.log(JSON.stringify({ violations, foreign, errors }));
} finally {
  await browser.close();
}
