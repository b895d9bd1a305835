// Typesets formulas with KaTeX, vendored into web/vendor/katex/ by the build
// (never fetched from another origin). Only our own TeX goes through here:
// learner text (token labels) is never put into a formula.
//
// The constant formulas are typeset in advance (scripts/formulas.mjs) into
// web/vendor/formulas.js: KaTeX's own markup, so a page that shows only
// those never loads KaTeX's script. The one-file build puts its MathML in
// that module's place.

import typesetInAdvance from '../vendor/formulas.js';

let katexPromise = null;

/**
 * Loads KaTeX once; resolves to the module or null when it is missing.
 * null for the URL: there is no KaTeX (the notebook and anywidget builds).
 */
export function loadMath(baseUrl = new URL('../vendor/katex/katex.mjs', import.meta.url)) {
  // The one-file page carries no KaTeX: what was not typeset in advance shows as TeX.
  if (globalThis.attentionSingleFile || baseUrl === null) return (katexPromise ??= Promise.resolve(null));
  katexPromise ??= import(baseUrl.href)
    .then((module) => module.default ?? module)
    .catch(() => null);
  return katexPromise;
}

/**
 * Puts KaTeX's markup into element without inline style attributes, which a
 * strict Content-Security-Policy (style-src 'self') refuses, even in a
 * template: each style="..." becomes data-aw-style="..." before parsing, and
 * its declarations are set through the CSSOM, which the policy allows.
 * (KaTeX writes every attribute double-quoted, with " escaped inside.)
 */
function setMarkup(element, html) {
  element.innerHTML = html.replace(/ style="/g, ' data-aw-style="');
  for (const node of element.querySelectorAll('[data-aw-style]')) {
    node.style.cssText = node.dataset.awStyle;
    node.removeAttribute('data-aw-style');
  }
}

/**
 * Puts the display-style markup made in advance into element, as inline
 * math unless display: inline, KaTeX's block wrapper and MathML's display
 * attribute are dropped (our inline formulas have no fraction or sum whose
 * display style would show).
 */
function setTypesetInAdvance(element, markup, display) {
  setMarkup(element, markup);
  if (display) return;
  const inner = element.querySelector('.katex-display > .katex');
  if (inner) element.replaceChildren(inner);
  element.querySelector('math')?.removeAttribute('display');
}

/**
 * Renders tex into element. Until KaTeX has loaded (or if it is missing) the
 * TeX source is shown as text, so the page never shows nothing.
 */
export function renderMath(element, tex, { display = false, label = '' } = {}) {
  element.classList.add('aw-math');
  element.dataset.tex = tex;
  if (label) element.setAttribute('aria-label', label);
  if (Object.hasOwn(typesetInAdvance, tex)) {
    setTypesetInAdvance(element, typesetInAdvance[tex], display);
    return element;
  }
  element.textContent = tex;
  loadMath().then((katex) => {
    if (!katex || element.dataset.tex !== tex) return;
    // renderToString output is KaTeX's own markup for our constant TeX.
    setMarkup(element, katex.renderToString(tex, { displayMode: display, throwOnError: false, output: 'htmlAndMathml' }));
  });
  return element;
}

/** A new element holding the typeset formula. */
export function mathElement(doc, tex, options = {}) {
  const element = doc.createElement(options.display ? 'div' : 'span');
  return renderMath(element, tex, options);
}
