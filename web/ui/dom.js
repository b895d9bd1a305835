// The page's one element builder: every widget and ui piece builds its HTML
// elements through it, so a tag, a class and some text is one call
// everywhere (SVG elements have svg.js's svgElement).

/**
 * An element builder bound to one document (a widget's, which may be an
 * iframe's): make(tag, className?, text?) returns a new element with that
 * class and text content.
 */
export function builder(doc) {
  return function make(tag, className = '', text = undefined) {
    const node = doc.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  };
}
