// Every widget by name, and the one way to mount one: the page (app.js), the
// iframe embed (embed.js) and the custom element (attention-walkthrough.js)
// all come through mountWidget, which adds what every widget shares: the
// "Embed this" button, the walkthrough's export buttons, the choice of
// controls and the theme.
//
//   await loadWidget(name); then
//   mountWidget(name, element, { engine, presets?, state?, onChange?,
//                                controls?, theme?, autoplay?,
//                                openWalkthrough?, heading? }) -> the widget
//   openWalkthrough(state): on a page with the walkthrough, shows it in
//   that state (the trainer opens a head there); elsewhere a link does
//   heading: the id of the page's heading for the section, which then
//   names it in place of the widget's own title
//   controls: null (all) or a list of CONTROL_NAMES[name] to show
//   theme: 'light' | 'dark' | 'auto' (follows prefers-color-scheme)
//   the widget's `drawn`, where it has one, resolves once its first drawing
//   is on screen, which waits for a worker or a download (the trainer, the
//   model): the page lands a link below such a section only then
//
// Embeds describe a widget's state as text (URL parameters or element
// attributes): preset, step (from 1, as on screen) and v, the edited values
// of the walkthrough or the whole state of a section, as compact JSON.

import { mount as walkthrough } from './walkthrough.js';
import { parseExercises } from './walkthrough-exercise.js';
import { createEmbedButton } from '../ui/embed-button.js';
import { createExportBar } from '../ui/export.js';

// The walkthrough comes with this module; a section's code is fetched the
// first time it is needed (loadWidget), so the page loads a section when
// the reader scrolls to it. Bundlers inline these imports.
export const WIDGETS = {
  walkthrough: { load: async () => ({ mount: walkthrough }), title: 'Attention, step by step' },
  plane: { load: () => import('./plane.js'), title: 'Attention on a plane' },
  masks: { load: () => import('./masks.js'), title: 'Attention masks' },
  scaling: { load: () => import('./scaling.js'), title: 'Why scale by \u221ad_k' },
  multihead: { load: () => import('./multihead.js'), title: 'Multi-head attention' },
  'cross-attention': { load: () => import('./cross-attention.js'), title: 'Self- and cross-attention' },
  alignment: { load: () => import('./alignment.js'), title: 'Bahdanau and Luong attention' },
  efficient: { load: () => import('./efficient.js'), title: 'Cheaper attention' },
  online: { load: () => import('./online.js'), title: 'The online softmax, tile by tile' },
  block: { load: () => import('./block.js'), title: 'A whole transformer block' },
  trainer: { load: () => import('./trainer.js'), title: 'Watch attention learn' },
  model: { load: () => import('./model.js'), title: 'Attention in a real model' },
};

const mounts = { walkthrough };

/** Fetches a widget's code once; mountWidget needs it loaded. */
export async function loadWidget(name) {
  if (!Object.hasOwn(WIDGETS, name)) throw new Error(`loadWidget: no widget called ${JSON.stringify(name)}`);
  mounts[name] ??= (await WIDGETS[name].load()).mount;
}

// What each control name hides, as CSS (style.css: .aw-root[data-aw-hide~=name]).
export const CONTROL_NAMES = {
  walkthrough: ['preset', 'player', 'editor', 'errata', 'export', 'embed'],
  section: ['controls', 'export', 'embed'],
};

// How the "Embed this" dialog names each control.
const CONTROL_LABELS = {
  preset: 'the example menu',
  player: 'the player',
  editor: '\u201cChange the numbers\u201d',
  errata: 'the errata list',
  export: 'the export buttons',
  embed: 'the \u201cEmbed this\u201d button',
  controls: 'the section\u2019s controls',
};

export const THEMES = ['light', 'dark', 'auto'];
// 'compact': a fixed height that fits a 1280 × 720 slide, whatever the step
// (what does not fit scrolls inside); 'full': the widget's natural height.
export const LAYOUTS = ['full', 'compact'];
// Room left below a step's payoff when its pane scrolls to show it (px).
const PAYOFF_MARGIN = 12;

const controlNamesOf = (name) => CONTROL_NAMES[name === 'walkthrough' ? 'walkthrough' : 'section'];

/** 'player,editor' -> ['player', 'editor']; 'none' -> []; empty or missing -> null (all). */
export function parseControls(text) {
  if (text === null || text === undefined || text.trim() === '' || text.trim() === 'all') return null;
  if (text.trim() === 'none') return [];
  return text.split(',').map((part) => part.trim()).filter(Boolean);
}

// Every option's name (embed.js also reads id and parentOrigin; an element
// has its base, deck-keys and the attributes of any HTML element).
const OPTION_NAMES = ['widget', 'preset', 'step', 'view', 'v', 'values', 'check', 'backward', 'controls', 'theme', 'autoplay',
  'layout', 'exercises'];
const NOT_OPTIONS = new Set(['id', 'parentorigin', 'base', 'deck-keys', 'class', 'style', 'title', 'hidden', 'lang',
  'dir', 'tabindex', 'slot', 'part', 'role', 'nonce', 'is', 'inert', 'autofocus', 'draggable', 'translate', 'spellcheck', 'exportparts']);

/**
 * The notice for a name that is not an option, naming the one it most
 * likely meant: compact=1 -> layout=compact, Step -> step. write(name,
 * value) spells an option as the embed does (layout=compact or
 * layout="compact").
 */
function unknownOptionNotice(name, write) {
  const lower = name.toLowerCase();
  const meant = (option, value) => `\u201c${name.slice(0, 40)}\u201d is not an option; did you mean ${write(option, value)}?`;
  if (LAYOUTS.includes(lower)) return meant('layout', lower);
  if (THEMES.includes(lower)) return meant('theme', lower);
  if (Object.values(CONTROL_NAMES).flat().includes(lower)) return meant('controls', lower);
  const spelled = OPTION_NAMES.find((option) => option.toLowerCase() === lower.replace(/[-_]/g, ''));
  if (spelled) return meant(spelled, '\u2026');
  return `\u201c${name.slice(0, 40)}\u201d is not an option (the options are ${OPTION_NAMES.join(', ')}); it was left out.`;
}

/** A step from a link or an attribute (counted from 1) counted from 0,
 * or the text itself when it is not a number. */
export function stepFromText(text) {
  const step = Number.parseInt(text, 10);
  return Number.isInteger(step) ? step - 1 : text;
}

/**
 * Reads the embed options from text values (URL parameters or attributes):
 * get(name) returns the text or null. Unknown widgets fall back to the
 * walkthrough with a notice. names (the parameters or attributes given)
 * and write(name, value) (how the embed spells one) let a name that is not
 * an option, or a layout or theme that is not one, get a notice too.
 */
// exercises=on|off|<cells> ("weights:0:1,output:0:0"): Your turn's
// exercises, off unless asked for; a list that does not read gets a notice.
function exercisesOption(text, notices) {
  if (text === null || text === 'on' || text === 'off') return text ?? 'off';
  try {
    return parseExercises(text);
  } catch (error) {
    notices.push(`exercises: ${error.message}; asking none.`);
    return 'off';
  }
}

export function embedOptions(get, { names = [], write = (name, value) => `${name}=${value}` } = {}) {
  const notices = [];
  for (const name of names) {
    const lower = name.toLowerCase();
    if (OPTION_NAMES.includes(name) || NOT_OPTIONS.has(lower) || /^(data-|aria-|on)/.test(lower)) continue;
    notices.push(unknownOptionNotice(name, write));
  }
  for (const [option, allowed] of [['layout', LAYOUTS], ['theme', THEMES]]) {
    const value = get(option);
    if (value !== null && !allowed.includes(value)) {
      notices.push(`${option} \u201c${value.slice(0, 40)}\u201d is not one of ${allowed.join(', ')}; showing ${allowed === LAYOUTS ? 'full' : 'light'}.`);
    }
  }
  let name = get('widget') ?? 'walkthrough';
  if (!Object.hasOwn(WIDGETS, name)) {
    notices.push(`There is no widget called \u201c${name.slice(0, 40)}\u201d; showing the walkthrough.`);
    name = 'walkthrough';
  }
  const state = {};
  let values;
  const v = get('v') ?? get('values');
  if (v) {
    try {
      values = JSON.parse(v);
    } catch {
      notices.push('The edited values could not be read; showing the example\u2019s own numbers.');
    }
  }
  if (name === 'walkthrough') {
    if (get('preset') !== null) state.preset = get('preset');
    // Counted from 0 inside; a text that is no number goes on as it is,
    // for the walkthrough to say so.
    if (get('step') !== null) state.step = stepFromText(get('step'));
    if (values !== undefined) state.values = values;
    if (get('backward') === '1') state.backward = true;
    if (get('view') !== null) state.view = get('view');
    // The numbers pasted into Check your own numbers, as typed.
    try {
      if (get('check') !== null) state.check = JSON.parse(get('check'));
    } catch {
      notices.push('The numbers to check could not be read; showing the example without them.');
    }
  } else if (values && typeof values === 'object') {
    Object.assign(state, values);
  }
  const theme = THEMES.includes(get('theme')) ? get('theme') : 'light';
  const autoplay = ['1', 'true', ''].includes(get('autoplay') ?? 'no');
  const layout = LAYOUTS.includes(get('layout')) ? get('layout') : 'full';
  const exercises = exercisesOption(get('exercises'), notices);
  return { name, state, controls: parseControls(get('controls')), theme, autoplay, layout, exercises, notices };
}

export function mountWidget(name, element, {
  engine, presets, state = {}, onChange, controls = null, theme = null, autoplay = false, layout = 'full', openWalkthrough, heading = null,
  exercises = 'off', onStatement,
}) {
  const entry = WIDGETS[name];
  if (!entry) throw new Error(`mountWidget: no widget called ${JSON.stringify(name)}`);
  if (!mounts[name]) throw new Error(`mountWidget: ${name} is not loaded yet (await loadWidget(${JSON.stringify(name)}))`);
  // A page whose own heading (the element with id `heading`) names the
  // section keeps one heading: the section is built without its title
  // (sections-common.js, sectionRoot).
  if (heading) element.dataset.awHeading = heading;
  const widget = mounts[name](element, { engine, presets, state, onChange, openWalkthrough, exercises, onStatement });
  const root = element.lastElementChild;
  const doc = element.ownerDocument;

  const bar = doc.createElement('div');
  bar.className = 'aw-share';
  const parts = [];
  if (name === 'walkthrough') {
    parts.push(createExportBar(bar, { engine, getInput: widget.exportInput, getErrata: widget.exportErrata }));
    // Under the step, before the errata: the first screen is the example, its overview and the player.
    (root.querySelector('.aw-stage') ?? root.querySelector('.aw-head'))?.after(bar);
  } else {
    root.querySelector('.aw-section-title')?.after(bar);
  }
  parts.push(createEmbedButton(bar, {
    widget: name,
    title: entry.title,
    getState: widget.getState,
    controls: controlNamesOf(name).map((control) => ({ name: control, label: CONTROL_LABELS[control] })),
    canPlay: Boolean(root.querySelector('.aw-play')),
  }));
  // A section on the page (its chapter heading outside it): the bar closes it.
  if (!bar.isConnected) root.append(bar);

  if (controls) {
    const hidden = controlNamesOf(name).filter((control) => !controls.includes(control));
    root.dataset.awHide = hidden.join(' ');
  }
  if (theme) root.dataset.awTheme = theme;
  if (layout === 'compact') {
    root.dataset.awLayout = 'compact';
    // The step first: the editor, open beside it on a wide page, starts closed here.
    const editor = root.querySelector('details.aw-edit');
    if (editor) editor.open = false;
    // Its step and its views (figure, matrices, ...) scroll inside: named regions a keyboard can reach.
    const regions = { 'aw-explain': 'The step', 'aw-visuals': 'The step\u2019s views' };
    for (const [className, label] of Object.entries(regions)) {
      const region = root.querySelector(`.aw-stage > .${className}`);
      if (!region) continue;
      region.tabIndex = 0;
      region.setAttribute('role', 'region');
      region.setAttribute('aria-label', label);
    }
    const views = root.querySelector('.aw-stage > .aw-visuals');
    if (views) parts.push(keepPayoffInView(views, root));
  }
  const reduced = doc.defaultView.matchMedia?.('(prefers-reduced-motion: reduce)').matches;
  if (autoplay && !reduced) root.querySelector('.aw-play')?.click();

  return {
    ...widget,
    destroy() {
      for (const part of parts) part.destroy();
      bar.remove();
      widget.destroy();
    },
  };
}

/**
 * In the compact layout the step's views scroll inside their pane, and its
 * figure ends with the step's payoff (the sum of the products, the softmax
 * bars, the stacked output): each new step starts its pane at the top and
 * scrolls it only as far as that end needs to show. The step is new when
 * its title (in `root`) changes (an edit redraws the figure under the same title).
 */
function keepPayoffInView(pane, root) {
  let title = null;
  let frame = 0;
  const reveal = () => {
    frame = 0;
    const heading = root.querySelector('.aw-step-title')?.textContent ?? '';
    if (heading === title) return;
    title = heading;
    pane.scrollTop = 0;
    const figure = pane.querySelector('.aw-fig');
    if (!figure) return;
    const end = (figure.querySelector('.aw-fig-total') ?? figure).getBoundingClientRect();
    const box = pane.getBoundingClientRect();
    // A slide deck may scale the widget: client pixels to the pane's own.
    const scale = box.height / pane.offsetHeight || 1;
    const below = (end.bottom - box.bottom) / scale;
    if (below > 0) pane.scrollTop = Math.ceil(below) + PAYOFF_MARGIN;
  };
  const observer = new MutationObserver(() => {
    frame ||= requestAnimationFrame(reveal);
  });
  observer.observe(pane, { childList: true, subtree: true, characterData: true });
  frame = requestAnimationFrame(reveal);
  return {
    destroy() {
      observer.disconnect();
      cancelAnimationFrame(frame);
    },
  };
}
