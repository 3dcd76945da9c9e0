// check-client adapter: a browser's own EventSource (headless Chromium, driven by playwright-core), an
// SSE-level reader.
//
//   ssemock check-client --cassettes GET-RECORDINGS --client-timeout 2 -- node examples/check-client/eventsource_browser_reader.mjs 2
//
// A page served from its own origin (http://127.0.0.1:PORT, another port: a loopback origin, which the
// replay server allows through CORS by default) runs `new EventSource(SSEMOCK_STREAM_URL)`. EventSource
// sends GET only: a recording whose stream request is not a GET exits 2 without a run.
//
// Event types. EventSource dispatches an event of type T only to the listeners of T, and the adapter
// cannot know the types a recording (or a preset: `event: error`) uses. Learning them from a first
// fetch of the stream would send one more request (graded as a retry, and replayed under the preset
// again), so the events are read where the browser reports every dispatch, whatever its type: the
// DevTools protocol's Network.eventSourceMessageReceived (event name, last event ID, data), which Blink
// emits as it dispatches each MessageEvent. The page listens to `message` as well, and the adapter
// fails (exit 1) when the page's `message` events differ from the reported ones of that type.
//
// The end. After the response body ends, EventSource reestablishes the connection: readyState
// CONNECTING and an `error` event (WHATWG HTML 9.2.3, "whether the connection is closed gracefully or
// unexpectedly"); a status other than 200, a content type other than text/event-stream or a network
// error before the response fail the connection: readyState CLOSED and an `error` event. The adapter
// closes the EventSource at the first `error` event that is not a MessageEvent (an `event: error`
// block is one, dispatched to the same listeners): CLOSED is a failure (exit 1, the status and content
// type on stderr); CONNECTING is an end, which the page cannot tell from a cut: the adapter asks the
// browser's network log (Network.loadingFinished: exit 0; Network.loadingFailed, such as
// net::ERR_INCOMPLETE_CHUNKED_ENCODING: exit 1). So it never reconnects: after a clean end, the browser
// would (and send Last-Event-ID), and a stream that ends before its last event is read as complete.
//
// Prints one JSON line per dispatched event, {type, data, id} (id: EventSource.lastEventId). Exits 1
// when no byte comes for the timeout (first argument, seconds; default 10). Chromium is
// $SSEMOCK_CHROMIUM, else /usr/bin/chromium. Node resolves playwright-core beside the script.
import { createServer } from "node:http";
import { chromium } from "playwright-core";

const timeout = Number(process.argv[2] ?? 10) * 1000;
const streamUrl = process.env.SSEMOCK_STREAM_URL;
if (!streamUrl || (process.env.SSEMOCK_METHOD ?? "GET") !== "GET") {
  process.stderr.write(`EventSource sends GET only; this recording's stream request is ${process.env.SSEMOCK_METHOD ?? "absent"}\n`);
  process.exit(2);
}

const page = `<!doctype html><meta charset="utf-8"><title>ssemock check-client</title><script>
window.seen = []; window.end = null;
const source = new EventSource(${JSON.stringify(streamUrl)});
source.addEventListener("message", (e) => window.seen.push({ data: e.data, id: e.lastEventId }));
source.addEventListener("error", (e) => {
  if (e instanceof MessageEvent) return;  // an event of type "error" from the stream
  window.end = { readyState: source.readyState };
  source.close();
});
</script>`;

// Runs fn(tab, network) on the page; network holds what the DevTools protocol reported of the stream.
async function withPage(fn) {
  const server = createServer((req, res) => {
    res.writeHead(200, { "Content-Type": "text/html; charset=utf-8" });
    res.end(page);
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const browser = await chromium.launch({
    executablePath: process.env.SSEMOCK_CHROMIUM || "/usr/bin/chromium",
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
           "--disable-component-update", "--disable-sync"],
  });
  try {
    const tab = await (await browser.newContext()).newPage();
    const cdp = await tab.context().newCDPSession(tab);
    const network = { events: [], request: null, response: null, finished: null, failed: null, touch: () => {} };
    const ours = (params) => params.requestId === network.request;
    cdp.on("Network.requestWillBeSent", (p) => { if (network.request === null && p.type === "EventSource") network.request = p.requestId; });
    cdp.on("Network.responseReceived", (p) => { if (ours(p)) { network.response = p.response; network.touch(); } });
    cdp.on("Network.dataReceived", (p) => { if (ours(p)) network.touch(); });
    cdp.on("Network.eventSourceMessageReceived", (p) => {
      if (!ours(p)) return;
      network.events.push({ type: p.eventName || "message", data: p.data, id: p.eventId });
      network.touch();
    });
    cdp.on("Network.loadingFinished", (p) => { if (ours(p)) network.finished = true; });
    cdp.on("Network.loadingFailed", (p) => { if (ours(p)) network.failed = p.errorText; });
    await cdp.send("Network.enable");
    await tab.goto(`http://127.0.0.1:${server.address().port}/`);
    return await fn(tab, network);
  } finally {
    await browser.close();
    server.close();
  }
}

// Resolves with the page's end ({readyState, seen}); rejects when no byte comes for the timeout.
function pageEnd(tab, network) {
  return new Promise((resolve, reject) => {
    let timer;
    network.touch = () => {
      clearTimeout(timer);
      timer = setTimeout(() => reject(new Error(`no byte for ${timeout / 1000} s`)), timeout);
    };
    network.touch();
    tab.waitForFunction(() => window.end, null, { timeout: 0, polling: 50 })
      .then(() => tab.evaluate(() => ({ ...window.end, seen: window.seen })))
      .then((end) => { clearTimeout(timer); resolve(end); }, reject);
  });
}

const until = async (test) => { for (let i = 0; i < 40 && !test(); i++) await new Promise((r) => setTimeout(r, 25)); };

try {
  const { events, problem } = await withPage(async (tab, network) => {
    const end = await pageEnd(tab, network);
    const response = network.response;
    if (end.readyState === 2) {
      const why = response ? `HTTP ${response.status}, Content-Type ${response.headers["content-type"] ?? response.headers["Content-Type"] ?? "none"}` : (network.failed ?? "no response");
      return { events: network.events, problem: `the connection failed (readyState CLOSED): ${why}` };
    }
    if (end.readyState !== 0) return { events: network.events, problem: `an error event with readyState ${end.readyState}` };
    await until(() => network.finished !== null || network.failed !== null);
    const messages = network.events.filter((e) => e.type === "message").map((e) => JSON.stringify([e.data, e.id]));
    const seen = end.seen.map((e) => JSON.stringify([e.data, e.id]));
    if (messages.join("\n") !== seen.join("\n")) {
      return { events: network.events, problem: `the page's ${seen.length} message event(s) differ from the ${messages.length} reported` };
    }
    if (network.failed !== null) return { events: network.events, problem: `the stream was cut: ${network.failed}` };
    if (network.finished === null) return { events: network.events, problem: "the end of the stream was not reported" };
    return { events: network.events, problem: null };
  });
  for (const event of events) process.stdout.write(JSON.stringify(event) + "\n");
  if (problem !== null) {
    process.stderr.write(`EventSource: ${problem}\n`);
    process.exit(1);
  }
} catch (error) {
  process.stderr.write(`EventSource: ${error?.message ?? error}\n`);
  process.exit(1);
}
