// Shared helpers for the browser tests: web/ served by scripts/serve.mjs on a
// free port, Debian's chromium driven by playwright-core with a fresh profile,
// and a record of everything a page must not do (console errors, uncaught
// errors, requests to any other origin: those are also aborted, so a test
// never reaches the network).
//
//   const session = await startSession();
//   const page = await session.open('index.html?preset=cat-sat-mat');
//   ...
//   session.assertQuiet();            // no console errors, nothing off origin
//   await session.close();
//
// Never downloads a browser: executablePath is the system chromium.

import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { startServer } from '../../scripts/serve.mjs';

export const REPO = fileURLToPath(new URL('../../', import.meta.url));
export const WEB_ROOT = join(REPO, 'web');
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const CHROMIUM_ARGS = Object.freeze([
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic',
]);

// How long a wait (a selector, a function, an action) may take at most.
export const DEFAULT_WAIT_MS = 180_000;

// URLs a page may use without a request to another origin.
const LOCAL_SCHEMES = ['data:', 'blob:', 'about:'];

/**
 * Starts the static server and the browser. Options: root (default web/),
 * viewport (default 1280 × 900), reducedMotion ('reduce' | 'no-preference').
 * Returns { origin, url(path), newPage(), open(path), openReady(path),
 * mountSections(page), allowOrigin(url), consoleErrors, pageErrors, offOrigin,
 * problems(), assertQuiet(), clear(), close() }.
 */
export async function startSession({ root = WEB_ROOT, viewport = { width: 1280, height: 900 }, reducedMotion } = {}) {
  const server = await startServer({ root, port: 0 });
  const origin = new URL(server.url).origin;
  let profile;
  let context;
  try {
    profile = await mkdtemp(join(tmpdir(), 'aw-chromium-'));
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM_PATH,
      args: [...CHROMIUM_ARGS],
      viewport,
      ...(reducedMotion ? { reducedMotion } : {}),
    });
  } catch (error) {
    await server.close();
    if (profile) await rm(profile, { recursive: true, force: true });
    throw error;
  }

  // Every wait is for what a test asserts (a selector, a state), never for
  // time; its time limit is only a net for a page that never gets there.
  // Playwright's 30 s default was reached on a busy machine (load average 50
  // on two cores: a section mounting, a paste checked key by key), so the net
  // is wide enough for any load a machine survives.
  context.setDefaultTimeout(DEFAULT_WAIT_MS);

  const consoleErrors = [];
  const pageErrors = [];
  const offOrigin = [];
  // Other local servers a test adds (session.allowOrigin), e.g. a host page's.
  const allowed = [origin];
  const watch = (page) => {
    page.on('console', (message) => {
      if (message.type() === 'error') consoleErrors.push(`${page.url()}: ${message.text()}`);
    });
    page.on('pageerror', (error) => pageErrors.push(`${page.url()}: ${error.message}`));
  };
  context.pages().forEach(watch);
  context.on('page', watch);
  const pages = recycler(context, { viewport, watch });
  await context.route('**/*', (route) => {
    const url = route.request().url();
    if (allowed.some((ok) => url.startsWith(`${ok}/`)) || LOCAL_SCHEMES.some((scheme) => url.startsWith(scheme))) {
      return route.continue();
    }
    offOrigin.push(url);
    return route.abort('blockedbyclient');
  });
  // The persistent context opens a blank page, left open for the session:
  // whenever no page is open, Chromium ends the renderer of its window's own
  // UI (--type=renderer --top-chrome-webui) and starts it again for the next
  // page, about 0.7 s of CPU on each page a test opens. Tests open their own.

  const url = (path = '') => new URL(path.replace(/^\//, ''), `${origin}/`).href;
  const session = {
    origin,
    url,
    context,
    consoleErrors,
    pageErrors,
    offOrigin,
    newPage: () => pages.take(),
    /** Lets pages use a second local origin (another test server) too. */
    allowOrigin(other) {
      allowed.push(new URL(other).origin);
    },
    /** A new page at path, loaded (the 'load' event has fired). */
    async open(path = '', { waitUntil = 'load' } = {}) {
      const page = await pages.take();
      const response = await page.goto(url(path), { waitUntil });
      assert.ok(response?.ok(), `GET ${path}: HTTP ${response?.status()}`);
      return page;
    },
    /** open(path), then waits until the page says it is ready (html[data-ready="true"]). */
    async openReady(path) {
      const page = await this.open(path);
      await page.waitForSelector('html[data-ready="true"]');
      return page;
    },
    /**
     * Scrolls through the main page's sections as a reader would, each into
     * view until it is mounted (app.js mounts them as they come near), then
     * back to the top. Other pages are left as they are.
     */
    async mountSections(page) {
      const slots = await page.locator('.page-section .widget-slot').all();
      if (slots.length === 0) return page; // not the main page
      for (const slot of slots) {
        await slot.scrollIntoViewIfNeeded();
        await page.waitForFunction((element) => element.id === 'walkthrough-widget' || element.dataset.mounted === 'true',
                                   await slot.elementHandle());
      }
      await page.waitForSelector('html[data-sections="mounted"]');
      await page.evaluate(() => window.scrollTo(0, 0));
      return page;
    },
    /** Everything recorded so far, one line each. */
    problems() {
      return [
        ...consoleErrors.map((text) => `console error: ${text}`),
        ...pageErrors.map((text) => `uncaught: ${text}`),
        ...offOrigin.map((text) => `request off origin: ${text}`),
      ];
    },
    assertQuiet(message = 'the pages stayed quiet') {
      assert.deepEqual(session.problems(), [], message);
    },
    clear() {
      consoleErrors.length = 0;
      pageErrors.length = 0;
      offOrigin.length = 0;
    },
    async close() {
      try {
        await context.close();
      } finally {
        await server.close();
        await rm(profile, { recursive: true, force: true });
      }
    },
  };
  return session;
}

// Opening a tab costs Chromium and Playwright about a second of CPU, as much
// as loading the page in it, and the browser suite opens hundreds: a page a
// test closes is kept and handed to the next test instead, as a new tab would
// be (about:blank, the session's viewport, no listeners but the session's).
// A page whose test changed what navigating does not undo (an init script, a
// route, an exposed function, emulated media, a DevTools session) is closed.
const CHANGES_THAT_STAY = ['addInitScript', 'route', 'routeFromHAR', 'exposeFunction', 'exposeBinding',
  'setExtraHTTPHeaders', 'emulateMedia'];

function recycler(context, { viewport, watch }) {
  const idle = [];
  const changed = new WeakSet();
  const newCDPSession = context.newCDPSession.bind(context);
  context.newCDPSession = (page, ...rest) => {
    changed.add(page);
    return newCDPSession(page, ...rest);
  };
  async function recycle(page, close) {
    if (changed.has(page) || page.isClosed()) return close();
    try {
      await page.goto('about:blank');
      await page.setViewportSize(viewport);
      page.removeAllListeners();
    } catch {
      return close();
    }
    watch(page);
    idle.push(page);
  }
  function adopt(page) {
    const close = page.close.bind(page);
    for (const name of CHANGES_THAT_STAY) {
      const original = page[name].bind(page);
      page[name] = (...args) => {
        changed.add(page);
        return original(...args);
      };
    }
    page.close = (options) => (options?.runBeforeUnload ? close(options) : recycle(page, close));
    return page;
  }
  return {
    async take() {
      return idle.pop() ?? adopt(await context.newPage());
    },
  };
}

/** A number as the page shows it (U+2212 minus, ∞) as a JS number. */
export const parseShown = (text) => Number(String(text).replace(/\u2212/g, '-').replace('\u221e', 'Infinity'));

/** The exact value in a heatmap cell's label: "… = 2. how", or "… = 0.360
 * (exactly 0.35956972770293577). how" where the page rounded it. */
export function labelValue(label) {
  const match = / = (?:[^(]*\(exactly (\S+?)\)|(\S+?))(?:\. |$)/.exec(label);
  assert.ok(match, `heatmap cell label without a value: ${label}`);
  return parseShown(match[1] ?? match[2]);
}

/** A heatmap's values, row by row, from each cell's label ("… = value. how"). */
export async function heatmapValues(page, figureSelector) {
  // Labels are rewritten when the page is idle after a change: read them once written.
  const figures = await page.locator(figureSelector).elementHandles();
  await page.waitForFunction((elements) => elements.every((figure) => !('labelling' in figure.dataset)), figures);
  const labels = await page.$$eval(`${figureSelector} .aw-heat-cell`, (cells) => cells.map((cell) => [
    Number(cell.dataset.row), Number(cell.dataset.col), cell.getAttribute('aria-label'),
  ]));
  const values = [];
  for (const [i, j, label] of labels) (values[i] ??= [])[j] = labelValue(label);
  return values;
}

/**
 * A second origin for host pages: files ({ name: text }) written to a
 * temporary folder and served on another port, which `session` lets its
 * pages reach. Returns { url(name), dir, write(name, text), close() }.
 */
export async function startHost(session, files = {}) {
  const dir = await mkdtemp(join(tmpdir(), 'aw-host-'));
  for (const [name, text] of Object.entries(files)) await writeFile(join(dir, name), text);
  // A site of its own: it sends its own policy, or here none.
  const server = await startServer({ root: dir, port: 0, contentSecurityPolicy: null });
  session.allowOrigin(server.url);
  return {
    dir,
    url: (name) => new URL(name, server.url).href,
    write: (name, text) => writeFile(join(dir, name), text),
    async close() {
      await server.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

// WCAG contrast of two 'rgb(...)' or '#rrggbb' colours.
export function contrast(a, b) {
  const rgb = (colour) => {
    if (!colour.startsWith('#')) return colour.match(/\d+/g).slice(0, 3).map(Number);
    const hex = colour.length === 4 ? [...colour.slice(1)].map((c) => c + c).join('') : colour.slice(1);
    return [0, 2, 4].map((k) => parseInt(hex.slice(k, k + 2), 16));
  };
  const lum = (colour) => {
    const [r, g, bl] = rgb(colour).map((c) => {
      const x = c / 255;
      return x <= 0.04045 ? x / 12.92 : ((x + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * bl;
  };
  const [hi, lo] = [lum(a), lum(b)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
}
