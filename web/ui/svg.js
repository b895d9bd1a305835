// Making SVG elements: the one helper the figures (heatmaps, attention
// lines, the plane) share.

export const SVG_NS = 'http://www.w3.org/2000/svg';

/** An SVG element of doc with the given attributes (values become text). */
export function svgElement(doc, name, attributes = {}) {
  const element = doc.createElementNS(SVG_NS, name);
  for (const [key, value] of Object.entries(attributes)) element.setAttribute(key, String(value));
  return element;
}
