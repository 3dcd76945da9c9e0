// Opens each URL given (argv[2..]) in headless Chromium and prints, as JSON, what rendered on each page:
// its title, the top-level sections of the navigation, its h1, its visible text, and the errors the page
// raised or the console reported.
import { withPage } from "./chromium.mjs";

const urls = process.argv.slice(2);
const result = await withPage("<!doctype html><title>blank</title>", async ({ context }) => {
  const pages = [];
  for (const url of urls) {
    const tab = await context.newPage();
    const errors = [];
    tab.on("pageerror", (e) => errors.push(String(e)));
    tab.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
    const response = await tab.goto(url, { waitUntil: "load", timeout: 30000 });
    pages.push({
      url,
      status: response.status(),
      errors,
      ...(await tab.evaluate(() => ({
        title: document.title,
        nav: [...document.querySelectorAll("nav.md-nav--primary > ul > li > label, nav.md-nav--primary > ul > li > a")]
          .map((e) => e.textContent.trim()),
        h1: document.querySelector("article h1")?.textContent.trim() ?? null,
        stylesheets: document.styleSheets.length,
        text: document.querySelector("article").innerText,
      }))),
    });
    await tab.close();
  }
  return pages;
});
process.stdout.write(JSON.stringify(result));
