// Two of the page's figures as a learner meets them, measured through
// tests/engines/drivers.mjs in any of the three engines (bench/page.mjs
// prints them; figures, not a test):
//
//   firstFigure(browser, url) -> { first, bytes }: ms from navigation to
//     the end of the first frame that shows the walkthrough's step figure
//     (FIRST_FIGURE, injected first in the page's <head>), and the bytes
//     transferred by then
//   keyToFrame(browser, runs) -> { median, all }: ms from a real key press
//     in the editor's first Q cell (the keydown event's timeStamp) to the
//     end of the first frame after the page's DOM changed for it, as
//     Interaction to Next Paint measures an interaction: the frame's end is
//     the task a MessageChannel posts from that frame's requestAnimationFrame
//     callback, which runs once the frame is painted

import { INJECTED_PREFIX } from '../tests/engines/drivers.mjs';

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/** A frame's end: the task posted from its requestAnimationFrame callback runs after its paint. */
const FRAME_END = `window.__awAfterFrame = (then) => requestAnimationFrame(() => {
  const channel = new MessageChannel();
  channel.port1.onmessage = () => then(performance.now());
  channel.port2.postMessage(0);
});`;

// The walkthrough's figure is in the page's HTML from the build
// (scripts/build-first-screen.mjs) or drawn by its scripts: either way the
// observer, first in <head>, sees it inserted.
export const FIRST_FIGURE = `${FRAME_END}
new MutationObserver((_, observer) => {
  if (!document.querySelector('#walkthrough .aw-view-figure .aw-fig')) return;
  observer.disconnect();
  window.__awAfterFrame((time) => { window.firstFigure = time; });
}).observe(document, { childList: true, subtree: true });`;

const ready = () => ['true', 'built'].includes(document.documentElement.dataset.ready);

export async function firstFigure(browser, url) {
  await browser.goto(url);
  await browser.waitFor(ready);
  await browser.waitFor(() => window.firstFigure !== undefined);
  return browser.evaluate((injected) => {
    const entries = [...performance.getEntriesByType('navigation'), ...performance.getEntriesByType('resource')]
      .filter((entry) => !new URL(entry.name).pathname.startsWith(injected));
    return { first: window.firstFigure, bytes: entries.reduce((sum, entry) => sum + (entry.transferSize ?? 0), 0) };
  }, INJECTED_PREFIX);
}

const CELL = '#walkthrough .aw-edit .aw-cell-input';

// Arms the measurement of the next key press in the cell: its keydown's
// timeStamp, then the first change the page makes to the walkthrough's DOM,
// then the end of the frame after it.
function arm(cell) {
  const input = document.querySelector(cell);
  input.closest('details').open = true;
  input.focus();
  input.select();
  window.keyToFrame = undefined;
  const walkthrough = document.querySelector('#walkthrough');
  input.addEventListener('keydown', (event) => {
    const start = event.timeStamp;
    const observer = new MutationObserver(() => {
      observer.disconnect();
      window.__awAfterFrame((end) => { window.keyToFrame = end - start; });
    });
    observer.observe(walkthrough, { childList: true, subtree: true, attributes: true, characterData: true });
  }, { once: true, capture: true });
}

/** Medians of `runs` key presses, each a new digit typed over the cell's number. */
export async function keyToFrame(browser, runs) {
  const times = [];
  for (let k = 0; k < runs; k++) {
    await browser.evaluate(arm, CELL);
    await browser.press(String(2 + (k % 7)));
    times.push(await browser.waitFor(() => window.keyToFrame));
  }
  return { median: median(times), all: times };
}
