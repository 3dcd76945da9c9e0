// Shared by the browser tests: a page server on 127.0.0.1 serving one HTML page, and headless
// Chromium (Debian's /usr/bin/chromium) in a throw-away profile.
import { createServer } from "node:http";
import { createServer as createSecureServer } from "node:https";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";

// Runs fn({context, origin}) with `html` served at origin + "/"; cleans everything up after.
// `contextOptions` go to the browser context (e.g. recordHar, written when the context closes).
// `tls` ({cert, key}: PEM text) serves the page over https instead of http.
export async function withPage(html, fn, extraArgs = [], contextOptions = {}, tls = null) {
  const answer = (req, res) => {
    res.writeHead(200, { "Content-Type": "text/html; charset=utf-8" });
    res.end(html);
  };
  const server = tls ? createSecureServer(tls, answer) : createServer(answer);
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const origin = `${tls ? "https" : "http"}://127.0.0.1:${server.address().port}`;
  const profile = mkdtempSync(join(tmpdir(), "ssemock-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: "/usr/bin/chromium",
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
           "--disable-component-update", "--disable-sync", ...extraArgs],
    ...contextOptions,
  });
  try {
    return await fn({ context, origin });
  } finally {
    await context.close();
    server.close();
    rmSync(profile, { recursive: true, force: true });
  }
}
