// Accessibility, checked by axe-core (from npm) inside the browser on the
// page (wide and phone, light and dark), each view of a walkthrough step,
// every embeddable widget and the custom element: no violations, label-content-name-mismatch (WCAG 2.5.3)
// included. And the numbers in heatmap cells, which
// axe does not read in SVG, at 4.5:1 contrast or more against their cell in
// both themes, highlighted or not.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO, contrast, startHost, startSession } from './harness.mjs';

const axeSource = readFileSync(join(REPO, 'node_modules', 'axe-core', 'axe.min.js'), 'utf8');
const WIDGETS = ['walkthrough', 'plane', 'masks', 'scaling', 'multihead', 'cross-attention', 'alignment', 'efficient', 'online', 'block', 'trainer', 'model'];

let session;
let host;

before(async () => {
  session = await startSession({ reducedMotion: 'reduce' });
  // The element's headings are h3, as on our page: the course page puts it under an h2.
  host = await startHost(session, {
    'element.html': '<!doctype html><html lang="en"><title>A course page</title><main><h1>Week 3</h1><h2>Attention</h2>\n'
      + `<script src="${session.origin}/dist/attention-walkthrough.js"></script>\n`
      + '<attention-walkthrough preset="cat-sat-mat" step="5"></attention-walkthrough></main>\n',
  });
});

after(async () => {
  await session?.close();
  await host?.close();
});

/** axe's violations in the page (or in `include`), as "rule: target" lines. */
async function violations(page, include = null) {
  // Evaluated, not added as a script tag: the page's policy refuses inline scripts.
  await page.evaluate(axeSource);
  const found = await page.evaluate(async (context) => {
    // label-content-name-mismatch (WCAG 2.5.3, label in name: a control's
    // accessible name holds its visible text) is experimental, so off by default.
    const result = await window.axe.run(context ?? document, {
      resultTypes: ['violations'],
      rules: { 'label-content-name-mismatch': { enabled: true } },
    });
    return result.violations.flatMap((v) => v.nodes.map((node) => `${v.id}: ${node.target.join(' ')}`));
  }, include);
  return found;
}

async function newTab({ width, colorScheme }) {
  const page = await session.newPage();
  await page.setViewportSize({ width, height: 900 });
  await page.emulateMedia({ colorScheme, reducedMotion: 'reduce' });
  return page;
}

async function load(page, path) {
  await page.goto(session.url(path));
  await page.waitForSelector('html[data-ready="true"]');
  return page;
}

const openPage = async (path, look) => load(await newTab(look), path);

test('the page has no axe violations at 1440 and 375 px, in the light and the dark theme, every section in view once', async () => {
  // One load for the four looks: loading and mounting every section costs
  // about as much CPU as one axe run of the whole page.
  const page = await openPage('index.html?preset=cat-sat-mat&step=6', { width: 1440, colorScheme: 'light' });
  await session.mountSections(page);
  for (const section of await page.locator('main section').all()) await section.scrollIntoViewIfNeeded();
  const found = {};
  for (const width of [1440, 375]) {
    await page.setViewportSize({ width, height: 900 });
    for (const colorScheme of ['light', 'dark']) {
      await page.emulateMedia({ colorScheme, reducedMotion: 'reduce' });
      found[`${width} px, ${colorScheme}`] = await violations(page);
    }
  }
  assert.deepEqual(found, { '1440 px, light': [], '1440 px, dark': [], '375 px, light': [], '375 px, dark': [] });
  await page.close();
});

test('each view of a walkthrough step (figure, matrices, heatmaps, lines, equations) has no axe violations', async () => {
  const page = await openPage('index.html?preset=cat-sat-mat&step=6', { width: 1440, colorScheme: 'light' });
  for (const tab of await page.locator('#walkthrough [role="tab"]:not([hidden])').all()) {
    await tab.click();
    assert.deepEqual(await violations(page, { include: [['#walkthrough']] }), [], await tab.textContent());
  }
  await page.close();
});

test('every embeddable widget has no axe violations, in the full and the compact layout', async () => {
  // One tab goes from embed to embed, each a fresh load: measured, about
  // 0.4 s of CPU less per embed than a new tab for each.
  const page = await newTab({ width: 1280, colorScheme: 'light' });
  for (const widget of WIDGETS) {
    for (const layout of ['full', 'compact']) {
      await load(page, `embed.html?widget=${widget}&layout=${layout}`);
      assert.deepEqual(await violations(page), [], `${widget}, ${layout}`);
    }
  }
  await page.close();
});

test('the custom element on a course page has no axe violations inside it', async () => {
  const page = await session.newPage();
  await page.goto(host.url('element.html'));
  await page.waitForSelector('attention-walkthrough[data-ready="true"]');
  assert.deepEqual(await violations(page, { include: [['attention-walkthrough']] }), []);
  await page.close();
});

for (const colorScheme of ['light', 'dark']) {
  test(`every number in a heatmap cell stands at 4.5:1 or more against its cell in the ${colorScheme} theme`, async () => {
    // Step 5 highlights one row; causal-scores has masked cells; it-animal spans a wide range.
    for (const query of ['?preset=cat-sat-mat&step=5', '?preset=causal-scores&step=8', '?preset=it-animal&step=9']) {
      const page = await openPage(`index.html${query}`, { width: 1440, colorScheme });
      await page.locator('#walkthrough').getByRole('tab', { name: 'Heatmaps' }).click();
      const cells = await page.$$eval('.aw-heat-cell:not(.aw-heat-future)', (groups) => groups
        .filter((group) => group.querySelector('.aw-heat-value').textContent !== '' && group.checkVisibility())
        .map((group) => {
          const rect = group.querySelector('rect');
          const text = group.querySelector('.aw-heat-value');
          const fill = rect.getAttribute('fill');
          // A masked cell is drawn with a pattern of two greys: take the darker stripe.
          const background = fill.startsWith('url(')
            ? group.ownerSVGElement.querySelector(`${fill.slice(4, -1)} line`).getAttribute('stroke')
            : fill;
          return { background, text: text.getAttribute('fill'), opacity: getComputedStyle(rect).opacity, label: group.getAttribute('aria-label') };
        }));
      assert.ok(cells.length > 0, query);
      for (const cell of cells) {
        assert.equal(cell.opacity, '1', `${cell.label}: drawn at full opacity`);
        const ratio = contrast(cell.text, cell.background);
        assert.ok(ratio >= 4.5, `${query} ${cell.label}: ${cell.text} on ${cell.background} is ${ratio.toFixed(2)}:1`);
      }
      await page.close();
    }
  });
}

test('no console errors and no request leaves the two origins', () => {
  session.assertQuiet();
});
