// <attention-walkthrough>: one widget as a custom element, for a page on
// any site, from one classic script tag:
//
//   <script src="https://…/web/dist/attention-walkthrough.js"></script>
//   <attention-walkthrough widget="walkthrough" preset="cat-sat-mat" step="4"
//       controls="player,export" theme="auto" autoplay="0"></attention-walkthrough>
//
// Attributes as embed.html's parameters (values = its v). The widget lives
// in a shadow root with the page's stylesheets and KaTeX's, so the host's
// CSS does not reach it and ours does not leak out; only KaTeX's @font-face
// rules go to the document, because fonts declared in a shadow root are not
// used. The engine (attention.wasm) is loaded from beside the script, KaTeX
// from ../vendor/katex/, each found relative to the script's own URL
// (element-assets.js), so a bundler that follows new URL(…, import.meta.url)
// copies them; the presets are in the bundle. Where they are elsewhere, say
// where: the first element's base attribute
// (base="https://cdn.example/attention/dist/", the folder of attention.wasm)
// or, before any element renders,
// customElements.get('attention-walkthrough').assetBase = '…'.
// The notebook and anywidget builds carry the engine inside instead.
// Where WebAssembly is off, the walkthrough reads step by step from the
// build's steps (dist/walkthroughs/, beside the engine), its controls that
// need the engine held with a message, as on the page; data-ready is then
// "unable" rather than "true".
//
// On a Reveal.js slide the presenter's keys step a walkthrough before they
// move the deck, and the compact layout takes the room its slide leaves
// (deck.js); deck-keys="off" leaves the keys to the deck.
//
// Each change of the widget's state (a step, a preset, edited values)
// dispatches 'attention-change' with the state ({ preset, step from 1, … })
// as its detail, for hosts that keep it (anywidget.js).
// Imported where there is no DOM (Node, server-side rendering) it defines
// nothing and throws nothing.
//
// Built by scripts/build-element.mjs into web/dist/ (`make element`): a
// classic script (.js) and an ES module (.mjs); this source imports CSS as
// text, which only the bundler understands.

import { WASM_OFF_MESSAGE, loadAttention, wasmSupport } from './lib/attention.js';
import { followDeck } from './deck.js';
import { elementAssets } from './element-assets.js';
import { loadMath } from './ui/math.js';
import { embedOptions, loadWidget, mountWidget } from './widgets/registry.js';
import { BUILT_OFFLINE, BUILT_OFFLINE_WALKTHROUGH, createBuiltEngine, holdControls, loadBuilt } from './widgets/walkthrough-built.js';
import { SDPA_MODES, walkthroughPresets } from './widgets/walkthrough-problem.js';
import presets from './presets.json' with { type: 'json' };
import pageCss from './style.css';
import sectionsCss from './sections.css';
import katexCss from './vendor/katex/katex.min.css';

const SCRIPT_URL = import.meta.url;
const ATTRIBUTES = ['widget', 'preset', 'step', 'view', 'values', 'backward', 'check', 'controls', 'theme', 'autoplay',
  'layout', 'exercises'];
// What a walkthrough's setState takes: changing one of these moves it without a redraw.
const STATE_ATTRIBUTES = ['preset', 'step', 'view', 'values', 'backward'];

// The host element is a block whatever the host's CSS says; inside it, an
// `all: initial` shell stops inherited properties (fonts, line height,
// letter spacing, text transforms) from coming in. (In the compact layout
// the shell is the widget's height from the start: style.css.) Its
// messages above the widget (loading, notices, WebAssembly off) are in the
// widget's font.
const SHELL_CSS = ':host{display:block!important}:host([hidden]){display:none!important}'
  + '.aw-shell{all:initial;display:block;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,Arial,sans-serif}';

let engineLoading = null;
let builtLoading = null;
let sheets = null;

// KaTeX's @font-face sources: its woff2 (the only format vendored), at the
// URL the assets give, in place of the woff2, woff and ttf list.
const FONT_SOURCE = /url\(fonts\/([^)]+\.woff2)\) format\("woff2"\)(?:,url\([^)]*\) format\("[^"]*"\))*/g;

function styleSheets(assets) {
  if (sheets) return sheets;
  const katex = katexCss.replace(FONT_SOURCE, (_, name) => `url(${assets.font(name)}) format("woff2")`);
  const fontFaces = katex.match(/@font-face\{[^}]*\}/g) ?? [];
  const fontSheet = new CSSStyleSheet();
  fontSheet.replaceSync(fontFaces.join('\n'));
  document.adoptedStyleSheets = [...document.adoptedStyleSheets, fontSheet];
  const widgetSheet = new CSSStyleSheet();
  widgetSheet.replaceSync([SHELL_CSS, katex.replace(/@font-face\{[^}]*\}/g, ''), pageCss, sectionsCss].join('\n'));
  sheets = [widgetSheet];
  return sheets;
}

// Where there is no DOM, a stand-in base class: the element is not defined.
const ElementBase = globalThis.HTMLElement ?? class {};

class AttentionWalkthrough extends ElementBase {
  static observedAttributes = ATTRIBUTES;
  /** The folder of attention.wasm (KaTeX in ../vendor/katex/), for every element without a base attribute. */
  static assetBase = null;

  #widget = null;
  #shown = null;
  #shell = null;
  #generation = 0;
  #leaveDeck = () => {};

  connectedCallback() {
    if (!this.shadowRoot) {
      const root = this.attachShadow({ mode: 'open' });
      root.adoptedStyleSheets = styleSheets(this.#assets());
      // Keys typed or pressed inside the widget are the widget's: a host's
      // own handlers (a slide deck's arrows and Space) see the element as
      // the focused one and would act on them too.
      for (const type of ['keydown', 'keypress', 'keyup']) root.addEventListener(type, (event) => event.stopPropagation());
      this.#shell = document.createElement('div');
      this.#shell.className = 'aw-shell';
      root.append(this.#shell);
    }
    this.#render();
  }

  disconnectedCallback() {
    this.#generation++;
    this.#leaveDeck();
    this.#widget?.destroy();
    this.#widget = null;
  }

  attributeChangedCallback(name) {
    if (!this.isConnected || !this.#shell) return;
    // A walkthrough on screen moves to a new step, preset or values in place.
    if (STATE_ATTRIBUTES.includes(name) && this.#widget && this.#shown === 'walkthrough') {
      const { name: widget, state } = this.#options();
      if (widget === 'walkthrough') {
        const current = this.#widget.getState();
        const same = (key) => JSON.stringify(current[key] ?? null) === JSON.stringify(state[key] ?? null);
        if (!STATE_ATTRIBUTES.every(same)) this.#widget.setState(state);
        return;
      }
    }
    this.#render();
  }

  /**
   * The embed options from the attributes. Edited values without a preset
   * start from the first example of their kind (a softmax's values need a
   * softmax example), as a notebook's show(problem) gives them.
   */
  #options() {
    const options = embedOptions((name) => this.getAttribute(name), {
      names: this.getAttributeNames(),
      write: (name, value) => `${name}="${value}"`,
    });
    const { state } = options;
    if (options.name === 'walkthrough' && state.values?.mode && state.preset === undefined) {
      const family = SDPA_MODES.includes(state.values.mode) ? SDPA_MODES : [state.values.mode];
      state.preset = presets.presets.find((preset) => family.includes(preset.mode) && !(preset.input.numHeads > 1))?.id;
    }
    return options;
  }

  /** From the base attribute, else AttentionWalkthrough.assetBase, else where the build put them. */
  #assets() {
    const base = this.getAttribute('base') ?? AttentionWalkthrough.assetBase;
    return elementAssets(base === null ? null : new URL(base, SCRIPT_URL || document.baseURI));
  }

  /** The widget, its state with `step` counted from 1 as in the attribute
   * (the widgets count from 0 inside). */
  get widget() {
    const inner = this.#widget;
    if (!inner) return null;
    return { ...inner, getState: () => shiftStep(inner.getState(), 1),
        setState: (state) => inner.setState(shiftStep(state, -1)) };
  }

  async #render() {
    const generation = ++this.#generation;
    const shell = this.#shell;
    if (!this.#widget) shell.replaceChildren(message('Loading the engine\u2026', false));
    const options = this.#options();
    let engine;
    // Where WebAssembly is off, a walkthrough reads from the build's steps, as the page's does.
    let built = false;
    try {
      const assets = this.#assets();
      loadMath(assets.katex);
      built = options.name === 'walkthrough' && wasmSupport() === 'none' && Boolean(assets.walkthroughs);
      if (built) {
        const ids = walkthroughPresets(presets).map((preset) => preset.id);
        builtLoading ??= loadBuilt(ids, assets.walkthroughs).then((files) => createBuiltEngine(files, BUILT_OFFLINE));
      } else {
        engineLoading ??= Promise.resolve(assets.engine()).then(loadAttention);
      }
      [engine] = await Promise.all([built ? builtLoading : engineLoading, loadWidget(options.name)]);
    } catch (error) {
      builtLoading = null;
      engineLoading = null;
      if (generation === this.#generation) {
        shell.replaceChildren(message(wasmSupport() === 'none' ? WASM_OFF_MESSAGE : `The widget could not start: ${error.message}`, true));
      }
      return;
    }
    if (generation !== this.#generation) return;
    this.#widget?.destroy();
    this.#leaveDeck();
    shell.replaceChildren();
    const onChange = (state) => this.dispatchEvent(new CustomEvent('attention-change', { detail: shiftStep(state, 1) }));
    // Your turn's xAPI statements, for the host to store (docs/embedding.md).
    const onStatement = (statement) => this.dispatchEvent(
      new CustomEvent('attention-xapi', { detail: statement, bubbles: true, composed: true }));
    this.#widget = mountWidget(options.name, shell, { engine, presets, ...options, onChange, onStatement });
    this.#shown = options.name;
    const deckKeys = this.getAttribute('deck-keys');
    if (deckKeys !== null && !['on', 'off'].includes(deckKeys)) {
      options.notices.push(`deck-keys \u201c${deckKeys.slice(0, 40)}\u201d is not one of on, off; `
        + 'the presenter\u2019s keys step the walkthrough.');
    }
    this.#leaveDeck = followDeck(this, {
      stepBy: (delta) => this.#widget?.stepBy?.(delta) ?? false,
      keys: options.name === 'walkthrough' && deckKeys !== 'off',
    });
    if (options.notices.length) shell.prepend(message(options.notices.join(' '), false));
    if (built) {
      holdControls(shell.querySelector('.aw-walkthrough'), BUILT_OFFLINE);
      shell.prepend(message(BUILT_OFFLINE_WALKTHROUGH, false));
    }
    // 'unable': on screen, from the build's numbers, without the engine (as the page says it).
    this.dataset.ready = built ? 'unable' : 'true';
    this.dispatchEvent(new Event('attention-ready'));
  }
}

const shiftStep = (state, by) => (Number.isInteger(state?.step) ? { ...state, step: state.step + by } : state);

function message(text, failure) {
  const p = document.createElement('p');
  p.className = `aw-message${failure ? ' aw-failure' : ''}`;
  p.setAttribute('role', failure ? 'alert' : 'status');
  p.textContent = text;
  return p;
}

if (globalThis.customElements && !customElements.get('attention-walkthrough')) {
  customElements.define('attention-walkthrough', AttentionWalkthrough);
}
