// Headless Chromium's EventSource reads the URL given as argv[2] and lets the browser reconnect on
// its own (onerror does not close it), until it sees the data "[DONE]" or 5 errors; prints
// {events: [{data, lastEventId, t}], errors, opens} as JSON (t: milliseconds since the page started).
import { withPage } from "./chromium.mjs";

const streamUrl = process.argv[2];
const page = `<!doctype html><meta charset="utf-8"><title>ssemock</title><script>
window.events = []; window.errors = 0; window.opens = 0; window.done = false;
const source = new EventSource(${JSON.stringify(streamUrl)});
source.onopen = () => { window.opens += 1; };
source.onmessage = (e) => {
  window.events.push({ data: e.data, lastEventId: e.lastEventId, t: performance.now() });
  if (e.data === "[DONE]") { source.close(); window.done = true; }
};
source.onerror = () => {
  window.errors += 1;
  if (window.errors >= 5 || source.readyState === EventSource.CLOSED) { source.close(); window.done = true; }
};
</script>`;
const result = await withPage(page, async ({ context, origin }) => {
  const tab = await context.newPage();
  await tab.goto(origin + "/");
  await tab.waitForFunction(() => window.done, null, { timeout: 30000 });
  return await tab.evaluate(() => ({ events: window.events, errors: window.errors, opens: window.opens }));
});
process.stdout.write(JSON.stringify(result));
