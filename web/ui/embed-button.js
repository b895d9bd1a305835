// "Embed this": a button that opens a dialog with two snippets for the
// widget as it is now (preset, step, edited values): an iframe of
// embed.html with the few lines a host page adds to size it, and the
// <attention-walkthrough> custom element with its one script tag. Its
// options (theme, autoplay, which controls show) rewrite both snippets as
// they change. The dialog is a modal <dialog>: focus moves in and stays in,
// Escape closes it, and focus goes back to the button.

import { copyText } from './export.js';
import { builder } from './dom.js';

// web/ (this file is web/ui/embed-button.js; in the element's bundle,
// import.meta.url is the bundle in web/dist/, one level down as well).
const webRoot = () => new URL('../', import.meta.url);

/** A widget's state as text values ({ preset, step, v }), as embeds read them. */
export function stateToParams(widget, state) {
  if (widget !== 'walkthrough') return { v: JSON.stringify(state) };
  const params = { preset: state.preset, step: String(state.step + 1) };
  if (state.view) params.view = state.view;
  if (state.values) params.v = JSON.stringify(state.values);
  if (state.backward) params.backward = '1';
  if (state.check) params.check = JSON.stringify(state.check);
  return params;
}

/**
 * The embed options as text values, only those that differ from the
 * defaults: layout ('compact' | 'full'), controls (the names shown; null =
 * all), theme, autoplay.
 */
export function optionsToParams({ layout = 'full', controls = null, theme = 'light', autoplay = false } = {}) {
  const params = {};
  if (layout === 'compact') params.layout = 'compact';
  if (controls) params.controls = controls.length ? controls.join(',') : 'none';
  if (theme !== 'light') params.theme = theme;
  if (autoplay) params.autoplay = '1';
  return params;
}

const attributeText = (text) => text.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
// name="value", escaped. (Built, not written out: the one-file build rejects
// any literal src=" in the page, its sign of a file left behind.)
const attribute = (name, value) => `${name}="${attributeText(value)}"`;

/** The main page's address that opens the walkthrough in this state ({ preset,
 * step, view?, values?, backward?, check? }), as app.js reads it. */
export function walkthroughLink({ preset, step = 0, view, values, backward = false, check }, base = webRoot()) {
  const params = new URLSearchParams({ preset, step: String(step + 1) });
  if (view) params.set('view', view);
  if (values) params.set('v', JSON.stringify(values));
  if (backward) params.set('backward', '1');
  if (check) params.set('check', JSON.stringify(check));
  return new URL(`index.html?${params}#walkthrough`, base).href;
}

/** The two snippets: { iframe, element } for widget in state, with the options of optionsToParams. */
export function embedSnippets(widget, state, title, options = {}, base = webRoot()) {
  const params = { ...stateToParams(widget, state), ...optionsToParams(options) };
  const query = new URLSearchParams({ widget, ...params });
  const src = new URL(`embed.html?${query}`, base).href;
  const iframe = [
    `<iframe ${attribute('src', src)} ${attribute('title', title)}`,
    // The compact layout is this tall at every step, so a host that strips
    // the script below still shows all of it.
    `  style="display:block;width:100%;height:${COMPACT_HEIGHT}px;border:0" loading="lazy"`,
    '  allow="clipboard-write" data-attention-embed></iframe>',
    '<script>',
    // The source identifies the iframe: an iframe sandboxed with
    // allow-scripts only sends from origin "null", so no origin is checked.
    'addEventListener("message", function (event) {',
    '  var data = event.data;',
    '  if (!data || data.type !== "attention-embed:height") return;',
    '  document.querySelectorAll("iframe[data-attention-embed]").forEach(function (frame) {',
    '    if (frame.contentWindow === event.source) frame.style.height = data.height + "px";',
    '  });',
    '});',
    '</script>',
  ].join('\n');
  const attributes = [attribute('widget', widget)];
  for (const [name, value] of Object.entries(params)) attributes.push(attribute(name === 'v' ? 'values' : name, value));
  const element = [
    `<script ${attribute('src', new URL('dist/attention-walkthrough.js', base).href)}></script>`,
    `<attention-walkthrough ${attributes.join(' ')}></attention-walkthrough>`,
  ].join('\n');
  return { iframe, element };
}

let dialogs = 0;

// The one-file page (scripts/build-single.mjs) has no embed.html nor
// element script beside it: its dialog links to the file itself, and makes
// the snippets once the author says where the explorer is served.
const SINGLE_FILE = Boolean(globalThis.attentionSingleFile);

/** This file with the view in its address: the walkthrough's state, or a section's anchor. */
function singleFileLink(doc, widget, state) {
  const location = doc.defaultView.location;
  const file = location.pathname.split('/').pop() || 'attention.html';
  if (widget !== 'walkthrough') return `${file}#${widget}`;
  return `${file}?${new URLSearchParams(stateToParams(widget, state))}#walkthrough`;
}

/** An absolute http(s) address ending in /, or null. */
function servedBase(text) {
  try {
    const url = new URL(text.trim());
    if (url.protocol !== 'https:' && url.protocol !== 'http:') return null;
    if (!url.pathname.endsWith('/')) url.pathname += '/';
    return url;
  } catch {
    return null;
  }
}

// The iframe's height in the snippet: the compact layout's height (style.css).
export const COMPACT_HEIGHT = 640;
// What a compact embed shows by default: the step and the player.
const COMPACT_CONTROLS = ['player'];

/**
 * A snippet's box: its label, help, the text to copy (element id textId)
 * and a copy button; fields[key] gets its { area, status } to fill in.
 */
function snippetBlock(make, textId, key, label, help, fields) {
  const box = make('div', 'aw-embed-block');
  const doc = box.ownerDocument;
  const name = make('label', 'aw-embed-label', label);
  name.htmlFor = textId;
  const area = make('textarea', `aw-embed-code aw-embed-${key}`);
  area.id = textId;
  area.readOnly = true;
  area.rows = key === 'iframe' ? 9 : 3;
  area.spellcheck = false;
  const row = make('div', 'aw-embed-row');
  const copy = make('button', 'aw-btn aw-embed-copy', `Copy the ${key === 'iframe' ? 'iframe' : 'element'} snippet`);
  copy.type = 'button';
  const status = make('span', 'aw-export-status');
  status.setAttribute('role', 'status');
  copy.addEventListener('click', async () => {
    status.textContent = (await copyText(doc, area.value)) ? 'Copied.' : 'Select the text and copy it by hand.';
  });
  row.append(copy, status);
  box.append(name, make('p', 'aw-small', help), area, row);
  fields[key] = { area, status };
  return box;
}

/**
 * The "Embed this" button in container; getState() -> the widget's state at
 * the click; controls: [{ name, label }] the embed may hide; canPlay: offer autoplay.
 */
export function createEmbedButton(container, { widget, title, getState, controls = [], canPlay = false }) {
  const doc = container.ownerDocument;
  const id = `aw-embed-${++dialogs}`;
  const make = builder(doc);

  const button = make('button', 'aw-btn aw-embed-btn', 'Embed this');
  button.type = 'button';
  button.setAttribute('aria-haspopup', 'dialog');

  const dialog = make('dialog', 'aw-embed-dialog');
  dialog.setAttribute('aria-labelledby', `${id}-title`);
  const heading = make('h3', 'aw-embed-title', `Embed \u201c${title}\u201d`);
  heading.id = `${id}-title`;
  const intro = make('p', 'aw-small', 'Paste either snippet into a page; it shows this widget as it is now, '
    + 'at this step with these numbers. The options below change both snippets.');
  const fileNote = make('p', 'aw-message', SINGLE_FILE
    ? 'This page is one file: no embed.html or element script sits beside it. Link to this view of it (below), or give '
      + 'the address where the explorer\u2019s web/ folder is served to get the iframe and element snippets.'
    : 'This page was opened from a file: the snippets work once the page is served from a web server.');
  fileNote.hidden = !SINGLE_FILE && doc.defaultView.location.protocol !== 'file:';
  const linkArea = make('textarea', 'aw-embed-code aw-embed-link');
  linkArea.id = `${id}-link`;
  linkArea.readOnly = true;
  linkArea.rows = 2;
  const linkLabel = make('label', 'aw-embed-label', 'A link to this view of the file');
  linkLabel.htmlFor = linkArea.id;
  const servedInput = make('input', 'aw-embed-served');
  servedInput.type = 'url';
  servedInput.placeholder = 'https://course.example/attention/';
  const servedLabel = make('label', 'aw-embed-option', 'The explorer is served at ');
  servedLabel.append(servedInput);
  const singleFileBox = make('div', 'aw-embed-block aw-embed-single');
  singleFileBox.append(linkLabel, linkArea, servedLabel);
  singleFileBox.hidden = !SINGLE_FILE;
  const fields = {};
  const options = make('fieldset', 'aw-embed-options');
  options.append(make('legend', '', 'Options'));
  const field = (labelText, input) => {
    const label = make('label', 'aw-embed-option');
    if (input.type === 'checkbox') label.append(input, ` ${labelText}`);
    else label.append(`${labelText} `, input);
    return label;
  };
  const theme = make('select', 'aw-embed-theme');
  for (const [value, text] of [['light', 'Light'], ['dark', 'Dark'], ['auto', 'As the reader’s system (auto)']]) {
    theme.append(new Option(text, value));
  }
  const checkbox = (className, checked) => {
    const box = make('input', className);
    box.type = 'checkbox';
    box.checked = checked;
    return box;
  };
  const autoplay = checkbox('aw-embed-autoplay', false);
  const shown = controls.map(({ name, label }) => {
    const box = checkbox('aw-embed-control', true);
    box.value = name;
    return field(label, box);
  });
  const layout = make('select', 'aw-embed-layout');
  layout.append(new Option('Compact: fits a slide or a page at one height', 'compact'),
                new Option('Full: everything, as tall as it needs', 'full'));
  // Choosing a layout chooses its controls too; each can still be changed.
  const showControlsOf = (value) => {
    for (const box of options.querySelectorAll('.aw-embed-control')) {
      box.checked = value === 'full' || COMPACT_CONTROLS.includes(box.value) || (widget !== 'walkthrough' && box.value === 'controls');
    }
  };
  layout.addEventListener('change', () => showControlsOf(layout.value));
  options.append(field('Layout', layout));
  options.append(field('Theme', theme));
  if (canPlay) options.append(field('Start playing on load', autoplay));
  if (shown.length) {
    const group = make('div', 'aw-embed-controls');
    group.append(make('span', 'aw-embed-controls-title', 'Show:'), ...shown);
    options.append(group);
  }
  showControlsOf(layout.value);
  const chosenOptions = () => {
    const boxes = [...options.querySelectorAll('.aw-embed-control')];
    const checked = boxes.filter((box) => box.checked).map((box) => box.value);
    return { layout: layout.value, theme: theme.value, autoplay: canPlay && autoplay.checked,
             controls: checked.length === boxes.length ? null : checked };
  };
  let stateAtOpen = null;
  const fill = () => {
    const base = SINGLE_FILE ? servedBase(servedInput.value) : undefined;
    const snippets = SINGLE_FILE && !base
      ? { iframe: 'Give the address where the explorer is served, above, first.', element: 'Give the address where the explorer is served, above, first.' }
      : embedSnippets(widget, stateAtOpen, title, chosenOptions(), base);
    for (const [key, { area, status }] of Object.entries(fields)) {
      area.value = snippets[key];
      status.textContent = '';
    }
    if (SINGLE_FILE) linkArea.value = singleFileLink(doc, widget, stateAtOpen);
  };
  options.addEventListener('change', fill);
  servedInput.addEventListener('input', fill);

  const close = make('button', 'aw-btn aw-embed-close', 'Close');
  close.type = 'button';
  close.addEventListener('click', () => dialog.close());
  dialog.append(
    heading, intro, fileNote, singleFileBox, options,
    snippetBlock(make, `${id}-iframe`, 'iframe', 'As an iframe', 'Works on any site that allows iframes; the script lets it grow with its content, with no scrollbar.', fields),
    snippetBlock(make, `${id}-element`, 'element', 'As a custom element', 'One script tag; the widget\u2019s styles stay inside it (shadow DOM).', fields),
    close,
  );

  button.addEventListener('click', () => {
    stateAtOpen = getState();
    fill();
    dialog.showModal();
    fields.iframe.area.focus();
    fields.iframe.area.select();
    fields.iframe.area.scrollTop = 0; // select() scrolled to its end
  });
  dialog.addEventListener('close', () => button.focus());
  // A click on the backdrop (outside the dialog's box) closes it too.
  dialog.addEventListener('click', (event) => {
    if (event.target !== dialog) return;
    const box = dialog.getBoundingClientRect();
    const inside = event.clientX >= box.left && event.clientX <= box.right
      && event.clientY >= box.top && event.clientY <= box.bottom;
    if (!inside) dialog.close();
  });

  container.append(button, dialog);
  return {
    element: button,
    dialog,
    destroy() {
      button.remove();
      dialog.remove();
    },
  };
}
