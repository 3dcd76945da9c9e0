// Opens a page served from its own origin in headless Chromium; the page reads an
// EventSource stream from the URL given as argv[2] (another origin: CORS) until it sees
// the data "[DONE]" or an error, then prints {origin, events, errors} as JSON.
import { withPage } from "./chromium.mjs";

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
const result = await withPage(page, async ({ context, origin }) => {
  const tab = await context.newPage();
  await tab.goto(origin + "/");
  await tab.waitForFunction(() => window.done, null, { timeout: 30000 });
  return { origin, ...(await tab.evaluate(() => ({ events: window.events, errors: window.errors }))) };
});
process.stdout.write(JSON.stringify(result));
