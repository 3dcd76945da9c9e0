// Headless Chromium on an https page reads several event streams of an https server, each with an
// EventSource, then fetches each one's bytes. argv[2]: a JSON file {cert, key, spki, streams: [{url,
// types}]}: the page server's PEM certificate chain and key, the base64 SHA-256 of the server key's
// SubjectPublicKeyInfo that Chromium trusts (--ignore-certificate-errors-spki-list), and per stream its URL
// and the event types to listen for. Prints {origin, streams: [{url, events: [{type, data, lastEventId}],
// opened, state, status, bytes}], responses: [{url, status, protocol, securityState, tls, names}],
// certificate: [base64 DER]} as JSON; `state` is the EventSource's readyState when its first error came
// (0: the stream ended and the browser would reconnect), `bytes` base64; `responses` is the browser's
// network log (DevTools Protocol Network.responseReceived: the protocol each response came over, its TLS
// version and the certificate's names), `certificate` the chain the replay server's origin presented
// (Network.getCertificate).
// (Resource Timing's nextHopProtocol is empty here: a cross-origin response without Timing-Allow-Origin.)
import { readFileSync } from "node:fs";
import { withPage } from "./chromium.mjs";

const given = JSON.parse(readFileSync(process.argv[2], "utf8"));
const page = `<!doctype html><meta charset="utf-8"><title>ssemock</title><script>
function read(stream) {  // until the first error: the end of the stream, or a failure
  return new Promise((resolve) => {
    const events = []; let opened = false;
    const source = new EventSource(stream.url);
    const keep = (e) => events.push({ type: e.type, data: e.data, lastEventId: e.lastEventId });
    for (const type of stream.types) if (type !== "error") source.addEventListener(type, keep);
    source.onopen = () => { opened = true; };
    source.addEventListener("error", (e) => {
      if (e instanceof MessageEvent) { keep(e); return; }  // a recorded "event: error"
      const state = source.readyState;
      source.close();
      resolve({ url: stream.url, events, opened, state });
    });
  });
}
async function bytes(url) {
  const answer = await fetch(url, { cache: "no-store" });
  const got = new Uint8Array(await answer.arrayBuffer());
  let text = "";
  for (let i = 0; i < got.length; i += 8192) text += String.fromCharCode(...got.subarray(i, i + 8192));
  return { status: answer.status, bytes: btoa(text) };
}
window.run = async (streams) => {
  const read_ = await Promise.all(streams.map(read));
  const fetched = await Promise.all(streams.map((s) => bytes(s.url)));
  return { streams: read_.map((r, i) => ({ ...r, ...fetched[i] })) };
};
</script>`;
const tls = { cert: given.cert, key: given.key };
const flags = [`--ignore-certificate-errors-spki-list=${given.spki}`];
const result = await withPage(page, async ({ context, origin }) => {
  const tab = await context.newPage();
  const cdp = await context.newCDPSession(tab);
  const responses = [];
  cdp.on("Network.responseReceived", ({ response: r }) => responses.push({
    url: r.url, status: r.status, protocol: r.protocol, securityState: r.securityState,
    tls: r.securityDetails?.protocol, names: r.securityDetails?.sanList,
  }));
  await cdp.send("Network.enable");
  await tab.goto(origin + "/");
  const read = await tab.evaluate((streams) => window.run(streams), given.streams);
  const replay = new URL(given.streams[0].url).origin;
  const { tableNames } = await cdp.send("Network.getCertificate", { origin: replay });
  return { origin, ...read, responses, certificate: tableNames };
}, flags, {}, tls);
process.stdout.write(JSON.stringify(result));
