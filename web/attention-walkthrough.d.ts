// Types for the <attention-walkthrough> custom element
// (web/attention-walkthrough.js, built into web/dist/attention-walkthrough.js;
// the package's `attention-explainer/element`). The script defines the element
// and exports nothing, so everything here is a type: importing the module
// for its side effect types document.createElement('attention-walkthrough')
// and querySelector('attention-walkthrough').

/** The widget inside the element, once the engine has loaded. */
export interface AttentionWidget {
  /** The widget's state, as the embed snippets carry it (the `values`
   * attribute); its `step`, where it has one, counts from 1 as the `step`
   * attribute and the screen do. */
  getState(): unknown;
  setState(state: unknown): void;
}

export interface AttentionWalkthroughElement extends HTMLElement {
  /** null until the element fires `attention-ready`. */
  readonly widget: AttentionWidget | null;
}

/** The element's class, as customElements.get('attention-walkthrough') gives it. */
export interface AttentionWalkthroughConstructor {
  new (): AttentionWalkthroughElement;
  /** The folder of attention.wasm (KaTeX in ../vendor/katex/) for every element
   * without a `base` attribute; set it before the first element renders. */
  assetBase: string | null;
}

declare global {
  interface HTMLElementTagNameMap {
    'attention-walkthrough': AttentionWalkthroughElement;
  }
}
