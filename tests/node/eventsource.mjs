// Opens a page served from its own origin in headless Chromium; the page reads an
// EventSource stream from the URL given as argv[2] (another origin: CORS) until it sees
// the data "[DONE]" or an error, then prints {origin, events, errors} as JSON.
import { createServer } from "node:http";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";

const streamUrl = process.argv[2];
const page = `<!doctype html><meta charset="utf-8"><title>ssemock</title><script>
window.events = []; window.errors = 0; window.done = false;
const source = new EventSource(${JSON.stringify(streamUrl)});
source.onmessage = (e) => {
  window.events.push({ type: e.type, data: e.data, lastEventId: e.lastEventId });
  if (e.data === "[DONE]") { source.close(); window.done = true; }
};
source.onerror = () => { window.errors += 1; source.close(); window.done = true; };
</script>`;
const server = createServer((req, res) => {
  res.writeHead(200, { "Content-Type": "text/html; charset=utf-8" });
  res.end(page);
});
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
const origin = `http://127.0.0.1:${server.address().port}`;
const profile = mkdtempSync(join(tmpdir(), "ssemock-chromium-"));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: "/usr/bin/chromium",
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync"],
});
try {
  const tab = await context.newPage();
  await tab.goto(origin + "/");
  await tab.waitForFunction(() => window.done, null, { timeout: 30000 });
  const result = await tab.evaluate(() => ({ events: window.events, errors: window.errors }));
  process.stdout.write(JSON.stringify({ origin, ...result }));
} finally {
  await context.close();
  server.close();
  rmSync(profile, { recursive: true, force: true });
}
