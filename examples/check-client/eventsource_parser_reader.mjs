// check-client adapter: node's eventsource-parser over fetch, an SSE-level reader.
//
//   ssemock check-client --client-timeout 2 -- node examples/check-client/eventsource_parser_reader.mjs 2
//
// Sends the recorded request (SSEMOCK_METHOD, SSEMOCK_STREAM_URL, SSEMOCK_BODY_FILE), feeds each read
// to eventsource-parser and prints one JSON line per event: type and data. No id: the parser gives an
// event's own id field only, and never tells of a block without data that sets the last event ID, so
// that ID cannot be kept here (the contract compares ids only when printed). Exits 1 on a status other
// than 200, a content type other than text/event-stream, a broken read, or no byte for the timeout
// (first argument, seconds; default 10).
import { readFileSync } from "node:fs";
import { createParser } from "eventsource-parser";

const timeout = Number(process.argv[2] ?? 10) * 1000;
const bodyFile = process.env.SSEMOCK_BODY_FILE;
const body = bodyFile ? readFileSync(bodyFile) : undefined;
const controller = new AbortController();
let timer;
const arm = () => {
  clearTimeout(timer);
  timer = setTimeout(() => controller.abort(new Error(`no byte for ${timeout / 1000} s`)), timeout);
};

const parser = createParser({
  onEvent: (event) => process.stdout.write(JSON.stringify({ type: event.event ?? "message", data: event.data }) + "\n"),
});

try {
  arm();
  const response = await fetch(process.env.SSEMOCK_STREAM_URL, {
    method: process.env.SSEMOCK_METHOD ?? "GET",
    headers: body ? { "content-type": "application/json", accept: "text/event-stream" } : { accept: "text/event-stream" },
    body,
    signal: controller.signal,
  });
  if (response.status !== 200) throw new Error(`HTTP ${response.status}`);
  const type = response.headers.get("content-type") ?? "";
  if (type.split(";")[0].trim().toLowerCase() !== "text/event-stream") throw new Error(`Content-Type ${type}`);
  const decoder = new TextDecoder("utf-8");
  for await (const part of response.body) {
    arm();
    parser.feed(decoder.decode(part, { stream: true }));
  }
  parser.feed(decoder.decode());
  clearTimeout(timer);
} catch (error) {
  process.stderr.write(`eventsource-parser: ${error?.cause?.message ?? error?.message ?? error}\n`);
  process.exit(1);
}
