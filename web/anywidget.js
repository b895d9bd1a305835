// The walkthrough (or any section) as an anywidget front-end module: what
// Jupyter (through Python's anywidget), Colab, VS Code, marimo and MyST's
// {anywidget} directive load. Built self-contained into
// web/dist/attention-anywidget.mjs (scripts/build-element.mjs): the engine,
// styles and presets inside, nothing fetched, since a host loads the module
// from text.
//
// The model's traits are the element's attributes: widget, preset, step
// (from 1), values (an object, or its JSON), layout, controls (a list or
// 'player,editor'), theme, exercises (Your turn: 'on', 'off' or cells). A change of one follows in the same view: step,
// preset and values move the widget, the others redraw it inside the same
// element. Steps and edits the reader makes go back to the model (step,
// preset, values), so Python sees where the reader is; so does the score of
// Your turn's exercises (score, max_score), as each is answered.

import './attention-walkthrough.js';

const TRAITS = ['widget', 'preset', 'step', 'values', 'layout', 'controls', 'theme', 'exercises'];

/** A trait's value as the attribute's text, or null for none. */
function attributeText(name, value) {
  if (value === null || value === undefined || value === '') return null;
  // traitlets' Dict starts empty: no edited values.
  if (name === 'values' && typeof value === 'object' && Object.keys(value).length === 0) return null;
  if (name === 'values') return typeof value === 'string' ? value : JSON.stringify(value);
  if (name === 'controls' && Array.isArray(value)) return value.length ? value.join(',') : 'none';
  return String(value);
}

function setAttribute(element, name, text) {
  if (text === null) element.removeAttribute(name);
  else if (element.getAttribute(name) !== text) element.setAttribute(name, text);
}

export default {
  render({ model, el }) {
    const element = document.createElement('attention-walkthrough');
    for (const name of TRAITS) setAttribute(element, name, attributeText(name, model.get(name)));

    const listeners = TRAITS.map((name) => {
      const listener = () => setAttribute(element, name, attributeText(name, model.get(name)));
      model.on(`change:${name}`, listener);
      return [`change:${name}`, listener];
    });

    // The reader's moves, back to the model (and the attributes, so that a
    // later redraw, say of the theme, keeps them); and, once it is drawn,
    // where the widget is, so that a step past the last (999) reads the
    // last, as the view shows it.
    const sendBack = (state) => {
      const next = { step: state.step, preset: state.preset, values: state.values ?? null };
      let changed = false;
      for (const [name, value] of Object.entries(next)) {
        if (value === undefined || JSON.stringify(model.get(name) ?? null) === JSON.stringify(value)) continue;
        model.set(name, value);
        changed = true;
      }
      if (changed) model.save_changes();
    };
    element.addEventListener('attention-change', ({ detail }) => sendBack(detail));
    element.addEventListener('attention-xapi', () => {
      const { score, max } = element.widget.exercises();
      model.set('score', score);
      model.set('max_score', max);
      model.save_changes();
    });
    element.addEventListener('attention-ready', () => sendBack(element.widget.getState()));

    el.append(element);
    return () => {
      for (const [event, listener] of listeners) model.off(event, listener);
      element.remove();
    };
  },
};
