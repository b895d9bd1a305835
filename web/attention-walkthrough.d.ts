// Types for the <attention-walkthrough> custom element
// (web/attention-walkthrough.js, built into web/dist/attention-walkthrough.js;
// the package's `attention-explainer/element`). The script defines the element
// and exports nothing, so everything here is a type: importing the module
// for its side effect types document.createElement('attention-walkthrough')
// and querySelector('attention-walkthrough').

/** The widget inside the element, once the engine has loaded. */
export interface AttentionWidget {
  /** The widget's state, as the embed snippets carry it (the `values` attribute). */
  getState(): unknown;
  setState(state: unknown): void;
}

export interface AttentionWalkthroughElement extends HTMLElement {
  /** null until the element fires `attention-ready`. */
  readonly widget: AttentionWidget | null;
}

declare global {
  interface HTMLElementTagNameMap {
    'attention-walkthrough': AttentionWalkthroughElement;
  }
}
