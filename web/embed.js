// One widget alone, for an iframe on another site:
//
//   embed.html?widget=walkthrough|plane|masks|scaling|multihead|cross-attention|alignment|efficient|block|trainer
//     &preset=ID&step=N&v=JSON&controls=player,editor|none&theme=light|dark|auto&autoplay=0|1&id=TEXT
//     &parentOrigin=https://host.example
//
// (options: widgets/registry.js and docs/embedding.md). The page tells its host
// how tall its content is, whenever that changes, so the host can size the
// iframe and no scrollbar ever shows:
//
//   parent.postMessage({ type: 'attention-embed:height', height, id }, parentOrigin)
//
// to the parent window only; with parentOrigin (an origin such as
// https://course.example) only a parent of that origin receives it,
// otherwise any parent does ('*': the height is no secret).

import { WASM_OFF_MESSAGE, loadAttention, wasmSupport } from './lib/attention.js';
import { pageEngineUrl } from './lib/engine-file.js';
import { WIDGETS, embedOptions, loadWidget, mountWidget } from './widgets/registry.js';
import { BUILT_OFFLINE, BUILT_OFFLINE_WALKTHROUGH, createBuiltEngine, holdControls, loadBuilt } from './widgets/walkthrough-built.js';
import { walkthroughPresets } from './widgets/walkthrough-problem.js';

const PRESETS_URL = new URL('./presets.json', import.meta.url);
// The engine without the trainer (build.sh), its scalar build where WebAssembly
// SIMD is missing: the trainer's worker loads the whole one.
const PAGE_ENGINE = pageEngineUrl();
const HEIGHT_MESSAGE = 'attention-embed:height';

/** The origin height messages may go to: parentOrigin if it is one, else '*'. */
function parentOriginOf(text) {
  if (text === null) return { origin: '*' };
  try {
    const { origin } = new URL(text);
    if (origin !== 'null' && origin === text.replace(/\/$/, '')) return { origin };
  } catch {
    // not a URL: reported below
  }
  return { origin: '*', notice: `parentOrigin \u201c${text.slice(0, 60)}\u201d is not an origin such as https://course.example; the height goes to any parent.` };
}

function reportHeight(box, id, targetOrigin) {
  if (window.parent === window) return;
  let last = -1;
  const send = () => {
    const height = Math.ceil(box.getBoundingClientRect().height);
    if (height === last) return;
    last = height;
    window.parent.postMessage({ type: HEIGHT_MESSAGE, height, id }, targetOrigin);
  };
  new ResizeObserver(send).observe(box);
  send();
}

function showMessage(box, text, failure) {
  const p = document.createElement('p');
  p.className = `aw-message${failure ? ' aw-failure' : ''}`;
  p.setAttribute('role', failure ? 'alert' : 'status');
  p.textContent = text;
  box.prepend(p);
}

async function loadPresets() {
  const response = await fetch(PRESETS_URL);
  if (!response.ok) throw new Error(`presets.json: HTTP ${response.status}`);
  return response.json();
}

// Where WebAssembly is off the walkthrough reads from the build's steps
// (widgets/walkthrough-built.js), as on the page.
/** The walkthrough's engine from the build, where WebAssembly is off; null for any other widget. */
async function builtEngine(name) {
  if (name !== 'walkthrough' || wasmSupport() !== 'none') return null;
  const presets = await loadPresets();
  const files = await loadBuilt(walkthroughPresets(presets).map((preset) => preset.id));
  return { engine: createBuiltEngine(files, BUILT_OFFLINE), presets };
}

async function start() {
  const box = document.getElementById('embed');
  const params = new URLSearchParams(window.location.search);
  const parent = parentOriginOf(params.get('parentOrigin'));
  reportHeight(box, params.get('id') ?? '', parent.origin);
  const options = embedOptions((name) => params.get(name), { names: [...new Set(params.keys())] });
  if (parent.notice) options.notices.push(parent.notice);
  let engine;
  let presets;
  let built = null;
  try {
    built = await builtEngine(options.name).catch(() => null);
    [engine, presets] = built ? [built.engine, built.presets, await loadWidget(options.name)]
      : await Promise.all([loadAttention({ wasmUrl: PAGE_ENGINE }), loadPresets(), loadWidget(options.name)]);
  } catch (error) {
    box.replaceChildren();
    showMessage(box, wasmSupport() === 'none' ? WASM_OFF_MESSAGE : `The widget could not start: ${error.message}`, true);
    return;
  }
  // For screen readers, the outline of the main page around the widget: the
  // site (h1), then the widget's section (h2), whose headings are h3.
  const outline = [['h1', 'Attention, step by step'], ['h2', WIDGETS[options.name].title]].map(([tag, text]) => {
    const heading = document.createElement(tag);
    heading.className = 'aw-visually-hidden';
    heading.textContent = text;
    return heading;
  });
  document.title = WIDGETS[options.name].title;
  box.replaceChildren(...outline);
  // Your turn's xAPI statements go to the parent as the height does (to parentOrigin when given).
  const onStatement = (statement) => {
    if (window.parent !== window) window.parent.postMessage({ source: 'attention-explainer', type: 'xapi', statement }, parent.origin);
  };
  window.awWidget = mountWidget(options.name, box, { engine, presets, ...options, onStatement });
  if (options.notices.length) showMessage(box, options.notices.join(' '), false);
  if (built) {
    holdControls(box.querySelector('.aw-walkthrough'), BUILT_OFFLINE);
    showMessage(box, BUILT_OFFLINE_WALKTHROUGH, false);
    document.documentElement.dataset.ready = 'unable';
    return;
  }
  document.documentElement.dataset.ready = 'true';
}

start();
