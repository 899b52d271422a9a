// ljlog e2e (flame.sh): the page of `ljlog flame` in headless Chromium.
// usage: node flame_check.js PAGE.html SPEC.json
// SPEC: {"top": [names that must show as frames], "search": substring,
//        "share": its share of the samples view ("12.34%"),
//        "views": {id: {"label": ..., "total": "N unit" or null}},
//        "zoom": a name to click, "hostile": [names that must show as text],
//        "roots": [names the samples view's root children may have, as
//        folded prints them], "tower": the one root child that must be
//        there (likewise), with "tower_share" its share of the samples,
//        "diff": a differential page (flame --base): {"view": id, "grew":
//        [names whose frames must be red], "shrank": [blue ones]}}
// Every request is routed: the page itself is served, any other request
// is recorded and aborted, and fails the check; so do console errors,
// page errors and dialogs. Prints one "ok" line per check; exit 1 with the
// failures.
"use strict";
const fs = require("fs");
const { chromium } = require("playwright-core");

const [page_path, spec_path] = process.argv.slice(2);
const html = fs.readFileSync(page_path);
const spec = JSON.parse(fs.readFileSync(spec_path, "utf8"));
const URL = "http://ljlog-flame.invalid/flame.html";
const bad = [], oks = [];

function check(cond, what) {
  if (cond) oks.push(what);
  else bad.push(what);
}

(async () => {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    args: ["--no-sandbox"],
  });
  const requests = [], errors = [];
  try {
    const page = await browser.newPage();
    page.on("request", (r) => requests.push(r.url()));
    page.on("console", (m) => {
      if (m.type() === "error") errors.push("console: " + m.text());
    });
    page.on("pageerror", (e) => errors.push("page error: " + e.message));
    page.on("dialog", (d) => {
      errors.push("dialog: " + d.message());
      d.dismiss();
    });
    await page.route("**/*", (route) => {
      if (route.request().url() === URL)
        route.fulfill({ status: 200, contentType: "text/html", body: html });
      else route.abort();
    });
    await page.goto(URL, { waitUntil: "load" });
    await page.waitForTimeout(200); // late requests, if any, show up

    const frames = () => page.$$eval(".fr", (l) => l.map((e) => ({
      text: e.textContent, cls: e.className, top: e.style.top,
      w: e.getBoundingClientRect().width,
    })));
    const status = () => page.textContent("#status");
    const chartw = await page.$eval("#chart", (e) => e.clientWidth);
    let fr = await frames();
    check(fr.length > 1, "renders " + fr.length + " frames");
    for (const n of spec.top)
      check(fr.some((f) => f.text === n && f.w > 1),
            "shows top function " + JSON.stringify(n));
    for (const n of spec.hostile || [])
      check(fr.some((f) => f.text === n),
            "shows hostile name " + JSON.stringify(n) + " as text");
    check(await page.$$eval("script", (l) => l.length) === 2,
          "two script elements (the data and ours), none injected");

    // A differential page: frames coloured by the change of their share,
    // red (grew) and blue (shrank), the tooltip giving both; the title says
    // what the colours mean.
    if (spec.diff) {
      await page.click("#view-" + spec.diff.view);
      const cs = await page.$$eval(".fr", (l) => l.map((e) => {
        const m = getComputedStyle(e).backgroundColor.match(/\d+/g).map(Number);
        return { text: e.textContent, change: e.getAttribute("data-change"),
                 r: m[0], b: m[2], title: e.title, w: e.getBoundingClientRect().width };
      }));
      for (const n of spec.diff.grew)
        check(cs.some((f) => f.text === n && +f.change > 0 && f.r > f.b + 40 &&
                      f.title.includes("change +") && f.w > 1),
              "diff: " + JSON.stringify(n) + " red, its share grew");
      for (const n of spec.diff.shrank)
        check(cs.some((f) => f.text === n && +f.change < 0 && f.b > f.r + 40 &&
                      f.title.includes("change -") && f.w > 1),
              "diff: " + JSON.stringify(n) + " blue, its share shrank");
      check((await page.textContent("#title")).includes("red: a larger share"),
            "diff: the title says what the colours mean");
    }

    // Views: each button, its label and total in the status line.
    const first = Object.keys(spec.views)[0];
    for (const id of Object.keys(spec.views)) {
      const v = spec.views[id];
      await page.click("#view-" + id);
      const s = await status();
      check(s.startsWith(v.label + ": "), "view " + id + ": status " + JSON.stringify(s));
      if (v.total !== null)
        check(s === v.label + ": " + v.total,
              "view " + id + ": total " + v.total + " (page: " + JSON.stringify(s) + ")");
      const f2 = await frames();
      check(f2.length > 1 && f2.some((f) => f.text === "all" && Math.abs(f.w - chartw) < 2),
            "view " + id + ": " + f2.length + " frames, the root full width");
      for (const n of v.names || [])
        check(f2.some((f) => f.text === n), "view " + id + ": shows " + JSON.stringify(n));
    }
    await page.click("#view-" + first);

    // Root children (the samples view, flame orientation: the row just
    // above the root): each name once, one tower per thread's root.
    if (spec.roots) {
      fr = await frames();
      const rtop = parseFloat(fr.find((f) => f.text === "all").top);
      const d1 = Math.max(...fr.map((f) => parseFloat(f.top)).filter((t) => t < rtop));
      const kids = fr.filter((f) => parseFloat(f.top) === d1);
      // As folded prints them: ';', ' ' and newline as '_'.
      // (folded keeps the spaces of pseudo-frames: "(jit compiler)").
      const clean = (n) => n.replace(/[; \n]/g, "_");
      const names = kids.map((f) => clean(f.text));
      const roots = spec.roots.map(clean);
      check(kids.length > 0 && new Set(names).size === names.length &&
            names.every((n) => roots.includes(n)),
            "root children " + JSON.stringify(names) + ": each once, all roots of the folded stacks");
      if (spec.tower) {
        const t = kids.filter((f, i) => names[i] === spec.tower);
        check(t.length === 1 && t[0].w >= spec.tower_share * chartw - 2,
              "one root tower " + JSON.stringify(spec.tower) + " of " + kids.length +
              " root children, " + (t.length ? t[0].w.toFixed(0) : 0) + " of " + chartw +
              " px (its share " + (100 * spec.tower_share).toFixed(2) + "%)");
      }
    }

    // Search: matching frames highlighted, their share of the view.
    await page.fill("#search", spec.search);
    fr = await frames();
    const m = fr.filter((f) => f.cls.split(" ").includes("match"));
    check(m.length > 0 && m.every((f) => f.text.toLowerCase().includes(spec.search.toLowerCase())),
          "search " + JSON.stringify(spec.search) + ": " + m.length + " frames highlighted, all matching");
    check(fr.filter((f) => !f.cls.split(" ").includes("match"))
            .every((f) => !f.text.toLowerCase().includes(spec.search.toLowerCase())),
          "search: every matching frame highlighted");
    const s = await status();
    check(s.includes("(" + spec.share + ")"),
          "search share " + spec.share + " as the folded stacks give (page: " + JSON.stringify(s) + ")");
    await page.fill("#search", "");

    // Zoom: click a frame; it takes the full width, its siblings go.
    if (spec.zoom) {
    fr = await frames();
    const before = fr.length;
    const zh = await page.evaluateHandle((n) => [...document.querySelectorAll(".fr")]
      .find((e) => e.textContent === n && !e.classList.contains("anc")), spec.zoom);
    check(zh.asElement() !== null, "zoom: a frame " + JSON.stringify(spec.zoom) + " to click");
    if (zh.asElement()) await zh.asElement().click();
    const z = (await frames()).filter((f) => f.text === spec.zoom);
    check(z.length > 0 && z.some((f) => Math.abs(f.w - chartw) < 2 && !f.cls.includes("anc")),
          "zoom into " + JSON.stringify(spec.zoom) + ": full width");
    check((await status()).includes("zoomed to " + spec.zoom), "zoom: the status says so");
    const after = (await frames()).length;
    check(after < before, "zoom: " + before + " frames before, " + after + " after");
    await page.click("#reset");
    check((await frames()).length === before, "reset zoom: " + before + " frames again");
    }

    // Orientation: the root at the bottom (flame), then at the top (icicle).
    const root = async () => (await frames()).find((f) => f.text === "all").top;
    const ft = await root();
    await page.click("#orient");
    const it = await root();
    check(ft !== "0px" && it === "0px", "flame root at " + ft + ", icicle root at " + it);

    check(requests.length === 1 && requests[0] === URL,
          "no request but the page's own (" + requests.length + ": " + requests.slice(0, 5).join(" ") + ")");
    check(errors.length === 0, "no console error, page error or dialog" +
          (errors.length ? ": " + errors.join("; ") : ""));
  } finally {
    await browser.close();
  }
  for (const o of oks) console.log("ok: flame page: " + o);
  if (bad.length) {
    for (const b of bad) console.error("FAIL: flame page: " + b);
    process.exit(1);
  }
})().catch((e) => {
  console.error("FAIL: flame page: " + (e && e.stack || e));
  process.exit(1);
});
