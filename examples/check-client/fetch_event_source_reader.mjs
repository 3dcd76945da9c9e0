// check-client adapter: @microsoft/fetch-event-source (Azure/fetch-event-source), an SSE-level reader.
//
//   ssemock check-client --client-timeout 2 -- node examples/check-client/fetch_event_source_reader.mjs 2
//
// fetchEventSource sends the recorded request (SSEMOCK_METHOD, SSEMOCK_STREAM_URL, SSEMOCK_BODY_FILE) and
// this prints one JSON line per message it hands to `onmessage` (type, data; no id: a message's `id` is its
// own field, not the last event ID). Its default `onopen` checks the content type (text/event-stream,
// a prefix match), not the status. An error it reports (`onerror`: a failed `onopen`, a broken read, no
// byte for the timeout, first argument, seconds, default 10) is thrown back, so that it does not retry:
// exit 1. The clean end of the body (`onclose`): exit 0.
//
// It is written for browsers: the published 2.0.1 calls `document.removeEventListener` and
// `window.clearTimeout` at the end of every stream, so under node the two globals are stood in for below
// (the page always visible, `openWhenHidden`); nothing else of it is changed. Its ES module build imports
// without file extensions, which node does not resolve: the CommonJS build is imported.
// Needs node 20.3 or later (AbortSignal.any).
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

globalThis.window ??= globalThis;
globalThis.document ??= { hidden: false, addEventListener() {}, removeEventListener() {} };
const { fetchEventSource } = createRequire(import.meta.url)("@microsoft/fetch-event-source");

const timeout = Number(process.argv[2] ?? 10) * 1000;
const bodyFile = process.env.SSEMOCK_BODY_FILE;
const body = bodyFile ? readFileSync(bodyFile) : undefined;
const idle = new AbortController();
let timer;
const arm = () => {
  clearTimeout(timer);
  timer = setTimeout(() => idle.abort(new Error(`no byte for ${timeout / 1000} s`)), timeout);
};

// Every read re-arms the idle timer.
const timedFetch = async (url, init) => {
  const response = await fetch(url, { ...init, signal: AbortSignal.any([init.signal, idle.signal]) });
  if (!response.body) return response;
  const timed = response.body.pipeThrough(new TransformStream({ transform: (chunk, out) => { arm(); out.enqueue(chunk); } }));
  return new Response(timed, { status: response.status, statusText: response.statusText, headers: response.headers });
};

try {
  arm();
  await fetchEventSource(process.env.SSEMOCK_STREAM_URL, {
    method: process.env.SSEMOCK_METHOD ?? "GET",
    headers: body ? { "content-type": "application/json" } : {},
    body,
    fetch: timedFetch,
    openWhenHidden: true,
    onmessage: (message) => process.stdout.write(JSON.stringify({ type: message.event || "message", data: message.data }) + "\n"),
    onerror: (error) => { throw error; },
  });
  clearTimeout(timer);
} catch (error) {
  clearTimeout(timer);
  process.stderr.write(`fetch-event-source: ${error?.cause?.message ?? error?.message ?? error}\n`);
  process.exitCode = 1;
}
