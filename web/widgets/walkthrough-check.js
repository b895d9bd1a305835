// "Check your own numbers": a box beside the walkthrough's editor where a
// learner or a course author pastes the tables they computed (a Markdown
// table, CSV or tab-separated rows, a LaTeX tabular or bmatrix, or plain
// rows, the engine's own Markdown, LaTeX and text tables among them) for
// any result the walkthrough shows. It only reads the paste
// (ui/printed-table.js); the engine's check, run by the walkthrough, says
// which numbers are wrong and why in the box's verdict, right under the
// paste and brought into view as it changes. A paste it cannot read gets
// its message there instead, with the line and column.
//
//   mount(element, { onChange }) -> { verdict, setFields(fields), setTexts(texts), report(text), destroy() }
//   fields: [{ key, label }], the printed keys the walkthrough shows
//   ("weights", "heads.0.weights"); texts: { key: pasted text }.
//   onChange({ texts, printed, decimals }) after each edit: the texts as
//   typed, and the numbers of those that read (printed, decimals by key).
//   verdict: { box, title, body }, for the walkthrough to fill with the
//   check's result (walkthrough-errata.js); its title is read out when the
//   learner leaves the box: while they type, the messages change with
//   every key and are shown, not read out.

import { parsePrinted } from '../ui/printed-table.js';
import { builder } from '../ui/dom.js';

let boxes = 0; // for the ids of each box's message

export function mount(element, { onChange = () => {} } = {}) {
  const doc = element.ownerDocument;
  const make = builder(doc);
  const box = make('details', 'aw-check');
  const summary = make('summary', 'aw-check-summary');
  summary.append(make('h3', '', 'Check your own numbers'));
  const intro = make('p', 'aw-check-intro', 'Paste a table you computed by hand for this example: a Markdown table, '
    + 'rows copied from a spreadsheet, CSV, a LaTeX tabular or bmatrix, or rows of numbers. The engine checks each '
    + 'number to the decimals you wrote and says what slip explains those that differ.');
  const label = make('label', 'aw-check-label', 'Result ');
  const select = make('select', 'aw-check-field');
  label.append(select);
  const area = make('textarea', 'aw-check-text');
  area.rows = 5;
  area.spellcheck = false;
  const error = make('p', 'aw-check-error');
  error.id = `aw-check-error-${++boxes}`;
  area.setAttribute('aria-describedby', error.id);
  const verdict = { box: make('div', 'aw-check-verdict'), title: make('p', 'aw-check-verdict-title'),
    body: make('div', 'aw-check-verdict-body') };
  verdict.box.append(verdict.title, verdict.body);
  verdict.box.hidden = true;
  const said = make('p', 'aw-visually-hidden');
  said.setAttribute('role', 'status');
  box.append(summary, intro, label, area, error, verdict.box, said);
  element.append(box);

  let fields = [];
  let texts = {};

  const labelOf = (key) => fields.find((field) => field.key === key)?.label ?? key;

  function read() {
    const printed = {};
    const decimals = {};
    const problems = [];
    for (const [key, text] of Object.entries(texts)) {
      try {
        const table = parsePrinted(text);
        printed[key] = table.values;
        decimals[key] = table.decimals;
      } catch (failure) {
        if (failure.name !== 'PasteError') throw failure;
        problems.push(`${labelOf(key)}, ${failure.message}`);
      }
    }
    error.textContent = problems.length > 0 ? `Could not read ${problems.join('; ')}.` : '';
    return { printed, decimals };
  }

  function changed() {
    onChange({ texts: { ...texts }, ...read() });
    // The result where the learner is looking: its first line in view,
    // scrolling only when it is not (a long list may run on below).
    const shown = error.textContent ? error : verdict.box.hidden ? null : verdict.title;
    shown?.scrollIntoView({ block: 'nearest' });
  }

  function showField() {
    area.value = texts[select.value] ?? '';
    area.setAttribute('aria-label', `Your numbers for ${labelOf(select.value)}`);
  }

  select.addEventListener('change', showField);
  area.addEventListener('input', () => {
    if (area.value.trim() === '') delete texts[select.value];
    else texts[select.value] = area.value;
    changed();
  });
  area.addEventListener('change', () => {
    said.textContent = error.textContent || verdict.title.textContent;
  });

  return {
    verdict,
    /** The results one can paste numbers for; texts for others are dropped. */
    setFields(next) {
      const keys = next.map((field) => field.key);
      if (keys.join() === fields.map((field) => field.key).join()) return;
      fields = next;
      select.replaceChildren(...next.map(({ key, label: text }) => {
        const option = make('option', '', text);
        option.value = key;
        return option;
      }));
      const kept = Object.keys(texts).find((key) => keys.includes(key));
      texts = Object.fromEntries(Object.entries(texts).filter(([key]) => keys.includes(key)));
      select.value = kept ?? keys.find((key) => key.endsWith('weights')) ?? keys[0] ?? '';
      showField();
    },
    /** Texts from a saved state (the address): those kept, and the numbers they hold. */
    setTexts(next = {}) {
      texts = Object.fromEntries(Object.entries(next).filter(([key, text]) => typeof text === 'string'
        && fields.some((field) => field.key === key)));
      const first = Object.keys(texts)[0];
      if (first) select.value = first;
      if (Object.keys(texts).length > 0) box.open = true;
      showField();
      return { texts: { ...texts }, ...read() };
    },
    /** A message at the box (the engine's, when it cannot check the numbers). */
    report(text) {
      error.textContent = text;
    },
    destroy() {
      box.remove();
    },
  };
}
