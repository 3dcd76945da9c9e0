// check-client adapter: node's eventsource (EventSource-Community/eventsource, v3 and later), an SSE-level
// reader with the WHATWG EventSource interface.
//
//   ssemock check-client --client-timeout 2 -- node examples/check-client/eventsource_reader.mjs 2
//
// Opens an EventSource on SSEMOCK_STREAM_URL; its `fetch` option sends the recorded method and body
// (SSEMOCK_METHOD, SSEMOCK_BODY_FILE), as a browser EventSource cannot. Prints one JSON line per event
// dispatched, of any event type (type, data, lastEventId once set): the EventSource's own dispatchEvent is
// wrapped to see each MessageEvent, as a page listening for every type would.
// The first `error` event ends the run, as EventSource reports it: readyState CLOSED (a status other than
// 200, another content type: it does not reconnect) or an error message (a broken read) exit 1; an error
// with no message is the clean end of the body, where EventSource would reconnect: exit 0. Also exits 1
// when no byte comes for the timeout (first argument, seconds; default 10).
// Needs node 20.3 or later (AbortSignal.any).
import { readFileSync } from "node:fs";
import { EventSource } from "eventsource";

const timeout = Number(process.argv[2] ?? 10) * 1000;
const bodyFile = process.env.SSEMOCK_BODY_FILE;
const body = bodyFile ? readFileSync(bodyFile) : undefined;
const idle = new AbortController();
let timer;
const arm = () => {
  clearTimeout(timer);
  timer = setTimeout(() => idle.abort(new Error(`no byte for ${timeout / 1000} s`)), timeout);
};

// The recorded request, and every read re-arming the idle timer.
const recorded = async (url, init) => {
  const headers = body ? { ...init.headers, "content-type": "application/json" } : init.headers;
  const signal = AbortSignal.any([init.signal, idle.signal].filter(Boolean));
  const response = await fetch(url, { ...init, method: process.env.SSEMOCK_METHOD ?? "GET", body, headers, signal });
  if (!response.body) return response;
  const timed = response.body.pipeThrough(new TransformStream({ transform: (chunk, out) => { arm(); out.enqueue(chunk); } }));
  return new Response(timed, { status: response.status, statusText: response.statusText, headers: response.headers });
};

arm();
const source = new EventSource(process.env.SSEMOCK_STREAM_URL, { fetch: recorded });
const dispatch = source.dispatchEvent.bind(source);
source.dispatchEvent = (event) => {
  if (event instanceof MessageEvent) {
    const line = { type: event.type, data: event.data };
    if (event.lastEventId) line.id = event.lastEventId;
    process.stdout.write(JSON.stringify(line) + "\n");
  }
  return dispatch(event);
};
source.addEventListener("error", (event) => {
  const closed = source.readyState === EventSource.CLOSED;
  source.close();
  clearTimeout(timer);
  if (closed || event.message) {
    process.stderr.write(`eventsource: ${event.message ?? "error"}${event.code ? ` (${event.code})` : ""}\n`);
    process.exitCode = 1;
  }
});
