#!/usr/bin/env node
// Writes the walkthrough's first screen into web/index.html, between its
// FIRST_SCREEN markers, so that the page's first paint shows the default
// example's strip, first step, figure and numbers before any script runs:
// the page (web/dist/page/, after scripts/build-page.mjs) drawn in
// Debian's chromium from the native engine's build of the example
// (web/dist/walkthroughs/, scripts/build-walkthroughs.mjs), its WebAssembly
// engine held back, once at a desktop's width and once at a phone's (CSS
// shows the one that fits: .aw-first-screen[data-width]). app.js mounts the
// live walkthrough over it and swaps it in, in one frame, once its first
// step is drawn (web/first-screen.js hides it first where the address asks
// for another example or step).
//
//   node scripts/build-first-screen.mjs      (after build-walkthroughs and build-page; `make vendor`)

import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import { startServer } from './serve.mjs';

const REPO = fileURLToPath(new URL('../', import.meta.url));
const INDEX = join(REPO, 'web', 'index.html');
const STYLES = join(REPO, 'web', 'dist', 'first-screen.css');
const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', '--no-first-run'];

export const FIRST_SCREEN_START = '<!-- first screen: written by scripts/build-first-screen.mjs -->';
export const FIRST_SCREEN_END = '<!-- /first screen -->';
// The widths drawn, and the CSS width each stands for (style.css).
const WIDTHS = [['wide', { width: 1440, height: 900 }], ['phone', { width: 375, height: 812 }]];

/**
 * The slot's markup as the page draws it from the build, at one viewport,
 * as { markup, styles }: each element's inline style (which the page's
 * Content-Security-Policy refuses in markup) moved to a rule of its own for
 * data-fs="n", and every id suffixed with the width's name, references
 * too, so that the two copies' ids differ from each other and the live
 * walkthrough's.
 */
async function drawn(browser, url, viewport, width) {
  const page = await browser.newPage({ viewport });
  try {
    // The engine never arrives: the page stays on the build's numbers.
    await page.route('**/*.wasm', () => {});
    await page.goto(url);
    await page.waitForSelector('html[data-ready="built"]');
    await page.waitForSelector('#walkthrough-widget .aw-view-figure .aw-fig');
    // Formulas typeset (KaTeX arrives on its own), and no figure moving.
    await page.waitForFunction(() => !document.querySelector('#walkthrough-widget [data-tex]:not(:has(.katex))')
      && document.getAnimations().every((animation) => animation.playState !== 'running'));
    return await page.evaluate(copyOf, width);
  } finally {
    await page.close();
  }
}

// Runs in the page: the copy of #walkthrough-widget's content (see drawn).
function copyOf(width) {
  const slot = document.querySelector('#walkthrough-widget');
  // Form controls keep their state in properties, which markup carries as attributes.
  for (const option of slot.querySelectorAll('option')) option.toggleAttribute('selected', option.selected);
  for (const input of slot.querySelectorAll('input')) {
    if (input.type === 'checkbox' || input.type === 'radio') input.toggleAttribute('checked', input.checked);
    else input.setAttribute('value', input.value);
  }
  const copy = slot.cloneNode(true);
  const suffix = `-fs-${width}`;
  const ids = new Set([...copy.querySelectorAll('[id]')].map((element) => element.id));
  const LISTS = new Set(['for', 'aria-labelledby', 'aria-describedby', 'aria-controls', 'aria-owns', 'headers']);
  const renamed = (text) => text.replace(/url\(#([^)"']+)\)/g, (all, id) => (ids.has(id) ? `url(#${id}${suffix})` : all));
  const styles = [];
  for (const element of copy.querySelectorAll('*')) {
    for (const { name, value } of [...element.attributes]) {
      if (name === 'id') element.id = `${value}${suffix}`;
      else if (LISTS.has(name)) element.setAttribute(name, value.split(/\s+/).map((id) => (ids.has(id) ? `${id}${suffix}` : id)).join(' '));
      else if (name === 'href' && value.startsWith('#') && ids.has(value.slice(1))) element.setAttribute(name, `${value}${suffix}`);
      else if (name !== 'style' && value.includes('url(#')) element.setAttribute(name, renamed(value));
    }
    const style = element.getAttribute('style');
    if (style === null) continue;
    element.removeAttribute('style');
    if (style.trim() === '') continue;
    element.dataset.fs = String(styles.length);
    styles.push(renamed(style));
  }
  return { markup: copy.innerHTML, styles };
}

export async function firstScreen() {
  const server = await startServer({ root: join(REPO, 'web'), port: 0 });
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: ARGS });
  try {
    const url = new URL('index.html', server.url).href;
    const parts = [];
    const rules = [];
    for (const [width, viewport] of WIDTHS) {
      const { markup, styles } = await drawn(browser, url, viewport, width);
      parts.push(`<div class="aw-first-screen" data-width="${width}" inert aria-hidden="true">${markup}</div>`);
      // As inline styles do, these win over the stylesheets' rules.
      styles.forEach((style, n) => rules.push(`.aw-first-screen[data-width="${width}"] [data-fs="${n}"] { ${
        style.split(';').filter((d) => d.trim()).map((d) => `${d.trim()} !important`).join('; ')} }`));
    }
    return { markup: parts.join('\n'), css: `${rules.join('\n')}\n` };
  } finally {
    await browser.close();
    await server.close();
  }
}

/** index.html with its first screen region replaced by `markup`. */
export function withFirstScreen(html, markup) {
  const start = html.indexOf(FIRST_SCREEN_START);
  const end = html.indexOf(FIRST_SCREEN_END);
  if (start < 0 || end < start) throw new Error('web/index.html: the first screen markers are missing');
  return `${html.slice(0, start + FIRST_SCREEN_START.length)}\n${markup}\n${html.slice(end)}`;
}

async function main() {
  const html = await readFile(INDEX, 'utf8');
  // Drawn from a page without the old first screen in it.
  await writeFile(INDEX, withFirstScreen(html, ''));
  try {
    const { markup, css } = await firstScreen();
    await writeFile(INDEX, withFirstScreen(html, markup));
    await mkdir(dirname(STYLES), { recursive: true });
    await writeFile(STYLES, css);
    console.log(`build-first-screen: web/index.html, ${(markup.length / 1024).toFixed(1)} KB of first screen; `
      + 'its styles in web/dist/first-screen.css');
  } catch (error) {
    await writeFile(INDEX, html);
    throw error;
  }
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error) => {
    console.error(error.message);
    process.exitCode = 1;
  });
}
