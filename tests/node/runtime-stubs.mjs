// A front-end test adding a stub to a running replay server (argv[2]: its base URL, http://127.0.0.1:PORT):
// a page of another origin (the app under test, 127.0.0.1 on another port) streams a chat completion
// with fetch; the test (this script, outside the browser, as a Playwright test's request would) adds
// a stub over POST /_ssemock/stubs; the page's next request gets it. The page then tries to add a stub
// itself, which the server refuses (another origin). Prints one JSON object:
//   before, after, last: what the page's requests got ({status, events: [data, ...]}, parsed by
//                        eventsource-parser), before the stub, after it, and after the page's attempts;
//   added:               the answer to the test's POST ({status, body});
//   fromPage:            the page's own attempts ({blocked} or {opaque}, as in admin-api.mjs);
//   listed:              the names GET /_ssemock/stubs lists at the end.
import { createParser } from "eventsource-parser";
import { withPage } from "./chromium.mjs";

const base = process.argv[2];
const stub = "ssemock_stubs: 1\nstubs:\n  - name: weather\n    match: {contains: weather}\n" +
             "    reply: {text: Sunny in Paris}\n";
const foreign = "ssemock_stubs: 1\nstubs:\n  - name: injected\n    reply: {text: Injected}\n";

const ask = (tab) => tab.evaluate(async (base) => {
  const r = await fetch(base + "/v1/chat/completions", {
    method: "POST", headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ model: "gpt-4o", stream: true, messages: [{ role: "user", content: "What is the weather?" }] }),
  });
  return { status: r.status, text: await r.text() };
}, base);

const events = ({ status, text }) => {
  const found = [];
  const parser = createParser({ onEvent: (e) => found.push(e.data) });
  parser.feed(text);
  return { status, events: found };
};

const result = await withPage("<!doctype html><title>the app</title>", async ({ context, origin }) => {
  const tab = await context.newPage();
  await tab.goto(origin + "/");
  const before = events(await ask(tab));
  const posted = await fetch(base + "/_ssemock/stubs", { method: "POST", body: stub,
                                                         headers: { "Content-Type": "application/yaml" } });
  const added = { status: posted.status, body: await posted.json() };
  const after = events(await ask(tab));
  const fromPage = await tab.evaluate(async ({ base, foreign }) => {
    const attempt = async (init) => {
      try {
        const r = await fetch(base + "/_ssemock/stubs", { method: "POST", body: foreign, ...init });
        return r.type === "opaque" ? { opaque: true } : { status: r.status, body: await r.text() };
      } catch (e) {
        return { blocked: String(e) };
      }
    };
    return {
      simple: await attempt({}),  // text/plain: no preflight, the request itself reaches the server
      json: await attempt({ headers: { "Content-Type": "application/json" } }),  // preflighted
      noCors: await attempt({ mode: "no-cors" }),
    };
  }, { base, foreign });
  const last = events(await ask(tab));
  const listed = (await (await fetch(base + "/_ssemock/stubs")).json()).map((s) => s.name);
  return { before, added, after, fromPage, last, listed };
});
process.stdout.write(JSON.stringify(result));
