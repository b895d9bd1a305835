import { chromium } from 'playwright-core';
import { startServer } from '../scripts/serve.mjs';
import { mkdtemp, writeFile, cp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
const dir = await mkdtemp(join(tmpdir(), 'rv-'));
await cp('node_modules/reveal.js/dist', join(dir, 'reveal'), { recursive: true });
await writeFile(join(dir, 'deck.html'), `<!doctype html><html><head><link rel="stylesheet" href="reveal/reveal.css"><link rel="stylesheet" href="reveal/theme/white.css"></head><body>
<div class="reveal"><div class="slides"><section><h2>Attention</h2></section>
<section><h3>Step by step</h3><attention-walkthrough preset="cat-sat-mat" step="7" layout="compact" controls="player"></attention-walkthrough></section>
<section><h2>End</h2></section></div></div>
<script src="reveal/reveal.js"></script><script src="http://127.0.0.1:8279/dist/attention-walkthrough.js"></script>
<script>window.seen=[["pre", getComputedStyle(document.querySelector("attention-walkthrough").shadowRoot.querySelector(".aw-shell")).minHeight, document.querySelector("attention-walkthrough").getAttribute("layout"), !!document.querySelector("attention-walkthrough").shadowRoot, document.querySelector("attention-walkthrough").getBoundingClientRect().height, !!customElements.get("attention-walkthrough")]];new MutationObserver(()=>{const s=document.querySelectorAll("section")[1];seen.push([s.style.top,s.scrollHeight,document.querySelector("attention-walkthrough").getBoundingClientRect().height, s.className])}).observe(document.querySelectorAll("section")[1],{attributes:true});Reveal.initialize({ hash: true, width: 1280, height: 720 });</script></body></html>`);
const server = await startServer({ root: dir, port: 0, contentSecurityPolicy: null });
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--headless', '--no-sandbox'] });
for (const [w, h] of [[1280, 720], [960, 540]]) {
  const page = await browser.newPage({ viewport: { width: w, height: h } });
  await page.goto(new URL("deck.html#/1", server.url).href, { waitUntil: "domcontentloaded" }); console.log("early", await page.evaluate(() => [document.querySelector("attention-walkthrough").getBoundingClientRect().height, !!document.querySelector("attention-walkthrough").shadowRoot, document.querySelector("section.present")?.style.top]));
  await page.waitForSelector('attention-walkthrough[data-ready="true"]');
  await page.waitForTimeout(1000);
  console.log(w, h, await page.evaluate(() => { const r = document.querySelector('attention-walkthrough').getBoundingClientRect(); const s = document.querySelector('section.present').getBoundingClientRect(); return { el: [r.top, r.bottom], slide: [s.top, s.bottom] }; }));
  console.log(await page.evaluate(() => seen.slice(0, 8)), await page.evaluate(() => [...document.querySelector("attention-walkthrough").shadowRoot.adoptedStyleSheets[0].cssRules].slice(0,6).map(r => r.cssText))); await page.screenshot({ path: `/tmp/hosts-reveal-${w}.png` });
  await page.close();
}
await browser.close(); await server.close();
