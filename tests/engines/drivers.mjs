// One small interface over the three browser engines a learner may use, for
// the cross-engine suite (tests/engines/) and the page's figures in
// bench/page.mjs: Debian's chromium through playwright-core, Firefox ESR
// through puppeteer-core over WebDriver BiDi, and WebKitGTK (MiniBrowser,
// Safari's engine) through webdriverio over classic WebDriver to
// WebKitWebDriver, on a virtual display (Xvfb) when there is none. Never
// downloads a browser: each is the system's.
//
//   const web = await serveWeb();              // web/, with problems.js first in each page
//   const browser = await launch('webkit');
//   await browser.goto(web.url('index.html'));
//   await browser.waitFor(() => document.documentElement.dataset.ready === 'true');
//   await browser.click('#walkthrough button[aria-label="Step forward"]');
//   await browser.press('ArrowRight');
//   await browser.text('#walkthrough .aw-counter');
//   await browser.evaluate((selector) => ..., selector);   // one argument, as JSON
//   await browser.problems();                  // console errors, uncaught errors, ... since the last call
//   await browser.close(); await web.close();

import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { createServer, request as httpRequest } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import { gunzipSync, gzipSync } from 'node:zlib';
import { chromium } from 'playwright-core';
import puppeteer from 'puppeteer-core';
import { Key, remote } from 'webdriverio';
import { startServer } from '../../scripts/serve.mjs';
import { CHROMIUM_ARGS, CHROMIUM_PATH, WEB_ROOT } from '../browser/harness.mjs';

// Where the injected scripts are served (bench/page.mjs leaves them out of the page's bytes).
export const INJECTED_PREFIX = '/__aw-engines/';
export const ENGINES = Object.freeze(['chromium', 'firefox', 'webkit']);
export const FIREFOX_PATH = process.env.FIREFOX_PATH ?? '/usr/bin/firefox-esr';
export const WEBKIT_DRIVER = process.env.WEBKIT_DRIVER ?? '/usr/bin/WebKitWebDriver';
// libwebkit2gtk-4.1-0's browser for automation (WebKitWebDriver starts it).
export const MINIBROWSER_PATH = process.env.MINIBROWSER_PATH ?? '/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser';
const WAIT_MS = 60_000;
const POLL_MS = 50;
const PROBLEMS_PATH = `${INJECTED_PREFIX}problems.js`;

/**
 * web/ (or root) served by scripts/serve.mjs behind a small proxy that puts
 * problems.js, then each of `inject` (script texts), first in every HTML
 * page's <head>: as files of the same origin, which the page's policy allows.
 * Returns { url(path), close() }.
 */
export async function serveWeb({ root = WEB_ROOT, inject = [] } = {}) {
  const scripts = [await readFile(new URL('./problems.js', import.meta.url), 'utf8'), ...inject];
  const paths = scripts.map((_, k) => (k === 0 ? PROBLEMS_PATH : `${INJECTED_PREFIX}inject-${k}.js`));
  const tags = paths.map((path) => `<script src="${path}"></script>`).join('');
  const files = new Map(paths.map((path, k) => [path, scripts[k]]));
  const upstream = await startServer({ root, port: 0 });
  const proxy = createServer((request, response) => {
    const path = new URL(request.url, 'http://localhost').pathname;
    if (files.has(path)) {
      response.writeHead(200, { 'Content-Type': 'text/javascript; charset=utf-8', 'Cache-Control': 'no-store' });
      response.end(files.get(path));
      return;
    }
    // Everything as the server sent it (gzipped too: bench/page.mjs counts
    // the bytes), but HTML with the scripts first in its <head>.
    const forward = httpRequest(new URL(request.url, upstream.url),
        { method: request.method, headers: request.headers }, async (answer) => {
      const html = (answer.headers['content-type'] ?? '').startsWith('text/html');
      if (!html) {
        response.writeHead(answer.statusCode, answer.headers);
        answer.pipe(response);
        return;
      }
      const chunks = [];
      for await (const chunk of answer) chunks.push(chunk);
      const gzipped = answer.headers['content-encoding'] === 'gzip';
      const raw = Buffer.concat(chunks);
      const text = String(gzipped ? gunzipSync(raw) : raw).replace(/<head[^>]*>/i, (head) => head + tags);
      const body = gzipped ? gzipSync(text) : Buffer.from(text);
      response.writeHead(answer.statusCode, { ...answer.headers, 'content-length': body.length });
      response.end(request.method === 'HEAD' ? undefined : body);
    });
    forward.on('error', (error) => {
      response.writeHead(502, { 'Content-Type': 'text/plain; charset=utf-8' });
      response.end(`proxy: ${error.message}\n`);
    });
    request.pipe(forward);
  });
  await new Promise((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${proxy.address().port}/`;
  return {
    url: (path = '') => new URL(path.replace(/^\//, ''), origin).href,
    async close() {
      proxy.closeAllConnections();
      await new Promise((resolve) => proxy.close(resolve));
      await upstream.close();
    },
  };
}

/** Launches engine ('chromium' | 'firefox' | 'webkit') with a page of viewport's size. */
export async function launch(engine, { viewport = { width: 1280, height: 900 } } = {}) {
  const launchers = { chromium: launchChromium, firefox: launchFirefox, webkit: launchWebKit };
  if (!launchers[engine]) throw new Error(`unknown engine ${engine}: one of ${ENGINES.join(', ')}`);
  const driver = await launchers[engine](viewport);
  const recorded = [];
  // The page keeps its own record (problems.js); it goes with the page, so
  // it is read before every navigation.
  const harvest = async () => {
    const own = await driver.evaluate(() => (window.__awProblems ?? []).splice(0)).catch(() => []);
    recorded.push(...own);
  };
  return {
    engine,
    version: driver.version,
    async goto(url) {
      await harvest();
      // A fresh load even when only the #fragment differs.
      await driver.goto('about:blank');
      await driver.goto(url);
    },
    click: (selector) => driver.click(selector),
    /** A key by its KeyboardEvent.key name (ArrowRight, Home, End, Enter). */
    press: (key) => driver.press(key),
    text: (selector) => driver.evaluate((s) => document.querySelector(s)?.textContent ?? null, selector),
    evaluate: (fn, arg) => driver.evaluate(fn, arg),
    /** Resolves with fn(arg)'s first truthy value in the page, polled; throws after timeout ms. */
    async waitFor(fn, arg, { timeout = WAIT_MS, what = String(fn) } = {}) {
      const end = Date.now() + timeout;
      for (;;) {
        const value = await driver.evaluate(fn, arg);
        if (value) return value;
        if (Date.now() > end) throw new Error(`${engine}: waited ${timeout} ms for ${what}`);
        await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      }
    },
    /** Everything recorded since the last call, one line each (the driver's console and the page's own record). */
    async problems() {
      await harvest();
      return [...driver.problems.splice(0), ...recorded.splice(0)];
    },
    close: () => driver.close(),
  };
}

// Playwright's and puppeteer's pages answer the same calls: one adapter.
function pageAdapter(browser, page, version) {
  const problems = [];
  page.on('console', (message) => { if (message.type() === 'error') problems.push(`console error: ${message.text()}`); });
  page.on('pageerror', (error) => problems.push(`uncaught: ${error.message}`));
  return {
    version,
    problems,
    goto: (url) => page.goto(url, { waitUntil: 'load' }),
    click: (selector) => page.click(selector),
    press: (key) => page.keyboard.press(key),
    evaluate: (fn, arg) => page.evaluate(fn, arg),
    close: () => browser.close(),
  };
}

async function launchChromium(viewport) {
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: [...CHROMIUM_ARGS] });
  return pageAdapter(browser, await browser.newPage({ viewport }), `Chromium ${browser.version()}`);
}

async function launchFirefox(viewport) {
  const browser = await puppeteer.launch({
    browser: 'firefox', executablePath: FIREFOX_PATH, protocol: 'webDriverBiDi', headless: true,
  });
  try {
    const page = await browser.newPage();
    // puppeteer sends a screen orientation with the viewport, a command
    // Firefox has only since 141: Debian 12's ESR (140) refuses it, having
    // set the viewport itself.
    await page.setViewport(viewport).catch((error) => {
      if (!/setScreenOrientationOverride/.test(error.message)) throw error;
    });
    const width = await page.evaluate(() => window.innerWidth);
    if (width !== viewport.width) throw new Error(`Firefox's viewport is ${width} px wide, not ${viewport.width}`);
    return pageAdapter(browser, page, `Firefox ${(await browser.version()).split('/')[1]}`);
  } catch (error) {
    // A browser left open keeps the test file's process, and the suite, from ending.
    await browser.close();
    throw error;
  }
}

/** A TCP port that was free a moment ago (WebKitWebDriver takes a port number, not 0). */
async function freePort() {
  const server = createNetServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A virtual display of its own (Xvfb picks a free number and writes it to fd 3). */
async function startXvfb() {
  const xvfb = spawn('Xvfb', ['-displayfd', '3', '-nolisten', 'tcp', '-screen', '0', '1920x1200x24'],
                     { stdio: ['ignore', 'ignore', 'pipe', 'pipe'] });
  let stderr = '';
  xvfb.stderr.on('data', (chunk) => { stderr += chunk; });
  const display = await new Promise((resolve, reject) => {
    xvfb.stdio[3].once('data', (chunk) => resolve(`:${String(chunk).trim()}`));
    xvfb.once('error', (error) => reject(new Error(`Xvfb: ${error.message} (apt-get install xvfb)`)));
    xvfb.once('exit', (code) => reject(new Error(`Xvfb exited with ${code}: ${stderr}`)));
  });
  return { display, process: xvfb };
}

async function launchWebKit(viewport) {
  const children = [];
  const stopChildren = () => { for (const child of children.reverse()) child.kill(); };
  // Killed with the test process, whatever ends it.
  process.once('exit', stopChildren);
  try {
    let display = process.env.DISPLAY;
    if (!display) {
      const xvfb = await startXvfb();
      children.push(xvfb.process);
      display = xvfb.display;
    }
    const port = await freePort();
    const driverProcess = spawn(WEBKIT_DRIVER, [`--port=${port}`], { env: { ...process.env, DISPLAY: display }, stdio: 'ignore' });
    children.push(driverProcess);
    await new Promise((resolve, reject) => {
      driverProcess.once('spawn', resolve);
      driverProcess.once('error', (error) => reject(new Error(`${WEBKIT_DRIVER}: ${error.message} (apt-get install webkit2gtk-driver)`)));
    });
    const browser = await remote({
      hostname: '127.0.0.1',
      port,
      logLevel: 'error',
      connectionRetryCount: 20,
      capabilities: {
        browserName: 'MiniBrowser',
        // Debian's WebKitWebDriver speaks classic WebDriver only.
        'wdio:enforceWebDriverClassic': true,
        'webkitgtk:browserOptions': { binary: MINIBROWSER_PATH, args: ['--automation'] },
      },
    });
    // The window's size is the outer one: add what its frame takes.
    await browser.setWindowSize(viewport.width, viewport.height);
    const [width, height] = await browser.execute(() => [window.innerWidth, window.innerHeight]);
    await browser.setWindowSize(2 * viewport.width - width, 2 * viewport.height - height);
    return {
      version: `WebKitGTK ${browser.capabilities.browserVersion}`,
      // Classic WebDriver reads no console: the page's own record is all there is.
      problems: [],
      goto: (url) => browser.url(url),
      click: async (selector) => (await browser.$(selector)).click(),
      press: (key) => browser.keys(Key[key] ?? key),
      evaluate: (fn, arg) => browser.execute(fn, arg),
      async close() {
        try {
          await browser.deleteSession();
        } finally {
          stopChildren();
          process.off('exit', stopChildren);
        }
      },
    };
  } catch (error) {
    stopChildren();
    process.off('exit', stopChildren);
    throw error;
  }
}
