// The embeds where courses are taught, from the first paste: a Reveal.js
// slide (reveal.js from npm) opened directly at the element's slide,
// reloaded there, reached from the slide before, and scaled to a smaller
// window, and stepped by a presenter's keys before the deck moves on; an
// LMS page whose iframe follows the height messages, sandboxed or not, in
// every layout; the compact layout at 1280 × 720 showing every
// step's payoff with no scrolling; and a notice for an option that is not one.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { cp } from 'node:fs/promises';
import { join } from 'node:path';
import { REPO, startHost, startSession } from './harness.mjs';

let session;
let host;

const deck = (elementScript, attributes = '', size = 'width: 1280, height: 720') => `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Lecture 5</title>
<link rel="stylesheet" href="reveal/reveal.css"><link rel="stylesheet" href="reveal/theme/white.css"></head>
<body><div class="reveal"><div class="slides">
<section><h2>Attention</h2></section>
<section><h3>Step by step</h3>
<attention-walkthrough preset="cat-sat-mat" step="7" layout="compact" controls="player"${attributes}></attention-walkthrough></section>
<section><h2>Questions?</h2></section>
</div></div>
<script src="reveal/reveal.js"></script><script src="${elementScript}"></script>
<script>Reveal.initialize({ hash: true, ${size} });</script></body></html>`;

before(async () => {
  session = await startSession({ viewport: { width: 1280, height: 720 } });
  host = await startHost(session, {
    'deck.html': deck(session.url('dist/attention-walkthrough.js')),
    'deck-keys-off.html': deck(session.url('dist/attention-walkthrough.js'), ' deck-keys="off"'),
    // Reveal's own size, for a deck that names none: 960 × 700.
    'deck-default-size.html': deck(session.url('dist/attention-walkthrough.js'), '', ''),
    'lms.html': `<!doctype html><html lang="en"><title>LMS</title><body style="margin:0">
<script>
  window.heights = {};
  addEventListener('message', (event) => {
    const data = event.data;
    if (!data || data.type !== 'attention-embed:height') return;
    for (const frame of document.querySelectorAll('iframe')) {
      if (frame.contentWindow === event.source) { frame.style.height = data.height + 'px'; window.heights[frame.id] = data.height; }
    }
  });
  const query = new URLSearchParams(location.search);
  const frame = document.createElement('iframe');
  frame.id = 'embed';
  frame.style.cssText = 'display:block;width:100%;height:640px;border:0';
  if (query.has('sandbox')) frame.setAttribute('sandbox', 'allow-scripts');
  frame.src = query.get('src');
  document.body.append(frame);
</script></body></html>`,
  });
  await cp(join(REPO, 'node_modules', 'reveal.js', 'dist'), join(host.dir, 'reveal'), { recursive: true });
});

after(async () => {
  await host?.close();
  await session?.close();
});

/** Where the element and the slide are on screen, once the widget is ready. */
async function elementOnSlide(page) {
  await page.waitForSelector('attention-walkthrough[data-ready="true"]');
  return page.evaluate(() => {
    const element = document.querySelector('attention-walkthrough').getBoundingClientRect();
    const player = document.querySelector('attention-walkthrough').shadowRoot.querySelector('.aw-player-slot').getBoundingClientRect();
    return { top: element.top, bottom: element.bottom, playerTop: player.top, height: innerHeight };
  });
}

const assertOnScreen = (box, how) => {
  assert.ok(box.top >= 0 && box.bottom <= box.height, `${how}: the element spans ${box.top.toFixed(0)} to ${box.bottom.toFixed(0)} px of ${box.height}`);
};

test('on a Reveal.js slide the compact element fits, opened at its slide, reloaded, reached from the slide before, scaled, or on a deck of Reveal\u2019s default size', async () => {
  const page = await session.newPage();
  await page.goto(`${host.url('deck.html')}#/1`);
  assertOnScreen(await elementOnSlide(page), 'opened at its slide');
  await page.reload();
  assertOnScreen(await elementOnSlide(page), 'reloaded');
  await page.goto(`${host.url('deck.html')}#/0`);
  // As a presenter waits for the deck to show: a key before Reveal is ready goes nowhere.
  await page.waitForFunction(() => window.Reveal.isReady());
  await page.keyboard.press('ArrowRight');
  await page.waitForFunction(() => location.hash === '#/1');
  assertOnScreen(await elementOnSlide(page), 'reached from the slide before');
  await page.setViewportSize({ width: 960, height: 540 });
  await page.goto(`${host.url('deck.html')}#/1`);
  await page.reload();
  const scaled = await elementOnSlide(page);
  assertOnScreen(scaled, 'scaled to 960 × 540');
  await page.goto(`${host.url('deck-default-size.html')}#/1`);
  await page.waitForFunction(() => window.Reveal.isReady());
  assertOnScreen(await elementOnSlide(page), 'on a deck of Reveal\u2019s default size, 960 × 700, under its heading');
  // Keys pressed in the widget step it; the deck stays on its slide.
  await page.locator('attention-walkthrough .aw-scrubber').focus();
  await page.keyboard.press('ArrowRight');
  assert.match(await page.locator('attention-walkthrough .aw-counter').textContent(), /^8 \//);
  assert.equal(await page.evaluate(() => location.hash), '#/1');
  await page.close();
  session.assertQuiet();
});

/** The element's step counter ("8 / 9") once it reads step n. */
const counterAt = (page, n) => page.waitForFunction((step) => document.querySelector('attention-walkthrough')
  .shadowRoot.querySelector('.aw-counter').textContent.startsWith(`${step} /`), n);

const atSlide = (page, n) => page.waitForFunction((slide) => window.Reveal.getIndices().h === slide, n);

test('on a Reveal.js slide a presenter\u2019s keys step the walkthrough to its end before the deck moves, '
  + 'and back from the next slide it shows its last step and steps back to its first', async () => {
  const page = await session.newPage();
  await page.goto(`${host.url('deck.html')}#/1`);
  await page.waitForSelector('attention-walkthrough[data-ready="true"]');
  await page.waitForFunction(() => window.Reveal.isReady());
  const total = Number((await page.locator('attention-walkthrough .aw-counter').textContent()).split('/')[1]);
  assert.ok(total > 8, `cat-sat-mat has ${total} steps`);
  // What a clicker and a keyboard send for "next", the page focused, not the widget.
  const next = ['ArrowRight', 'Space', 'PageDown', 'n'];
  for (let step = 8; step <= total; step++) {
    await page.keyboard.press(next[step % next.length]);
    await counterAt(page, step);
    assert.equal(await page.evaluate(() => window.Reveal.getIndices().h), 1, `step ${step} keeps the deck on the slide`);
  }
  await page.keyboard.press('PageDown');
  await atSlide(page, 2);
  await page.keyboard.press('PageUp');
  await atSlide(page, 1);
  await counterAt(page, total);
  const back = ['ArrowLeft', 'p', 'PageUp', 'Shift+Space'];
  for (let step = total - 1; step >= 1; step--) {
    await page.keyboard.press(back[step % back.length]);
    await counterAt(page, step);
  }
  assert.equal(await page.evaluate(() => window.Reveal.getIndices().h), 1);
  await page.keyboard.press('ArrowLeft');
  await atSlide(page, 0);
  await page.close();
  session.assertQuiet();
});

test('with deck-keys="off" the presenter\u2019s keys move the deck at once, and a value that is not on or off gets a notice',
  async () => {
    const page = await session.newPage();
    await page.goto(`${host.url('deck-keys-off.html')}#/1`);
    await page.waitForSelector('attention-walkthrough[data-ready="true"]');
    await page.waitForFunction(() => window.Reveal.isReady());
    await page.keyboard.press('ArrowRight');
    await atSlide(page, 2);
    await page.keyboard.press('ArrowLeft');
    await atSlide(page, 1);
    await counterAt(page, 7);

    await page.setContent(`<script src="${session.url('dist/attention-walkthrough.js')}"></script>
      <attention-walkthrough preset="cat-sat-mat" deck-keys="no"></attention-walkthrough>`);
    await page.waitForSelector('attention-walkthrough[data-ready="true"]');
    assert.match(await page.locator('attention-walkthrough .aw-shell > .aw-message').textContent(),
                 /deck-keys \u201cno\u201d is not one of on, off; the presenter\u2019s keys step the walkthrough\./);
    await page.close();
  });

for (const sandboxed of [false, true]) {
  for (const query of ['widget=walkthrough&preset=cat-sat-mat&step=4', 'widget=walkthrough&preset=cat-sat-mat&step=4&layout=compact&controls=player', 'widget=block']) {
    test(`an LMS iframe${sandboxed ? ' sandboxed with allow-scripts only' : ''} is told its content's height to 2 px: ${query}`, async () => {
      const page = await session.newPage();
      const src = session.url(`embed.html?${query}`);
      await page.goto(`${host.url('lms.html')}?src=${encodeURIComponent(src)}${sandboxed ? '&sandbox' : ''}`);
      const frame = page.frameLocator('#embed');
      await frame.locator('html[data-ready="true"]').waitFor();
      const inner = (await page.$('#embed').then((handle) => handle.contentFrame()));
      await page.waitForFunction(() => window.heights.embed > 0);
      const content = await inner.evaluate(() => document.documentElement.scrollHeight);
      await page.waitForFunction((height) => Math.abs(window.heights.embed - height) <= 2, content);
      const applied = await page.evaluate(() => document.getElementById('embed').getBoundingClientRect().height);
      assert.ok(Math.abs(applied - content) <= 2, `the iframe is ${applied} px, its content ${content} px`);
      const inside = await inner.evaluate(() => {
        const { scrollHeight, clientHeight } = document.documentElement;
        return scrollHeight - clientHeight;
      });
      assert.ok(inside <= 2, `nothing left to scroll inside: ${inside} px`);
      await page.close();
    });
  }
}

test('the compact layout at 1280 × 720 shows each step\u2019s payoff (the sum, the softmax bars, the stacked output, the last of the repeats) with no scrolling', async () => {
  const page = await session.newPage();
  await page.goto(session.url('embed.html?widget=walkthrough&preset=cat-sat-mat&step=1&layout=compact&controls=player'));
  await page.waitForSelector('html[data-ready="true"]');
  const total = Number((await page.textContent('.aw-counter')).split('/')[1]);
  // A figure's total row, or the last line of a step of repeats (the other dot products, rows).
  const payoff = '.aw-visuals .aw-fig-total, .aw-visuals .aw-fig-repeat:last-child > summary';
  let withPayoff = 0;
  for (let step = 1; step <= total; step++) {
    if (step > 1) await page.click('.aw-forward');
    await page.waitForFunction((n) => document.querySelector('.aw-counter').textContent.startsWith(`${n} /`), step);
    const hasPayoff = await page.evaluate((selector) => Boolean(document.querySelector(selector)), payoff);
    if (!hasPayoff) continue;
    withPayoff++;
    await page.waitForFunction((selector) => {
      const pane = document.querySelector('.aw-stage > .aw-visuals').getBoundingClientRect();
      const end = document.querySelector(selector).getBoundingClientRect();
      return end.top >= pane.top && end.bottom <= pane.bottom && end.bottom <= innerHeight;
    }, payoff, { timeout: 5000 }).catch(() => assert.fail(`step ${step}: its payoff is below the fold`));
  }
  assert.ok(withPayoff >= 6, `${withPayoff} steps have a payoff row`);
  await page.close();
});

test('an option that is not one gets a notice naming the right one, in the iframe and on the element', async () => {
  const page = await session.newPage();
  await page.goto(session.url('embed.html?widget=walkthrough&compact=1&Step=3&layout=slide'));
  await page.waitForSelector('html[data-ready="true"]');
  const notice = await page.textContent('#embed > .aw-message');
  assert.match(notice, /\u201ccompact\u201d is not an option; did you mean layout=compact\?/);
  assert.match(notice, /\u201cStep\u201d is not an option; did you mean step=\u2026\?/);
  assert.match(notice, /layout \u201cslide\u201d is not one of full, compact; showing full\./);
  assert.ok(await page.isVisible('#embed > .aw-message'));

  await page.setContent(`<script src="${session.url('dist/attention-walkthrough.js')}"></script>
    <attention-walkthrough preset="cat-sat-mat" dark></attention-walkthrough>`);
  await page.waitForSelector('attention-walkthrough[data-ready="true"]');
  assert.match(await page.locator('attention-walkthrough .aw-shell > .aw-message').textContent(),
               /\u201cdark\u201d is not an option; did you mean theme="dark"\?/);
  await page.close();
});
