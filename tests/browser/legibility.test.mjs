// What a reader sees at 1440 and at 375 px wide, measured on screen:
// heatmap labels drawn at 11 px or more however far a section scales its
// grid down, and the grids without blank bands; the walkthrough's formula
// whole in its box on a phone; the current stage in sight on a phone at
// every step; the masks grid's ✕ at 3:1 or more on its cell in both
// themes; a log-scale chart with one tick per power of ten.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { contrast, startSession } from './harness.mjs';

const WIDTHS = [1440, 375];
const MIN_LABEL_PX = 11;

let session;

before(async () => {
  session = await startSession();
});

after(async () => {
  await session?.close();
});

/** The main page at a width, its sections mounted, scrolled to a section. */
async function openAt(width, hash, query = '') {
  const page = await session.newPage();
  await page.setViewportSize({ width, height: 900 });
  await page.goto(session.url(`index.html${query}#${hash}`));
  await page.waitForSelector('html[data-ready="true"]');
  return page;
}

async function mountSection(page, name) {
  const slot = page.locator(`#${name}-widget`);
  await slot.scrollIntoViewIfNeeded();
  await page.waitForFunction((element) => element.dataset.mounted === 'true', await slot.elementHandle());
}

/**
 * Every heatmap label of a section as drawn: its size on screen (its font
 * size times the grid's scale), its box; and each grid's drawn aspect
 * ratio against its own.
 */
const drawnHeatmaps = (page, section) => page.$$eval(`[data-section="${section}"] svg.aw-heatmap-grid`, (grids) => grids.map((svg) => {
  const rect = svg.getBoundingClientRect();
  const { width, height } = svg.viewBox.baseVal;
  const labels = [...svg.querySelectorAll('.aw-heat-label')].map((text) => {
    const box = text.getBoundingClientRect();
    return {
      text: text.firstChild.textContent,
      px: text.getScreenCTM().a * parseFloat(getComputedStyle(text).fontSize),
      left: box.left, right: box.right, top: box.top,
    };
  });
  return { drawnRatio: rect.height / rect.width, ownRatio: height / width, labels, columns: svg.querySelectorAll('.aw-heat-cell[data-row="0"]').length };
}));

for (const width of WIDTHS) {
  test(`at ${width} px the efficient and scaling heatmaps draw their labels at ${MIN_LABEL_PX} px or more, side by side, with no blank bands`, async () => {
    session.clear();
    const page = await openAt(width, 'efficient');
    for (const section of ['efficient', 'scaling']) {
      await mountSection(page, section);
      // The labels take their size from the grid's scale once it is drawn.
      await page.waitForFunction(({ name, least }) => [...document.querySelectorAll(`[data-section="${name}"] .aw-heat-label`)]
        .every((text) => text.getScreenCTM().a * parseFloat(getComputedStyle(text).fontSize) >= least),
            { name: section, least: MIN_LABEL_PX })
        .catch(() => {}); // the assertions below say what is wrong
      const grids = await drawnHeatmaps(page, section);
      assert.ok(grids.length >= 2, `${section} has its heatmaps`);
      for (const grid of grids) {
        assert.ok(Math.abs(grid.drawnRatio - grid.ownRatio) < 0.01 * grid.ownRatio,
          `${section}: drawn ${grid.drawnRatio.toFixed(3)} high per wide, the grid is ${grid.ownRatio.toFixed(3)}: no letterboxing`);
        for (const label of grid.labels) {
          assert.ok(label.px >= MIN_LABEL_PX, `${section} label ${label.text} is drawn at ${label.px.toFixed(1)} px`);
        }
        // The column labels (all at one height) do not run into each other,
        // and at least every second column has one.
        const top = Math.min(...grid.labels.map((l) => l.top));
        const columns = grid.labels.filter((l) => Math.abs(l.top - top) < 1).sort((a, b) => a.left - b.left);
        assert.ok(columns.length >= grid.columns / 2, `${section}: ${columns.length} column labels for ${grid.columns} columns`);
        columns.slice(1).forEach((label, k) => assert.ok(label.left >= columns[k].right,
          `${section}: ${columns[k].text} (to ${columns[k].right}) and ${label.text} (from ${label.left}) overlap`));
      }
    }
    await page.close();
    session.assertQuiet();
  });
}

for (const width of WIDTHS) {
  test(`at ${width} px Why scale's histogram and gradient chart draw their labels at ${MIN_LABEL_PX} px or more, none overlapping`, async () => {
    session.clear();
    const page = await openAt(width, 'scaling');
    await mountSection(page, 'scaling');
    await page.waitForSelector('[data-section="scaling"] svg.aw-grad-chart .aw-grad-line[points]');
    for (const chart of ['.aw-hist-box svg', 'svg.aw-grad-chart']) {
      const labels = await page.$$eval(`[data-section="scaling"] ${chart} .aw-hist-tick`, (texts) => texts.map((text) => {
        const box = text.getBoundingClientRect();
        const { a, b } = text.getScreenCTM(); // the y axis' title is turned a quarter
        return { text: text.textContent, px: Math.hypot(a, b) * parseFloat(getComputedStyle(text).fontSize),
            left: box.left, right: box.right, top: box.top, bottom: box.bottom };
      }));
      assert.ok(labels.length >= 5, `${chart}: ${labels.length} labels`);
      for (const label of labels) assert.ok(label.px >= MIN_LABEL_PX, `${chart}: ${label.text} drawn at ${label.px.toFixed(1)} px`);
      labels.forEach((a, i) => labels.slice(i + 1).forEach((b) => assert.ok(
        a.right <= b.left || b.right <= a.left || a.bottom <= b.top || b.bottom <= a.top, `${chart}: ${a.text} and ${b.text} overlap`)));
    }
    await page.close();
    session.assertQuiet();
  });
}

for (const width of WIDTHS) {
  test(`at ${width} px the closing summary draws its text at ${MIN_LABEL_PX} px or more, each table whole, `
    + 'the printed misprints at 4.5:1 in both themes', async () => {
    session.clear();
    const page = await openAt(width, 'walkthrough', '?preset=cat-sat-mat&step=9');
    await page.locator('#walkthrough .aw-fig-summary').scrollIntoViewIfNeeded();
    const drawn = await page.$eval('#walkthrough .aw-fig', (figure) => {
      const box = figure.getBoundingClientRect();
      const texts = [...figure.querySelectorAll('*')].filter((node) => node.getClientRects().length > 0
        && [...node.childNodes].some((child) => child.nodeType === Node.TEXT_NODE && child.textContent.trim())
        && !node.closest('.aw-visually-hidden'));
      return {
        small: texts.map((node) => [node.textContent.trim(), parseFloat(getComputedStyle(node).fontSize)])
          .filter(([, px]) => px < 11),
        numbers: figure.querySelectorAll('.aw-fig-summary .aw-num').length,
        tables: [...figure.querySelectorAll('.aw-fig-summary-block')].map((block) => {
          const rect = block.getBoundingClientRect();
          const hidden = block.scrollWidth - block.clientWidth;
          return { hidden, left: rect.left - box.left, right: box.right - rect.right };
        }),
      };
    });
    assert.deepEqual(drawn.small, [], 'text under 11 px');
    assert.equal(drawn.numbers, 3 * 3 + 3 * 4, 'every weight and output has its number');
    for (const table of drawn.tables) {
      assert.ok(table.hidden <= 0 && table.left >= 0 && table.right >= 0, `a table cut off: ${JSON.stringify(table)}`);
    }
    for (const scheme of ['light', 'dark']) {
      await page.emulateMedia({ colorScheme: scheme });
      const colours = await page.$$eval('#walkthrough .aw-fig-printed', (nodes) => nodes.map((node) => [
        getComputedStyle(node).color, getComputedStyle(node.closest('td')).backgroundColor]));
      assert.ok(colours.length > 0, 'the misprints are marked');
      for (const [fg, bg] of colours) assert.ok(contrast(fg, bg) >= 4.5, `${scheme}: ${fg} on ${bg}`);
    }
    await page.close();
    session.assertQuiet();
  });
}

test('at 375 px the walkthrough\u2019s formula fits its box, its last V included', async () => {
  session.clear();
  const page = await openAt(375, 'walkthrough', '?preset=cat-sat-mat');
  const fit = await page.$eval('#walkthrough .aw-step-formula', (box) => {
    const formula = box.querySelector('.katex').getBoundingClientRect();
    const shown = box.getBoundingClientRect();
    return { formula: [formula.left, formula.right], box: [shown.left, shown.right],
        scroll: box.scrollWidth - box.clientWidth };
  });
  assert.ok(fit.formula[0] >= fit.box[0] - 0.5 && fit.formula[1] <= fit.box[1] + 0.5, `formula ${fit.formula} in box ${fit.box}`);
  assert.equal(fit.scroll, 0, 'nothing hidden to scroll to');
  await page.close();
  session.assertQuiet();
});

test('at 375 px the current stage stays in sight at every step, forward and backward passes', async () => {
  session.clear();
  const page = await openAt(375, 'walkthrough', '?preset=cat-sat-mat&backward=1');
  const total = Number((await page.textContent('#walkthrough .aw-counter')).split('/')[1]);
  const seen = [];
  for (let step = 1; step <= total; step++) {
    const where = await page.$eval('#walkthrough .aw-stages-list', (strip) => {
      const current = strip.querySelector('[aria-current="step"]').getBoundingClientRect();
      const shown = strip.getBoundingClientRect();
      return {
        label: strip.querySelector('[aria-current="step"]').textContent,
        inside: current.left >= shown.left && current.right <= shown.right && current.top >= shown.top &&
            current.bottom <= shown.bottom
          && current.left >= 0 && current.right <= window.innerWidth,
      };
    });
    assert.ok(where.inside, `step ${step}: the current stage ${where.label} is out of sight`);
    if (seen.at(-1) !== where.label) seen.push(where.label);
    if (step < total) await page.click('#walkthrough .aw-forward');
  }
  assert.ok(seen.includes('dK'), `went through the backward stages: ${seen}`);
  await page.close();
  session.assertQuiet();
});

for (const scheme of ['dark', 'light']) {
  test(`in ${scheme} mode a masked cell\u2019s \u2715 stands out at 3:1 or more from both stripes of its hatching`, async () => {
    session.clear();
    const page = await openAt(1440, 'masks');
    await page.emulateMedia({ colorScheme: scheme });
    await mountSection(page, 'masks');
    const cell = '[data-section="masks"] .aw-mask-cell.aw-blocked';
    assert.equal(await page.textContent(cell), '\u2715');
    // The stripes' colours as the cell's theme resolves them.
    const colours = await page.$eval(cell, (button) => {
      const probe = (value) => {
        const span = document.createElement('span');
        span.style.backgroundColor = value;
        button.append(span);
        const colour = getComputedStyle(span).backgroundColor;
        span.remove();
        return colour;
      };
      return { mark: getComputedStyle(button).color, stripes: [probe('var(--aw-hatch-a)'), probe('var(--aw-hatch-b)')] };
    });
    for (const stripe of colours.stripes) {
      const ratio = contrast(colours.mark, stripe);
      assert.ok(ratio >= 3, `\u2715 ${colours.mark} on ${stripe}: ${ratio.toFixed(2)}:1`);
    }
    await page.close();
    session.assertQuiet();
  });
}

test('a log-scale chart has one tick at every power of ten its data spans, evenly spaced', async () => {
  session.clear();
  const page = await openAt(1440, 'efficient');
  const ticks = await page.evaluate(async () => {
    const { createLineChart } = await import('./ui/line-chart.js');
    const host = document.createElement('div');
    host.style.width = '420px';
    document.body.prepend(host);
    const chart = createLineChart(host, { title: 'Time', log: true, format: String, x: { label: 'T', doubling: true, from: 1, tick: String, at: String } });
    chart.update([{ label: 'a', points: [[1, 0.000002], [2, 0.0004], [4, 0.03], [8, 0.5]] }], 8);
    const frame = host.querySelector('.aw-chart-frame').getBoundingClientRect();
    return [...host.querySelectorAll('.aw-chart-tick')]
      .map((text) => ({ text: text.textContent, y: text.getBoundingClientRect().top,
          x: text.getBoundingClientRect().right }))
      .filter((tick) => tick.x <= frame.left);
  });
  // The data run from 2·10⁻⁶ to 0.5: the axis from 10⁻⁶ to 1, a tick at each.
  assert.deepEqual(ticks.map((t) => t.text), ['10\u207b\u2076', '10\u207b\u2075', '10\u207b\u2074', '0.001', '0.01', '0.1', '1']);
  const gaps = ticks.slice(1).map((tick, k) => ticks[k].y - tick.y);
  gaps.forEach((gap) => assert.ok(Math.abs(gap - gaps[0]) < 1, `decades ${gaps.map((g) => g.toFixed(1))} apart`));
  await page.close();
  session.assertQuiet();
});
