// What web pages in headless Chromium can do with a replay server's admin API (argv[2]: its
// base URL, http://127.0.0.1:PORT). Prints one JSON object:
//   crossOrigin: from a page on another origin (127.0.0.1, another port): fetch of the journal,
//                DELETE of the journal, a no-cors GET, and a replay POST (readable through CORS);
//   rebound:     from a page whose name (rebound.test) resolves to 127.0.0.1, as after DNS
//                rebinding: the browser sees the same origin, the server sees Host rebound.test;
//   sameOrigin:  from a page on the server's own origin: the journal read, then cleared.
import { withPage } from "./chromium.mjs";

const base = process.argv[2];
const port = new URL(base).port;
// Each attempt: {status, body} when the page could read the answer, {blocked: message} when the
// browser refused to give it to the page, {opaque: true} for a no-cors answer the page cannot read.
const attempts = async (tab, target) => tab.evaluate(async (target) => {
  const attempt = async (url, init) => {
    try {
      const r = await fetch(url, init);
      if (r.type === "opaque") return { opaque: true };
      return { status: r.status, body: await r.text() };
    } catch (e) {
      return { blocked: String(e) };
    }
  };
  return {
    read: await attempt(target + "/_ssemock/requests"),
    clear: await attempt(target + "/_ssemock/requests", { method: "DELETE" }),
    noCors: await attempt(target + "/_ssemock/requests", { mode: "no-cors" }),
    replay: await attempt(target + "/v1/chat/completions", { method: "POST", body: "{}",
                                                              headers: { "Content-Type": "application/json" } }),
  };
}, target);

// Chromium asks each page's server for /favicon.ico on its own time. The journal counts those
// requests, so before the same-origin page reads and clears it, wait (from outside the browser)
// until both favicon requests that reach the replay server (the rebound page's and the
// same-origin page's) are in it; otherwise one may land between the read and the clear.
const faviconsArrived = async () => {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const entries = await (await fetch(base + "/_ssemock/requests")).json();
    const hosts = new Set(entries.filter((e) => e.path === "/favicon.ico").map((e) => e.headers.Host));
    if (hosts.has(`rebound.test:${port}`) && hosts.has(`127.0.0.1:${port}`)) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return false;
};

const result = await withPage("<!doctype html><title>another origin</title>", async ({ context, origin }) => {
  const tab = await context.newPage();
  await tab.goto(origin + "/");
  const crossOrigin = await attempts(tab, base);
  const rebound = await tab.goto(`http://rebound.test:${port}/_ssemock/health`);
  const reboundPage = { status: rebound.status(), ...(await attempts(tab, `http://rebound.test:${port}`)) };
  await tab.goto(base + "/_ssemock/health");
  const favicons = await faviconsArrived();
  const sameOrigin = await attempts(tab, "");
  return { crossOrigin, rebound: reboundPage, sameOrigin, favicons };
}, ["--host-resolver-rules=MAP rebound.test 127.0.0.1"]);
process.stdout.write(JSON.stringify(result));
