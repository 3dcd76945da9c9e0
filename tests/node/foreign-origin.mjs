// What a web page of a foreign origin can read from a replay server (argv[2]: its base URL,
// http://127.0.0.1:PORT; argv[3]: a replay path). The page is served by 127.0.0.1 but named
// evil.test (--host-resolver-rules), so its origin is not a loopback one, while its requests
// go to the server at 127.0.0.1. The same attempts from a page on 127.0.0.1 (another port, a
// loopback origin) are the control. Prints {foreign, loopback}, each with:
//   simple:      fetch POST text/plain (no preflight: the request is sent);
//   json:        fetch POST application/json (preflight first);
//   unknown:     fetch POST text/plain naming a cassette that does not exist (404);
//   eventSource: {events, errors} of an EventSource on the replay path.
// Each fetch: {status, body} when the page could read the answer, {blocked: message} when not.
import { withPage } from "./chromium.mjs";

const base = process.argv[2];
const replay = process.argv[3];

const attempts = async (tab) => tab.evaluate(async ({ base, replay }) => {
  const attempt = async (url, init) => {
    try {
      const r = await fetch(url, init);
      return { status: r.status, body: await r.text() };
    } catch (e) {
      return { blocked: String(e) };
    }
  };
  const eventSource = () => new Promise((resolve) => {
    const events = [];
    let errors = 0;
    const source = new EventSource(base + replay);
    source.onmessage = (e) => {
      events.push(e.data);
      if (e.data === "[DONE]") { source.close(); resolve({ events, errors }); }
    };
    source.onerror = () => { errors += 1; source.close(); resolve({ events, errors }); };
  });
  return {
    simple: await attempt(base + replay, { method: "POST", body: "{}", headers: { "Content-Type": "text/plain" } }),
    json: await attempt(base + replay, { method: "POST", body: "{}", headers: { "Content-Type": "application/json" } }),
    unknown: await attempt(base + "/_ssemock/c/no-such-cassette/v1/chat/completions",
                           { method: "POST", body: "{}", headers: { "Content-Type": "text/plain" } }),
    eventSource: await eventSource(),
  };
}, { base, replay });

const result = await withPage("<!doctype html><title>a page</title>", async ({ context, origin }) => {
  const tab = await context.newPage();
  await tab.goto(origin.replace("127.0.0.1", "evil.test") + "/");
  const foreign = { origin: await tab.evaluate(() => location.origin), ...(await attempts(tab)) };
  await tab.goto(origin + "/");
  const loopback = { origin: await tab.evaluate(() => location.origin), ...(await attempts(tab)) };
  return { foreign, loopback };
}, ["--host-resolver-rules=MAP evil.test 127.0.0.1"]);
process.stdout.write(JSON.stringify(result));
