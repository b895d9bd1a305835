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
// from ../vendor/katex/; the presets are in the bundle. Where a bundler
// moved the script away from them, say where they are: the first element's
// base attribute (base="https://cdn.example/attention/dist/", the folder of
// attention.wasm) or, before any element renders,
// customElements.get('attention-walkthrough').assetBase = '…'.
// Imported where there is no DOM (Node, server-side rendering) it defines
// nothing and throws nothing.
//
// Built by scripts/build-element.mjs into web/dist/ (`make element`): this
// source imports CSS as text, which only the bundler understands.

import { loadAttention } from './lib/attention.js';
import { loadMath } from './ui/math.js';
import { embedOptions, loadWidget, mountWidget } from './widgets/registry.js';
import presets from './presets.json' with { type: 'json' };
import pageCss from './style.css';
import sectionsCss from './sections.css';
import katexCss from './vendor/katex/katex.min.css';

const SCRIPT_URL = import.meta.url;
const ATTRIBUTES = ['widget', 'preset', 'step', 'values', 'backward', 'check', 'controls', 'theme', 'autoplay', 'layout'];

// The host element is a block whatever the host's CSS says; inside it, an
// `all: initial` shell stops inherited properties (fonts, line height,
// letter spacing, text transforms) from coming in.
const SHELL_CSS = ':host{display:block!important}:host([hidden]){display:none!important}'
  + '.aw-shell{all:initial;display:block}';

let engineLoading = null;
let sheets = null;

function styleSheets(base) {
  if (sheets) return sheets;
  const fonts = new URL('../vendor/katex/fonts/', base).href;
  const katex = katexCss.replace(/url\(fonts\//g, `url(${fonts}`);
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
  #shell = null;
  #generation = 0;

  connectedCallback() {
    if (!this.shadowRoot) {
      const root = this.attachShadow({ mode: 'open' });
      root.adoptedStyleSheets = styleSheets(this.#assetBase());
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
    this.#widget?.destroy();
    this.#widget = null;
  }

  attributeChangedCallback() {
    if (this.isConnected && this.#shell) this.#render();
  }

  /** The mounted widget ({ getState(), setState() }), once the engine has loaded. */
  /** The base attribute, else AttentionWalkthrough.assetBase, else the script's own folder. */
  #assetBase() {
    return new URL(this.getAttribute('base') ?? AttentionWalkthrough.assetBase ?? './', SCRIPT_URL || document.baseURI);
  }

  /** The widget, its state with `step` counted from 1 as in the attribute
   * (the widgets count from 0 inside). */
  get widget() {
    const inner = this.#widget;
    if (!inner) return null;
    const shift = (state, by) => (Number.isInteger(state?.step) ? { ...state, step: state.step + by } : state);
    return { ...inner, getState: () => shift(inner.getState(), 1), setState: (state) => inner.setState(shift(state, -1)) };
  }

  async #render() {
    const generation = ++this.#generation;
    const shell = this.#shell;
    if (!this.#widget) shell.replaceChildren(message('Loading the engine\u2026', false));
    const options = embedOptions((name) => this.getAttribute(name));
    let engine;
    try {
      const base = this.#assetBase();
      loadMath(new URL('../vendor/katex/katex.mjs', base));
      engineLoading ??= loadAttention({ wasmUrl: new URL('attention.wasm', base).href });
      [engine] = await Promise.all([engineLoading, loadWidget(options.name)]);
    } catch (error) {
      engineLoading = null;
      if (generation === this.#generation) shell.replaceChildren(message(`The widget could not start: ${error.message}`, true));
      return;
    }
    if (generation !== this.#generation) return;
    this.#widget?.destroy();
    shell.replaceChildren();
    this.#widget = mountWidget(options.name, shell, { engine, presets, ...options });
    if (options.notices.length) shell.prepend(message(options.notices.join(' '), false));
    this.dataset.ready = 'true';
    this.dispatchEvent(new Event('attention-ready'));
  }
}

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
