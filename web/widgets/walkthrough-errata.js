// Errata: the numbers a tutorial printed, as the engine's check finds and
// explains them (attn.check, src/check/): which printed numbers the exact
// values do not round to, grouped by cause, each group with the engine's
// sentence. This module renders that report: it attaches each erratum to
// the first step that computes its cell and names the cell as the page
// does; it decides nothing about which numbers are wrong or why.
//
// The engine reports a printed key and an index in it, as in tests/vectors:
// a result's name (`weights`), a head's (`heads.0.weights`: the page shows
// head 1), or one row (`output_row2`, `exp_row0`). The page's cells are
// [i, j] in its matrices (a vector query is row 0), [i] for a row's sum and
// [i, j, c] for the terms w_ij·v_jc of output row i; `exp_row<i>` and
// `sum_row<i>` are the tutorial's own softmax, without subtracting the row's
// largest (the page's expUnshifted and sumUnshifted, on the softmax step).

import { formatNumber } from '../ui/format.js';
import { builder } from '../ui/dom.js';

const ROW_KEY = /^(scores|scaled|weights|output|terms|exp|sum)_row(\d+)$/;
const ROW_FIELDS = { exp: 'expUnshifted', sum: 'sumUnshifted' };
// Printed numbers checked with the cells of a field the steps produce:
// for weight [i, j], the percent at [i, j], the unshifted exp at [i, j] and the row's sum at [i].
const CHECKED_WITH = {
  weights: [['weightsPercent', (path) => path], ['expUnshifted', (path) => path], ['sumUnshifted', ([i]) => [i]]],
};

/** The page's cell of an engine erratum, or null for one the page does not show. */
function pageCell({ field, index }, vector) {
  const head = /^heads\.(\d+)\.(.+)$/.exec(field);
  if (head) return head[1] === '0' ? { field: head[2], path: index } : null;
  const row = ROW_KEY.exec(field);
  if (row) return { field: ROW_FIELDS[row[1]] ?? row[1], path: [Number(row[2]), ...index] };
  return { field, path: vector ? [0, ...index] : index };
}

/**
 * The engine's check of the preset's printed numbers against `input` (the
 * problem on screen), in step order: { stepIndex, repeat, field, path,
 * printed, exact, decimals, group }, repeat being the { index, title } of
 * the repeat of the step that computes it (null outside one), group
 * { cause, explanation } shared by the errata of one cause.
 */
export function errataOf(preset, model, steps, { vector = false, engine, input } = {}) {
  if (!preset.printed || typeof preset.printed !== 'object') return [];
  const report = engine.check(input, preset.printed, { decimals: preset.printedDecimals });
  const byCell = new Map();
  for (const erratum of report.errata) {
    const cell = pageCell(erratum, vector);
    if (cell) byCell.set(`${cell.field}:${cell.path.join(',')}`, { ...erratum, ...cell, group: report.groups[erratum.group] });
  }
  const seen = new Set();
  const list = [];
  steps.forEach((step, stepIndex) => {
    // Each cell checked, with the cell the step computes it from (itself,
    // or the weight its percent, exponential and row sum go with).
    const checks = step.produces.flatMap(({ field, cells }) => [
      ...cells.map((path) => [field, path, path]),
      ...(CHECKED_WITH[field] ?? []).flatMap(([derived, pathOf]) => cells.map((path) => [derived, pathOf(path), path])),
    ].map(([checked, path, from]) => [checked, path, `${field},${from.join(',')}`]));
    for (const [field, path, source] of checks) {
      const key = `${field}:${path.join(',')}`;
      const found = byCell.get(key);
      if (!found || seen.has(key)) continue;
      seen.add(key);
      // Where the step shows it: a step of repeats names the repeat.
      const repeat = model.repeatOf?.(stepIndex, source) ?? null;
      list.push({ stepIndex, repeat, field, path, printed: found.printed, exact: found.exact, decimals: found.decimals,
          group: found.group });
    }
  });
  return list;
}

/** "weights[cat][sat]", "max of row 1", "term sat of output[cat], entry 2". */
export function erratumName(model, { field, path }) {
  const [i, j, c] = path;
  const rows = model.qTokens;
  const cols = model.kTokens;
  if (field === 'max' || field === 'sum') return `${field} of ${rows[i]}`;
  if (field === 'terms') return `weight \u00d7 value ${cols[j]} in output[${rows[i]}], entry ${c + 1}`;
  if (field === 'weightsPercent') return `weights[${rows[i]}][${cols[j]}] in percent`;
  if (field === 'expUnshifted') return `e^scaled[${rows[i]}][${cols[j]}] (the tutorial's softmax, without subtracting the row's largest)`;
  if (field === 'sumUnshifted') return `sum of e^scaled over the row of ${rows[i]} (without subtracting the row's largest)`;
  const mat = model.mats[field];
  return mat ? `${field}[${mat.rowLabels[i]}][${mat.colLabels[j]}]` : `${field}[${path.join('][')}]`;
}

/** The sentence for one erratum, e.g. "the tutorial prints 0.38; the exact value is 0.401." */
export function erratumText(item, wrote = 'the tutorial prints') {
  const printed = item.printed === -Infinity ? '\u2212\u221e' : item.printed.toFixed(item.decimals);
  return `${wrote} ${printed}; the exact value is ${formatNumber(item.exact)}.`;
}

/**
 * The errata grouped as the engine grouped them, in its order (misprints
 * and what was computed from them, named slips, rounding): [{ cause,
 * explanation, items }].
 */
export function groupErrata(errata) {
  const groups = new Map();
  for (const item of errata) {
    if (!groups.has(item.group)) groups.set(item.group,
        { cause: item.group.cause, explanation: item.group.explanation, items: [] });
    groups.get(item.group).items.push(item);
  }
  return [...groups.values()];
}

/** The errata that the engine found to be rounding differences. */
export function roundingDifferences(groups) {
  return new Set(groups.filter((group) => group.cause === 'rounding').flatMap((group) => group.items));
}

/** What a rounding difference is, in the words of the page's quiet line per step. */
export const ROUNDING_MEANS = 'each is the exact value rounded to the printed decimals give or take one unit '
  + 'in the last digit, or what the tutorial\u2019s own rounded earlier numbers give: rounding, not a mistake.';

/** "3 last-digit rounding differences" */
export function roundingCount(count) {
  return `${count} last-digit rounding ${count === 1 ? 'difference' : 'differences'}`;
}

/** What a group says about its cause: the engine's sentence. */
export function causeText(group) {
  return group.explanation;
}

// ---- The errata on the page ----
//
// A check is what the walkthrough knows of the printed numbers on screen:
// { errata, groups, rounding, model, own, ownError, edited, printed }, own
// when they are the learner's (ownError: why the engine could not check
// them), edited when the inputs are no longer the example's, printed when
// the example has a tutorial's numbers. onGo(stepIndex, repeatIndex)
// follows an erratum to its step, and opens the repeat it is in.

/** Where an erratum is: "step 6, Softmax of the row of sat" (its repeat's title, else its step's). */
function whereText(item, steps) {
  const title = item.repeat?.title ?? steps?.[item.stepIndex]?.title;
  return `step ${item.stepIndex + 1}${title ? `, ${title}` : ''}`;
}

/** One erratum: where, and what was printed against the exact value; with onGo, a way to its step. */
function errataLine(make, check, item, onGo) {
  const line = make(onGo ? 'li' : 'p', 'aw-erratum');
  const doc = line.ownerDocument;
  const where = make('span', 'aw-erratum-where', erratumName(check.model, item));
  line.append(where, doc.createTextNode(`: ${erratumText(item, check.own ? 'you wrote' : undefined)}`));
  if (onGo) {
    const go = make('button', 'aw-link', `Go to ${item.repeat ? whereText(item) : `step ${item.stepIndex + 1}`}`);
    go.type = 'button';
    go.addEventListener('click', () => onGo(item.stepIndex, item.repeat?.index));
    line.append(doc.createTextNode(' '), go);
  }
  return line;
}

/** A step's misprints, each a callout, and its rounding differences, one quiet line, into box. */
export function renderStepErrata(box, check, current) {
  const make = builder(box.ownerDocument);
  box.replaceChildren();
  const here = check.errata.filter((e) => e.stepIndex === current);
  for (const item of here.filter((e) => !check.rounding.has(e))) box.append(errataLine(make, check, item, null));
  const rounded = here.filter((e) => check.rounding.has(e));
  if (rounded.length === 0) return;
  const line = make('details', 'aw-rounding');
  const list = make('ul', 'aw-rounding-items');
  for (const item of rounded) {
    const entry = make('li');
    entry.append(make('span', 'aw-erratum-where', erratumName(check.model, item)),
      box.ownerDocument.createTextNode(`: ${erratumText(item)}`));
    list.append(entry);
  }
  line.append(make('summary', 'aw-rounding-summary', roundingCount(rounded.length)),
              make('p', '', `The tutorial\u2019s printed value differs from the exact one; ${ROUNDING_MEANS}`), list);
  box.append(line);
}

/** The groups, each with the engine's sentence and its errata, linked to their steps. */
function appendGroups(body, make, check, onGo) {
  for (const group of check.groups) {
    const box = make('div', `aw-errata-group aw-errata-${group.cause}`);
    const ul = make('ul', 'aw-errata-items');
    for (const item of group.items) ul.append(errataLine(make, check, item, onGo));
    box.append(make('p', 'aw-errata-cause', causeText(group)), ul);
    body.append(box);
  }
}

/**
 * The errata box under the walkthrough ({ box, title, body }: a <details>,
 * its <summary> and its content): the learner's numbers if they gave some,
 * else the tutorial's; hidden when there are neither. With own (the check
 * box's verdict, alike), the learner's numbers are listed there instead,
 * at the box they were pasted into, and the errata box is hidden.
 */
export function renderErrataList({ box, title, body, own = { box, title, body } }, check, onGo) {
  const make = builder(box.ownerDocument);
  body.replaceChildren();
  own.body.replaceChildren();
  own.box.hidden = !check.own;
  box.hidden = check.own ? own.box !== box : !check.printed;
  if (check.own) {
    renderOwnErrata(own, make, check, onGo, { atBox: own.box !== box });
    return;
  }
  if (box.hidden) return;
  const { errata } = check;
  if (check.edited) {
    title.textContent = 'Tutorial comparison: not for edited inputs';
    body.append(make('p', '', 'You have changed the inputs, so the comparison with the tutorial\u2019s printed numbers no longer applies. Reset to the example to see it again.'));
    return;
  }
  if (errata.length === 0) {
    title.textContent = 'Tutorial comparison: every printed number agrees';
    body.append(make('p', '', 'Every number the tutorial prints for this example agrees with the exact value to the decimals it shows.'));
    return;
  }
  const slips = check.groups.filter((group) => group.cause !== 'rounding').length;
  title.textContent = `Errata: ${errata.length} of the tutorial\u2019s printed ${errata.length === 1 ? 'values differs' : 'values differ'} from the exact ones`
    + (slips > 0 ? `, from ${slips} ${slips === 1 ? 'slip' : 'slips'}` : '');
  body.append(make('p', '', 'Each differs from the exact value by more than the rounding of its printed decimals allows. '
    + 'They are grouped by cause: a misprint, then what the tutorial computed from it; rounding differences last.'));
  appendGroups(body, make, check, onGo);
}

// The learner's own numbers: the same list, in their words. At the check
// box, why the engine could not check them is the box's message already.
function renderOwnErrata({ box, title, body }, make, check, onGo, { atBox }) {
  const { errata } = check;
  if (check.ownError) {
    title.textContent = 'Your numbers: not checked';
    if (!atBox) body.append(make('p', '', check.ownError));
    return;
  }
  if (errata.length === 0) {
    title.textContent = 'Your numbers: every number you wrote agrees';
    body.append(make('p', '', 'Each number you pasted is the exact value rounded to the decimals you wrote.'));
    return;
  }
  box.open = true;
  title.textContent = `Your numbers: ${errata.length} of them ${errata.length === 1 ? 'differs' : 'differ'} from the exact ones`;
  appendGroups(body, make, check, onGo);
}

/**
 * The misprints (not the rounding differences) for the summary picture to
 * mark: "field,i,j" -> the number printed there, as printed; and what the
 * marks mean, naming the first slip.
 */
export function misprintMarks(check) {
  const misprints = check.errata.filter((item) => !check.rounding.has(item));
  const marked = new Map(misprints.map((item) => [[item.field, ...item.path].join(','),
    formatNumber(item.printed, item.decimals)]));
  const first = misprints[0];
  const whose = check.own ? 'your numbers give' : 'the tutorial prints';
  const markedNote = first
    ? `Outlined: values ${whose} wrong, the printed number struck through under the exact one. `
      + `The first slip is ${erratumName(check.model, first)} at ${whereText(first)}; the errata below list every one.`
    : '';
  return { marked, markedNote };
}

// ---- The errata as a section of the Markdown and LaTeX exports ----

const MARKDOWN_SPECIAL = /[\\`*_[\]<>#|]/g;
const LATEX_SPECIAL = { '\\': '\\textbackslash{}', '{': '\\{', '}': '\\}', $: '\\$', '&': '\\&', '#': '\\#',
  '%': '\\%', _: '\\_', '~': '\\textasciitilde{}', '^': '\\textasciicircum{}', '\u2212': '\\ensuremath{-}',
  '\u00d7': '\\ensuremath{\\times}', '\u221a': '\\ensuremath{\\surd}', '\u2192': '\\ensuremath{\\to}',
  '\u2019': "'", '\u201c': '``', '\u201d': "''", '\u2026': '\\ldots{}' };
const LATEX_PATTERN = /[\\{}$&#%_~^\u2212\u00d7\u221a\u2192\u2019\u201c\u201d\u2026]/g;

const EXPORT_STYLES = {
  markdown: {
    escape: (text) => text.replace(MARKDOWN_SPECIAL, '\\$&'),
    heading: (text) => `## ${text}\n\n`,
    paragraph: (text) => `${text}\n\n`,
    list: (items) => `${items.map((item) => `- ${item}`).join('\n')}\n\n`,
  },
  latex: {
    escape: (text) => text.replace(LATEX_PATTERN, (c) => LATEX_SPECIAL[c]),
    heading: (text) => `\\subsubsection*{${text}}\n\n`,
    paragraph: (text) => `${text}\n\n`,
    list: (items) => `\\begin{itemize}\n${items.map((item) => `  \\item ${item}`).join('\n')}\n\\end{itemize}\n\n`,
  },
};

/**
 * The errata of a preset, or of the learner's own numbers (own), as a
 * section to append to the engine's Markdown or LaTeX walkthrough: the same
 * groups and sentences as the page's list, each erratum with the step that
 * computes its value. '' when there are none.
 */
export function errataSection(style, model, steps, groups, { own = false } = {}) {
  const out = EXPORT_STYLES[style];
  const count = groups.reduce((sum, group) => sum + group.items.length, 0);
  if (!out || count === 0) return '';
  const slips = groups.filter((group) => group.cause !== 'rounding').length;
  const whose = own ? 'your' : 'the tutorial\u2019s';
  let text = out.heading(out.escape(`Errata: ${count} of ${whose} printed ${count === 1 ? 'values differs' : 'values differ'} from the exact ones`));
  text += out.paragraph(out.escape('Each differs from the exact value by more than the rounding of its printed decimals allows. '
    + (slips > 0 ? `They come from ${slips} ${slips === 1 ? 'slip' : 'slips'}, each followed by what was computed from it; rounding differences last.` : 'All are rounding differences.')));
  for (const group of groups) {
    text += out.paragraph(out.escape(causeText(group)));
    text += out.list(group.items.map((item) => out.escape(`${erratumName(model, item)}: ${erratumText(item, own ? 'you wrote' : undefined)} (${whereText(item, steps)})`)));
  }
  return text;
}
