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
        // one name per top-level item: the current page's item holds both a label (its table of contents) and a link
        nav: [...document.querySelectorAll("nav.md-nav--primary > ul > li")]
          .map((li) => li.querySelector(":scope > label, :scope > a")?.textContent.trim()),
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
