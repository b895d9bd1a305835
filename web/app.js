// The page's entry: loads the engine once, mounts the widgets into their
// sections and keeps the address in step with what the learner sees, so a
// link reproduces the view: ?preset=ID&step=N (N counts from 1, as on
// screen) and, after edits, v=<the edited inputs as compact JSON>; once the
// trainer's settings change, trainer=<its settings as JSON> (the run is
// reproducible from its seed).

import { WASM_OFF_MESSAGE, engineFile, loadAttention, wasmSupport } from './lib/attention.js';
import { inlinedFile } from './lib/inlined-file.js';
import { loadWidget, mountWidget, stepFromText } from './widgets/registry.js';
import { isMultiHeadPreset } from './presets.js';
import { followPath } from './path.js';

// Each section widget mounts into the element with id `${id}-widget`, under
// the heading `${id}-title`; the chapters' order is index.html's.
const SECTIONS = [...document.querySelectorAll('main > .page-section')].map((section) => section.id).filter((id) => id !== 'walkthrough');

const PRESETS_URL = new URL('./presets.json', import.meta.url);
// The engine without the trainer (build.sh), its scalar build where WebAssembly
// SIMD is missing: the trainer's worker loads the whole one.
const PAGE_ENGINE = new URL(`./lib/${engineFile('attention-page')}`, import.meta.url);
// The one-file build (scripts/build-single.mjs) inlines the engine and presets here.
const inlined = globalThis.attentionSingleFile;

function readUrlState(location) {
  const params = new URLSearchParams(location.search);
  const state = {};
  if (params.has('preset')) state.preset = params.get('preset');
  if (params.has('step')) state.step = stepFromText(params.get('step'));
  if (params.get('backward') === '1') state.backward = true;
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

function replaceUrl(state) {
  const params = new URLSearchParams();
  params.set('preset', state.preset);
  params.set('step', String(state.step + 1));
  if (state.values) params.set('v', JSON.stringify(state.values));
  if (state.backward) params.set('backward', '1');
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
// function that mounts a section (start() below).
let engineReady;
const started = new Promise((resolve) => { engineReady = resolve; });
// The sections are mounted one at a time, each in a task of its own.
let queue = Promise.resolve();

/** Mounts every section down to id (the ones above it first), once the engine is in. */
async function mountThrough(id) {
  const mountSection = await started;
  const slots = sectionSlots();
  const through = slots.findIndex(([slotId]) => slotId === id);
  for (const [slotId, element] of slots.slice(0, through + 1)) {
    queue = queue.then(() => mountSection(slotId, element));
  }
  await queue;
}

// Links land from the first moment: the address's #id before the engine is in.
const path = followPath({
  chapters: [...document.querySelectorAll('main > .page-section')],
  bar: document.querySelector('.path-bar'),
  mountThrough,
});

async function start() {
  const slot = document.getElementById('walkthrough-widget');
  // Where WebAssembly is off, one plain sentence where each figure would be.
  const support = wasmSupport();
  const unable = support === 'none' ? WASM_OFF_MESSAGE
    : inlined && support === 'scalar' ? SINGLE_FILE_NEEDS_SIMD : '';
  if (unable) {
    for (const element of [slot, ...sectionSlots().map(([, other]) => other)]) showFailure(element, unable);
    document.documentElement.dataset.ready = 'unable';
    return;
  }
  let engine;
  let presets;
  try {
    const engineSource = inlined
      ? { wasmBinary: await inlinedFile(inlined.wasmGzip).arrayBuffer() }
      : { wasmUrl: PAGE_ENGINE };
    [engine, presets] = await Promise.all([loadAttention(engineSource), loadPresets()]);
  } catch (error) {
    for (const failed of [slot, ...sectionSlots().map(([, element]) => element)]) {
      showFailure(failed, `The page could not start: ${error.message}`);
    }
    return;
  }
  slot.replaceChildren();
  const initial = readUrlState(window.location);
  // Widgets follow the reader's light or dark preference, as the page does.
  const walkthrough = mountWidget('walkthrough', slot, {
    theme: 'auto',
    engine,
    presets,
    state: initial,
    onChange: writeUrlState,
  });
  // A multi-head shapes preset in the address belongs to the multi-head
  // section: it opens there and the address keeps naming it.
  const multiHeadPreset = presets.presets.find((preset) => preset.id === initial.preset && isMultiHeadPreset(preset));
  // The address as the widget understood it (unknown preset, step past the end).
  if (!multiHeadPreset) writeUrlState(walkthrough.getState());
  // The mounted widgets, by section id, for tests and for the curious in a console.
  const widgets = { walkthrough };
  window.awWidgets = widgets;
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
    // The multi-head section shares the address while it shows a shapes
    // preset; the trainer opens a head's pass in the walkthrough above.
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
        openWalkthrough: (state) => {
          walkthrough.setState(state);
          writeUrlState(walkthrough.getState());
          // Focus goes with the view, so that Tab continues in the walkthrough.
          const heading = document.getElementById('walkthrough-title');
          heading.tabIndex = -1;
          heading.focus({ preventScroll: true });
          document.getElementById('walkthrough').scrollIntoView({ block: 'start' });
        },
      },
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
  engineReady(mountSection);
  // An address without a chapter of its own opens a multi-head shapes preset in its section.
  if (multiHeadPreset && !window.location.hash) path.land('multihead');
  for (const [, element] of slots) if (!element.dataset.mounted) observer.observe(element);
}

start();
