// Reads a JSON list of requests on stdin ({url, method, headers, body}), fetches each,
// feeds the response body to eventsource-parser as it arrives and prints, as one JSON
// list, for each request: {status, events: [{event, data, id}], reads}.
import { createParser } from "eventsource-parser";

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const requests = JSON.parse(Buffer.concat(chunks).toString("utf8"));
const results = [];
for (const req of requests) {
  const events = [];
  const parser = createParser({
    onEvent: (e) => events.push({ event: e.event ?? "message", data: e.data, id: e.id ?? null }),
  });
  const res = await fetch(req.url, { method: req.method, headers: req.headers, body: req.body });
  const decoder = new TextDecoder("utf-8");
  let reads = 0;
  for await (const part of res.body) {
    reads += 1;
    parser.feed(decoder.decode(part, { stream: true }));
  }
  parser.feed(decoder.decode());
  results.push({ status: res.status, events, reads });
}
process.stdout.write(JSON.stringify(results));
