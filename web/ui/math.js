// Typesets formulas with KaTeX, vendored into web/vendor/katex/ by the build
// (never fetched from another origin). Only our own TeX goes through here:
// learner text (token labels) is never put into a formula.

let katexPromise = null;
// The one-file build (scripts/build-single.mjs) has no KaTeX: it typesets our
// formulas in advance as MathML, { tex: markup }, in display style.
const prerendered = globalThis.attentionSingleFile?.math;

/** Loads KaTeX once; resolves to the module or null when it is missing. */
export function loadMath(baseUrl = new URL('../vendor/katex/katex.mjs', import.meta.url)) {
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
 * Renders tex into element. Until KaTeX has loaded (or if it is missing) the
 * TeX source is shown as text, so the page never shows nothing.
 */
export function renderMath(element, tex, { display = false, label = '' } = {}) {
  element.classList.add('aw-math');
  element.textContent = tex;
  element.dataset.tex = tex;
  if (label) element.setAttribute('aria-label', label);
  if (prerendered) {
    if (Object.hasOwn(prerendered, tex)) {
      // KaTeX's markup for our constant TeX, made at build time.
      setMarkup(element, prerendered[tex]);
      if (!display) element.querySelector('math')?.removeAttribute('display');
    }
    return element;
  }
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
