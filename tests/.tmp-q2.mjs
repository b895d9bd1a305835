import { chromium } from 'playwright-core';
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--headless', '--no-sandbox'] });
const page = await browser.newPage();
console.log(await page.evaluate(() => ['.a{}:host([layout="compact"]) .aw-shell { min-height: 640px; }', ':host([layout=compact]) .x{color:red}', ':host(.a) .x{color:red}', ':host .x{color:red}'].map(t => { const s = new CSSStyleSheet(); s.replaceSync(t); return [...s.cssRules].map(r => r.cssText); })));
console.log(await page.evaluate(() => document.querySelector('x') , null), await browser.version());
await browser.close();
