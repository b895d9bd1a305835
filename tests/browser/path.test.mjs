// The page as a path of chapters: every address ending in #id and every link
// to a chapter lands on its heading, on a fresh load and after scrolling
// elsewhere, wide (1440 × 900, Chrome's scroll anchoring on) and on a phone
// (375 × 812, scroll anchoring off, as in WebKit, which has none); the path
// bar marks the chapter being read; each chapter has its question, two or
// three "Try this" prompts and a next link that lands.
//
// "Lands" means: once the sections above it have mounted (html[data-landed]),
// the chapter's heading is where the page puts headings, its section's
// scroll-margin-top below the top of the view.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startSession } from './harness.mjs';

const CHAPTERS = ['walkthrough', 'plane', 'scaling', 'masks', 'multihead', 'cross-attention', 'alignment', 'block', 'efficient', 'online', 'trainer', 'model'];
const VIEWS = [
  { width: 1440, height: 900, anchoring: true },
  { width: 375, height: 812, anchoring: false },
];
// Mounting every section above the last chapter takes a while on a busy machine.
const LANDING = { timeout: 90_000 };

let session;

before(async () => {
  session = await startSession({ reducedMotion: 'reduce' });
});

after(async () => {
  await session?.close();
});

async function openAt(path, { width, height, anchoring }) {
  const page = await session.newPage();
  await page.setViewportSize({ width, height });
  // WebKit has no scroll anchoring: nothing but the page holds a target in place.
  if (!anchoring) {
    await page.addInitScript(() => document.addEventListener('DOMContentLoaded', () => {
      document.documentElement.style.overflowAnchor = 'none';
    }));
  }
  await page.goto(session.url(path));
  return page;
}

/** How far the chapter's heading is from where the page puts headings, in px. */
const offPlace = (page, id) => page.evaluate((chapter) => {
  const section = document.getElementById(chapter);
  const heading = document.getElementById(`${chapter}-title`);
  return heading.getBoundingClientRect().top - Number.parseFloat(getComputedStyle(section).scrollMarginTop);
}, id);

async function assertLanded(page, id, how) {
  await page.waitForSelector(`html[data-landed="${id}"]`, LANDING);
  const off = await offPlace(page, id);
  assert.ok(Math.abs(off) <= 3, `${how}: the heading of ${id} is ${off.toFixed(1)} px from its place`);
}

const current = (page) => page.$$eval('.path-bar a[aria-current="true"]', (links) => links.map((link) => link.getAttribute('href')));

/**
 * The bar marks chapter id, and only it. The mark follows the page's
 * IntersectionObserver, which may report a frame after the landing: wait for
 * it (on a busy machine, reading at once had found the chapter before).
 */
async function assertMarked(page, id, message) {
  await page.waitForSelector(`.path-bar a[href="#${id}"][aria-current="true"]`, LANDING);
  assert.deepEqual(await current(page), [`#${id}`], message);
}

for (const view of VIEWS) {
  test(`at ${view.width} px every #id address lands on its chapter's heading on a fresh load`, async () => {
    session.clear();
    for (const id of CHAPTERS) {
      const page = await openAt(`index.html#${id}`, view);
      await assertLanded(page, id, `index.html#${id}`);
      await assertMarked(page, id, `the path bar marks ${id}`);
      await page.close();
    }
    session.assertQuiet();
  });
}

for (const view of VIEWS) {
  test(`at ${view.width} px each contents link lands on its chapter, clicked from the top of the page after reading elsewhere`, async () => {
    const page = await openAt('index.html', view);
    await page.waitForSelector('html[data-ready="true"]');
    // Far chapters first: each click then has unmounted sections above its target.
    for (const id of [...CHAPTERS].reverse()) {
      await page.keyboard.press('Home');
      await page.waitForFunction(() => window.scrollY === 0);
      await page.click(`.page-nav a[href="#${id}"]`);
      await assertLanded(page, id, `the contents link to ${id}`);
    }
    await page.close();
  });
}

test('at 375 px, with no scroll anchoring, each chapter in the path bar lands after scrolling elsewhere, and the bar marks it', async () => {
  const view = VIEWS[1];
  const page = await openAt('index.html', view);
  await page.waitForSelector('html[data-ready="true"]');
  for (const id of ['trainer', 'model', 'plane', 'online', 'masks', 'block', 'walkthrough', 'efficient', 'scaling', 'alignment', 'multihead', 'cross-attention']) {
    await page.mouse.wheel(0, 1500);
    await page.click(`.path-bar a[href="#${id}"]`);
    await assertLanded(page, id, `the path bar's link to ${id}`);
    await assertMarked(page, id);
  }
  // The bar stays one line, below everything else on the page.
  const bar = await page.$eval('.path-bar', (nav) => {
    const box = nav.getBoundingClientRect();
    const tops = new Set([...nav.querySelectorAll('a')].map((a) => Math.round(a.getBoundingClientRect().top)));
    return { top: box.top, bottom: box.bottom, height: box.height, lines: tops.size };
  });
  assert.equal(bar.lines, 1, 'the path bar is one line');
  assert.ok(bar.height <= 48 && Math.abs(bar.bottom - view.height) < 1, `the path bar is ${bar.height} px tall at ${bar.top}`);
  await page.close();
});

test('the path bar marks the chapter being read as the reader scrolls with the wheel', async () => {
  const page = await openAt('index.html#masks', VIEWS[0]);
  await assertLanded(page, 'masks', 'index.html#masks');
  await assertMarked(page, 'masks');
  // Scroll until the next chapter's heading is near the top: it is the one being read.
  const distance = await page.$eval('#multihead', (section) => section.getBoundingClientRect().top - 40);
  await page.mouse.wheel(0, distance);
  await page.waitForFunction(() => document.querySelector('.path-bar a[aria-current="true"]')?.getAttribute('href') === '#multihead');
  // And back up into the masks chapter.
  await page.mouse.wheel(0, -distance / 2);
  await page.waitForFunction(() => document.querySelector('.path-bar a[aria-current="true"]')?.getAttribute('href') === '#masks');
  await page.close();
});

test('every chapter has its number, one heading, its question, two or three Try-this prompts and a next link that lands', async () => {
  const page = await openAt('index.html', VIEWS[0]);
  await page.waitForSelector('html[data-ready="true"]');
  const chapters = await page.$$eval('main > section', (sections) => sections.map((section) => ({
    id: section.id,
    headings: [...section.querySelectorAll('h2')].map((h) => h.textContent.replace(/\s+/g, ' ').trim()),
    question: section.querySelector(':scope > .chapter-question')?.textContent.trim() ?? '',
    prompts: section.querySelectorAll(':scope > .try-this li').length,
    next: section.querySelector(':scope > .chapter-next a')?.getAttribute('href'),
  })));
  assert.deepEqual(chapters.map((chapter) => chapter.id), CHAPTERS, 'the chapters in teaching order');
  chapters.forEach((chapter, i) => {
    assert.equal(chapter.headings.length, 1, `${chapter.id} has one h2`);
    assert.match(chapter.headings[0], new RegExp(`^Chapter ${i + 1} of ${CHAPTERS.length} \\S`), `${chapter.id}'s heading`);
    assert.match(chapter.question, /\?$/, `${chapter.id} asks its question`);
    assert.ok(chapter.prompts >= 2 && chapter.prompts <= 3, `${chapter.id} has ${chapter.prompts} prompts`);
    assert.equal(chapter.next, `#${CHAPTERS[(i + 1) % CHAPTERS.length]}`, `${chapter.id}'s next link`);
  });
  // Follow the path from the first chapter to the last, one next link at a time.
  for (const [i, id] of CHAPTERS.slice(0, -1).entries()) {
    await page.click(`#${id} > .chapter-next a`);
    await assertLanded(page, CHAPTERS[i + 1], `${id}'s next link`);
  }
  // Mounted on the page, a section's widget has no title of its own: the chapter's heading names it.
  assert.equal(await page.locator('main .aw-section-title').count(), 0);
  assert.equal(await page.$eval('#plane [data-section="plane"]', (root) => root.getAttribute('aria-labelledby')), 'plane-title');
  await page.close();
});
