// Exports: the walkthrough's problem as Markdown or LaTeX (the engine's own
// formatter, the text `build/attn --format markdown` prints), and any
// heatmap as an SVG file with its styles inlined or as a PNG drawn from it.

const SVG_NS = 'http://www.w3.org/2000/svg';
// The computed styles that make a heatmap look as on screen outside the page.
const SVG_STYLES = ['fill', 'stroke', 'stroke-width', 'opacity', 'font-family', 'font-size', 'font-weight', 'text-anchor', 'display'];
const PNG_SCALE = 2;

/** Copies text to the clipboard; resolves to true when it worked. */
export async function copyText(doc, text) {
  const view = doc.defaultView;
  try {
    await view.navigator.clipboard.writeText(text);
    return true;
  } catch {
    // No permission (an iframe without allow="clipboard-write"): the old way.
    const area = doc.createElement('textarea');
    area.value = text;
    area.setAttribute('readonly', '');
    area.style.cssText = 'position:fixed;top:0;left:0;opacity:0;';
    (doc.activeElement?.closest('dialog') ?? doc.body).append(area);
    area.select();
    let copied = false;
    try {
      copied = doc.execCommand('copy');
    } catch {
      copied = false;
    }
    area.remove();
    return copied;
  }
}

/** The SVG as a standalone file: computed styles inlined, a background behind it. */
export function svgMarkup(svg) {
  const view = svg.ownerDocument.defaultView;
  const copy = svg.cloneNode(true);
  const originals = [svg, ...svg.querySelectorAll('*')];
  const copies = [copy, ...copy.querySelectorAll('*')];
  originals.forEach((original, index) => {
    const target = copies[index];
    const computed = view.getComputedStyle(original);
    const style = SVG_STYLES.map((name) => `${name}:${computed.getPropertyValue(name)}`).join(';');
    target.style.cssText = style; // the CSSOM, which a strict CSP allows
    for (const name of ['class', 'tabindex', 'role']) target.removeAttribute(name);
  });
  copy.setAttribute('xmlns', SVG_NS);
  copy.removeAttribute('aria-label');
  const background = svg.ownerDocument.createElementNS(SVG_NS, 'rect');
  background.setAttribute('width', '100%');
  background.setAttribute('height', '100%');
  const root = svg.closest('.aw-root') ?? svg;
  background.setAttribute('fill', view.getComputedStyle(root).backgroundColor || '#fff');
  copy.insertBefore(background, copy.firstChild);
  return new view.XMLSerializer().serializeToString(copy);
}

function download(doc, blob, fileName) {
  const view = doc.defaultView;
  const url = view.URL.createObjectURL(blob);
  const link = doc.createElement('a');
  link.href = url;
  link.download = fileName;
  link.hidden = true;
  doc.body.append(link);
  link.click();
  link.remove();
  view.setTimeout(() => view.URL.revokeObjectURL(url), 10000);
}

export function downloadSvg(svg, fileName) {
  const doc = svg.ownerDocument;
  download(doc, new doc.defaultView.Blob([svgMarkup(svg)], { type: 'image/svg+xml' }), `${fileName}.svg`);
}

export async function downloadPng(svg, fileName) {
  const doc = svg.ownerDocument;
  const view = doc.defaultView;
  const width = Number(svg.getAttribute('width'));
  const height = Number(svg.getAttribute('height'));
  const url = view.URL.createObjectURL(new view.Blob([svgMarkup(svg)], { type: 'image/svg+xml' }));
  try {
    const image = new view.Image();
    image.src = url;
    await image.decode();
    const canvas = doc.createElement('canvas');
    canvas.width = width * PNG_SCALE;
    canvas.height = height * PNG_SCALE;
    canvas.getContext('2d').drawImage(image, 0, 0, canvas.width, canvas.height);
    const blob = await new Promise((resolve) => canvas.toBlob(resolve, 'image/png'));
    download(doc, blob, `${fileName}.png`);
  } finally {
    view.URL.revokeObjectURL(url);
  }
}

function fileNameOf(text) {
  return text.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '') || 'heatmap';
}

function smallButton(doc, text, label, onClick) {
  const button = doc.createElement('button');
  button.type = 'button';
  button.className = 'aw-link aw-download';
  button.textContent = text;
  button.setAttribute('aria-label', label);
  button.addEventListener('click', onClick);
  return button;
}

/** "Download SVG" and "Download PNG" under a heatmap; getSvg() -> its <svg>, getTitle() -> its title. */
export function createHeatmapDownloads(figure, { getSvg, getTitle }) {
  const doc = figure.ownerDocument;
  // The name starts with the words on the button, then says which heatmap
  // (WCAG 2.5.3, label in name: a speech user says what they see).
  const labelOf = (format) => `Download ${format} of ${getTitle()}`;
  const tools = doc.createElement('div');
  tools.className = 'aw-heatmap-tools';
  const save = (format) => () => {
    const svg = getSvg();
    if (!svg) return;
    const name = fileNameOf(getTitle());
    if (format === 'svg') downloadSvg(svg, name);
    else downloadPng(svg, name);
  };
  tools.append(
    smallButton(doc, 'Download SVG', labelOf('SVG'), save('svg')),
    smallButton(doc, 'Download PNG', labelOf('PNG'), save('png')),
  );
  figure.append(tools);
  return {
    element: tools,
    /** The heatmap's title changed: so do the buttons' names. */
    relabel() {
      const [svgButton, pngButton] = tools.children;
      svgButton.setAttribute('aria-label', labelOf('SVG'));
      pngButton.setAttribute('aria-label', labelOf('PNG'));
    },
  };
}

/**
 * "Copy as Markdown" and "Copy as LaTeX" for the walkthrough: getInput()
 * -> the engine input of the problem on screen; getErrata(style) -> the
 * section on the tutorial's errata that follows it ('' for none).
 */
export function createExportBar(container, { engine, getInput, getErrata = () => '' }) {
  const doc = container.ownerDocument;
  const group = doc.createElement('div');
  group.className = 'aw-export';
  group.setAttribute('role', 'group');
  group.setAttribute('aria-label', 'Export');
  const status = doc.createElement('span');
  status.className = 'aw-export-status';
  status.setAttribute('role', 'status');
  const copyAs = (style, label) => async () => {
    let text;
    try {
      text = engine.format(getInput(), style);
      const errata = getErrata(style);
      if (errata) text = `${text}\n${errata}`;
    } catch (error) {
      status.textContent = `${label} is not available: ${error.message}`;
      return;
    }
    const copied = await copyText(doc, text);
    status.textContent = copied
      ? `${label} copied (${text.split('\n').length} lines).`
      : `The browser did not allow copying the ${label}.`;
  };
  for (const [style, label] of [['markdown', 'Markdown'], ['latex', 'LaTeX']]) {
    const button = doc.createElement('button');
    button.type = 'button';
    button.className = `aw-btn aw-copy-${style}`;
    button.textContent = `Copy as ${label}`;
    button.addEventListener('click', copyAs(style, label));
    group.append(button);
  }
  group.append(status);
  container.append(group);
  return { element: group, destroy: () => group.remove() };
}
