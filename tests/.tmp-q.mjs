import { chromium } from 'playwright-core';
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--headless', '--no-sandbox'] });
const page = await browser.newPage();
await page.setContent(`<script src="http://127.0.0.1:8279/dist/attention-walkthrough.js"></script><attention-walkthrough layout="compact"></attention-walkthrough>`);
console.log(await page.evaluate(() => {
  const el = document.querySelector('attention-walkthrough');
  const all = [...el.shadowRoot.adoptedStyleSheets[0].cssRules]; const i = all.findIndex(r => r.cssText.includes('640px')); const rules = all.filter(r => r.cssText.includes(':host')).map(r => r.cssText.slice(0, 120));
  return { rules, min: getComputedStyle(el.shadowRoot.querySelector('.aw-shell')).minHeight, h: el.getBoundingClientRect().height };
}));
await browser.close();
