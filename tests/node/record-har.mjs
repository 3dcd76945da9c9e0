// Records a HAR file with headless Chromium: a page served from its own origin POSTs a JSON
// chat request to the URL argv[2] (another origin: CORS preflight), with an API key in the
// Authorization header, the query and the body, and reads the streamed answer to its end.
// The HAR (content embedded) is written to argv[3]; prints {origin, text} as JSON.
import { withPage } from "./chromium.mjs";

const [streamUrl, harPath] = process.argv.slice(2);
const page = `<!doctype html><meta charset="utf-8"><title>ssemock</title><script>
window.result = null;
(async () => {
  const response = await fetch(${JSON.stringify(streamUrl)}, {
    method: "POST",
    headers: { "Content-Type": "application/json", "Authorization": "Bearer sk-proj-HARHEADERSECRET0123456789abcdef" },
    body: JSON.stringify({ model: "gpt-4o-mini", stream: true, api_key: "sk-proj-HARBODYSECRET0123456789abcdef",
                           messages: [{ role: "user", content: "Say hello" }] }),
  });
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  for (;;) { const { value, done } = await reader.read(); if (done) break; text += value; }
  window.result = { status: response.status, text };
})().catch((e) => { window.result = { error: String(e) }; });
</script>`;
const result = await withPage(page, async ({ context, origin }) => {
  const tab = await context.newPage();
  await tab.goto(origin + "/");
  await tab.waitForFunction(() => window.result !== null, null, { timeout: 30000 });
  return { origin, ...(await tab.evaluate(() => window.result)) };
}, [], { recordHar: { path: harPath, content: "embed" } });
process.stdout.write(JSON.stringify(result));
