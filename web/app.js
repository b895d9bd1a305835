// The page's entry: loads the engine once, mounts the widgets into their
// sections and keeps the address in step with what the learner sees, so a
// link reproduces the view: ?preset=ID&step=N (N counts from 1, as on
// screen), view=NAME when a view other than the figure is chosen
// (matrices, heatmaps, lines, equations), exercises=on while Your turn is on
// and, after edits, v=<the edited inputs as compact JSON>; once the
// trainer's settings change, trainer=<its settings as JSON> (the run is
// reproducible from its seed).

import { WASM_OFF_MESSAGE, loadAttention, wasmSupport } from './lib/attention.js';
import { pageEngineUrl } from './lib/engine-file.js';
import { inlinedFile } from './lib/inlined-file.js';
import { loadWidget, mountWidget, stepFromText } from './widgets/registry.js';
import { BUILT_OFFLINE, createBuiltEngine, holdControls, loadBuilt } from './widgets/walkthrough-built.js';
import { walkthroughPresets } from './widgets/walkthrough-problem.js';
import { isMultiHeadPreset } from './presets.js';
import { followPath } from './path.js';

// Each section widget mounts into the element with id `${id}-widget`, under
// the heading `${id}-title`; the chapters' order is index.html's.
const SECTIONS = [...document.querySelectorAll('main > .page-section')].map((section) => section.id).filter((id) => id !== 'walkthrough');

const PRESETS_URL = new URL('./presets.json', import.meta.url);
// The engine without the trainer (build.sh), its scalar build where WebAssembly
// SIMD is missing: the trainer's worker loads the whole one.
const PAGE_ENGINE = pageEngineUrl();
// The one-file build (scripts/build-single.mjs) inlines the engine and presets here.
const inlined = globalThis.attentionSingleFile;

function readUrlState(location) {
  const params = new URLSearchParams(location.search);
  const state = {};
  if (params.has('preset')) state.preset = params.get('preset');
  if (params.has('step')) state.step = stepFromText(params.get('step'));
  if (params.get('backward') === '1') state.backward = true;
  if (params.has('view')) state.view = params.get('view');
  if (params.get('exercises') === 'on') state.turn = true;
  if (params.has('trainer')) {
    try {
      trainerState = JSON.parse(params.get('trainer'));
    } catch {
      trainerState = null; // the trainer starts from its defaults
    }
  }
  if (params.has('check')) {
    try {
      state.check = JSON.parse(params.get('check'));
    } catch {
      // an unreadable address starts without numbers to check
    }
  }
  if (params.has('v')) {
    try {
      state.values = JSON.parse(params.get('v'));
    } catch {
      state.values = 'unreadable';
    }
  }
  return state;
}

// Edited values can make an address of many KB, and replacing one that long
// takes chromium ~10 ms: an edit's address is written when the page is idle,
// after its frame. Anything else (a step, a preset) is written at once, with
// the values it carries. (Safari has no requestIdleCallback.)
const whenIdle = globalThis.requestIdleCallback ?? ((callback) => setTimeout(callback, 50));
const cancelIdle = globalThis.cancelIdleCallback ?? clearTimeout;
let lastValues;
let pendingWrite = 0;
// The trainer's settings, once the address names them.
let trainerState = null;

function writeUrlState(state) {
  const values = state.values ? JSON.stringify(state.values) : undefined;
  const edited = values !== lastValues;
  lastValues = values;
  if (pendingWrite) cancelIdle(pendingWrite);
  pendingWrite = edited ? whenIdle(() => { pendingWrite = 0; replaceUrl(state); }, { timeout: 500 }) : 0;
  if (!edited) replaceUrl(state);
}

// Chapter 1's "Try this" speaks of the default example with its own
// numbers; on another example, or the learner's own numbers, it says so
// instead.
function followTryThis(state, defaultPreset) {
  const tryThis = document.querySelector('#walkthrough .try-this');
  const elsewhere = state.preset !== defaultPreset || Boolean(state.values);
  tryThis.querySelector('ul').hidden = elsewhere;
  tryThis.querySelector('.try-this-elsewhere').hidden = !elsewhere;
}

function replaceUrl(state) {
  const params = new URLSearchParams();
  params.set('preset', state.preset);
  params.set('step', String(state.step + 1));
  if (state.values) params.set('v', JSON.stringify(state.values));
  if (state.view) params.set('view', state.view);
  if (state.backward) params.set('backward', '1');
  if (state.turn) params.set('exercises', 'on');
  if (state.check) params.set('check', JSON.stringify(state.check));
  if (trainerState) params.set('trainer', JSON.stringify(trainerState));
  const url = `${window.location.pathname}?${params.toString()}${window.location.hash}`;
  if (url === `${window.location.pathname}${window.location.search}${window.location.hash}`) return;
  try {
    window.history.replaceState(null, '', url);
  } catch {
    // A document without an address of its own (an iframe's srcdoc, origin
    // "null") cannot change it; the page works without.
  }
}

// The one-file page carries the SIMD engine only (its size budget); the
// served page has a build without SIMD too.
const SINGLE_FILE_NEEDS_SIMD = 'This one-file copy of the page needs a browser with WebAssembly SIMD (Safari 16.4 '
  + 'or later, any current Chrome, Edge or Firefox); this one has WebAssembly without it. The page served from '
  + 'its folder (./run.sh) works here too, a little slower.';

// Where the walkthrough shows the build's numbers (walkthrough-built.js):
// what its controls that need the engine say, and the page around it.
const BUILT_LOADING = 'This works once the engine has loaded, in a moment.';
const BUILT_OFFLINE_NOTE = 'WebAssembly is turned off in this browser, so the engine cannot run here: every example '
  + 'below reads step by step with the numbers it computed when the page was built. Changing them needs WebAssembly.';
const SECTION_OFFLINE = 'This browser has WebAssembly turned off, and this chapter computes its figures as you use '
  + 'it, so they cannot run here; the chapter\u2019s question and its \u201cTry this\u201d still read, and the '
  + 'walkthrough of chapter 1 shows every example with the numbers computed when the page was built. With '
  + 'WebAssembly on, or in another browser, everything works.';

function builtNote(text) {
  const p = document.createElement('p');
  p.className = 'aw-message aw-built-note';
  p.setAttribute('role', 'note');
  p.textContent = text;
  return p;
}

function showFailure(element, text) {
  const p = document.createElement('p');
  p.className = 'aw-message aw-failure';
  p.setAttribute('role', 'alert');
  p.textContent = text;
  element.replaceChildren(p);
}

async function loadPresets() {
  if (inlined) return inlinedFile(inlined.presetsGzip).json();
  const response = await fetch(PRESETS_URL);
  if (!response.ok) throw new Error(`presets.json: HTTP ${response.status}`);
  return response.json();
}

const nextFrame = () => new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));
const nextTask = () => new Promise((resolve) => setTimeout(resolve, 0));

function sectionSlots() {
  return SECTIONS
    .map((id) => [id, document.getElementById(`${id}-widget`)])
    .filter(([, element]) => element);
}

// Resolves, once the engine is in and the walkthrough mounted, with the
// function that mounts a section and the widgets mounted (start() below).
let engineReady;
const started = new Promise((resolve) => { engineReady = resolve; });
// The sections are mounted one at a time, each in a task of its own.
let queue = Promise.resolve();

/**
 * Mounts every section down to id (the ones above it first), once the engine
 * is in; resolves once each is drawn. A section whose first drawing waits for
 * a worker or a download (the trainer, the model: their widget's `drawn`)
 * grows after its mount, and a landing below it is complete only after that.
 */
async function mountThrough(id) {
  const { mountSection, widgets } = await started;
  const slots = sectionSlots();
  const through = slots.findIndex(([slotId]) => slotId === id);
  const sections = slots.slice(0, through + 1);
  for (const [slotId, element] of sections) {
    queue = queue.then(() => mountSection(slotId, element));
  }
  await queue;
  await Promise.all(sections.map(([slotId]) => widgets[slotId]?.drawn));
}

// Links land from the first moment: the address's #id before the engine is in.
const path = followPath({
  chapters: [...document.querySelectorAll('main > .page-section')],
  bar: document.querySelector('.path-bar'),
  mountThrough,
});

/**
 * The walkthrough's engine until the WebAssembly one is in: the examples as
 * the native engine wrote them when the page was built
 * (widgets/walkthrough-built.js), every example where WebAssembly is off,
 * else the one the first screen shows when the address asks for an
 * example's own numbers. null where the walkthrough waits for the engine:
 * the one-file page (its engine is inline, and the build's files are not),
 * an address with edits or the backward pass, or a build without the files.
 */
async function builtEngine(presets, initial, offline) {
  const asksForOwn = !initial.values && !initial.backward && !initial.check;
  if (inlined || !(offline || asksForOwn)) return null;
  const examples = walkthroughPresets(presets).map((preset) => preset.id);
  const shown = examples.includes(initial.preset) ? initial.preset : presets.default;
  try {
    return createBuiltEngine(await loadBuilt(offline ? examples : [shown]), offline ? BUILT_OFFLINE : BUILT_LOADING);
  } catch {
    return null; // the walkthrough waits for the engine
  }
}

async function start() {
  const slot = document.getElementById('walkthrough-widget');
  const others = () => sectionSlots().map(([, other]) => other);
  // Where WebAssembly is off, one plain sentence where each figure would be
  // (the walkthrough, from the build, aside).
  const support = wasmSupport();
  const offline = support === 'none';
  if (inlined && (offline || support === 'scalar')) {
    const unable = offline ? WASM_OFF_MESSAGE : SINGLE_FILE_NEEDS_SIMD;
    for (const element of [slot, ...others()]) showFailure(element, unable);
    document.documentElement.dataset.ready = 'unable';
    return;
  }
  const engineSource = async () => (inlined
    ? { wasmBinary: await inlinedFile(inlined.wasmGzip).arrayBuffer() }
    : { wasmUrl: PAGE_ENGINE });
  const arriving = offline ? null : engineSource().then(loadAttention);
  arriving?.catch(() => {}); // handled where it is awaited, after the first screen
  let presets;
  let engine;
  let built;
  const initial = readUrlState(window.location);
  try {
    presets = await loadPresets();
    built = await builtEngine(presets, initial, offline);
    if (!built) engine = await arriving;
  } catch (error) {
    for (const failed of [slot, ...others()]) showFailure(failed, `The page could not start: ${error.message}`);
    return;
  }
  if (!built && !engine) { // WebAssembly off, and the build's files missing
    for (const element of [slot, ...others()]) showFailure(element, WASM_OFF_MESSAGE);
    document.documentElement.dataset.ready = 'unable';
    return;
  }
  slot.replaceChildren();
  const walkthroughChanged = (state) => {
    writeUrlState(state);
    followTryThis(state, presets.default);
  };
  // Widgets follow the reader's light or dark preference, as the page does.
  const walkthrough = mountWidget('walkthrough', slot, {
    theme: 'auto',
    engine: built ?? engine,
    presets,
    state: initial,
    onChange: walkthroughChanged,
  });
  // The mounted widgets, by section id, for tests and for the curious in a console.
  const widgets = { walkthrough };
  window.awWidgets = widgets;
  // A multi-head shapes preset in the address belongs to the multi-head
  // section: it opens there and the address keeps naming it.
  const multiHeadPreset = presets.presets.find((preset) => preset.id === initial.preset && isMultiHeadPreset(preset));
  // The address as the widget understood it (unknown preset, step past the end).
  if (!multiHeadPreset) writeUrlState(walkthrough.getState());
  followTryThis(walkthrough.getState(), presets.default);
  if (built) {
    const root = slot.querySelector('.aw-walkthrough');
    const release = holdControls(root, offline ? BUILT_OFFLINE : BUILT_LOADING);
    if (offline) {
      slot.before(builtNote(BUILT_OFFLINE_NOTE));
      for (const element of others()) showFailure(element, SECTION_OFFLINE);
      document.documentElement.dataset.ready = 'unable';
      return;
    }
    document.documentElement.dataset.ready = 'built';
    try {
      engine = await arriving;
    } catch (error) {
      release();
      holdControls(root, `The engine could not start (${error.message}); the numbers shown are the ones `
        + 'it computed when the page was built.');
      for (const failed of others()) showFailure(failed, `The page could not start: ${error.message}`);
      return;
    }
    built.arrive(engine);
    release();
  }
  document.documentElement.dataset.ready = 'true';
  // Each section is fetched and mounted when it comes within a screen of
  // the view, or when a link leads below it.
  const slots = sectionSlots();
  // A section asked for twice (it neared the view and a link led past it) mounts once.
  const mountSection = async (id, element) => {
    if (element.dataset.mounted) return;
    await nextTask();
    try {
      await loadWidget(id);
    } catch (error) {
      showFailure(element, `This section could not load: ${error.message}`);
      return;
    }
    element.replaceChildren();
    // A head of the trainer or of the model, opened in the walkthrough above.
    const openWalkthrough = (state) => {
      walkthrough.setState(state);
      walkthroughChanged(walkthrough.getState());
      // Focus goes with the view, so that Tab continues in the walkthrough.
      const heading = document.getElementById('walkthrough-title');
      heading.tabIndex = -1;
      heading.focus({ preventScroll: true });
      document.getElementById('walkthrough').scrollIntoView({ block: 'start' });
    };
    // The multi-head section shares the address while it shows a shapes
    // preset; the trainer and the model open a head in the walkthrough.
    const addressed = {
      multihead: {
        state: multiHeadPreset ? { preset: multiHeadPreset.id, step: initial.step ?? 0 } : {},
        onChange: (state) => writeUrlState(state.preset ? state : walkthrough.getState()),
      },
      trainer: {
        state: trainerState ?? {},
        onChange: (state) => {
          trainerState = state;
          replaceUrl(walkthrough.getState());
        },
        openWalkthrough,
      },
      model: { openWalkthrough },
    }[id] ?? {};
    // The page's chapter heading names the section; the widget's own title is for embeds.
    widgets[id] = mountWidget(id, element, { engine, presets, theme: 'auto', heading: `${id}-title`, ...addressed });
    element.dataset.mounted = 'true';
    if (slots.every(([, slotElement]) => slotElement.dataset.mounted)) document.documentElement.dataset.sections = 'mounted';
  };
  const observer = new IntersectionObserver((entries) => {
    for (const { target, isIntersecting } of entries) {
      if (!isIntersecting) continue;
      observer.unobserve(target);
      const id = target.id.replace(/-widget$/, '');
      queue = queue.then(() => mountSection(id, target));
    }
  }, { rootMargin: '100% 0px' });
  await nextFrame();
  engineReady({ mountSection, widgets });
  // An address without a chapter of its own opens a multi-head shapes preset in its section.
  if (multiHeadPreset && !window.location.hash) path.land('multihead');
  for (const [, element] of slots) if (!element.dataset.mounted) observer.observe(element);
}

start();
