// The Markdown that `build/attn --format markdown` prints (and the page's
// "Copy as Markdown" copies), read by markdown-it, a CommonMark parser with
// GitHub's tables: for every preset of the page, random problems of every
// kind and option, a matrix too large to show whole and token labels made of
// Markdown's special characters, every table written parses as a table with
// as many cells in each row as in its header, no cell turns into emphasis, a
// link or HTML, and the labels come back exactly as typed.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import MarkdownIt from 'markdown-it';
import { cliFormat, exportProblems } from './exports.mjs';

// Labels that Markdown would read as markup if written as they are.
// A line break in a label would end a table row: it is written as a space.
const HOSTILE_LABELS = ['<pad>', 'a_b_c', 'x|y ~~z~~', '*s* **b**', '`c`', '[l](u)', '#h &amp;', 'a\\b\nc'];
const AS_READ = HOSTILE_LABELS.map((label) => label.replace('\n', ' '));

const markdown = new MarkdownIt();
const MARKUP = '\u0000'; // stands in a cell's text for anything that is not plain text or code

/** A cell's text as a reader sees it; markup other than text and code becomes MARKUP + its type. */
const cellText = (inline) => inline.children
  .map((child) => (child.type === 'text' || child.type === 'code_inline' ? child.content : `${MARKUP}${child.type}`))
  .join('');

/** The tables of a Markdown text as parsed: [{ header: [text], rows: [[text]] }]. */
function tablesOf(text) {
  const tables = [];
  let table = null;
  let row = null;
  for (const token of markdown.parse(text, {})) {
    if (token.type === 'table_open') tables.push(table = { header: [], rows: [] });
    else if (token.type === 'tr_open') row = [];
    else if (token.type === 'tr_close') {
      if (table.header.length === 0) table.header = row;
      else table.rows.push(row);
    } else if (token.type === 'inline' && row) row.push(cellText(token));
    else if (token.type === 'table_close') { table = null; row = null; }
  }
  return tables;
}

const separatorLines = (text) => text.split('\n').filter((line) => /^\|(\s*:?-+:?\s*\|)+$/.test(line));

test('every Markdown walkthrough parses into whole tables, with no stray markup and the labels as typed', () => {
  for (const { name, problem } of exportProblems(HOSTILE_LABELS)) {
    const text = cliFormat(problem, 'markdown');
    const tables = tablesOf(text);
    const separators = separatorLines(text);
    assert.equal(tables.length, separators.length, `${name}: every table written is read as one`);
    tables.forEach((table, t) => {
      const width = separators[t].split('|').length - 2;
      assert.equal(table.header.length, width, `${name}: table ${t + 1}'s header`);
      table.rows.forEach((cells, r) => assert.equal(cells.length, width, `${name}: table ${t + 1}, row ${r + 1}`));
      for (const cell of [...table.header, ...table.rows.flat()]) {
        assert.ok(!cell.includes(MARKUP), `${name}: table ${t + 1} has a cell read as markup: ${JSON.stringify(cell)}`);
      }
    });
    if (name !== 'labelled problem') continue;
    const [q] = tables;
    assert.deepEqual(q.rows.map((cells) => cells[0]), AS_READ, 'the labels of Q\u2019s rows');
    const scores = tables.find((table) => table.header.slice(1).join() === AS_READ.join());
    assert.ok(scores, 'a table headed by the labels (the scores)');
  }
});

test('control characters in labels are written escaped in text, Markdown and LaTeX, so no ESC sequence reaches a terminal', () => {
  // An OSC sequence that sets a terminal's title, BEL, and CSI as C1 (U+009B).
  const problem = {
    kind: 'scaledDotProduct', q: [[1, 0], [0, 1]], k: [[1, 0], [0, 1]], v: [[1], [2]],
    tokens: ['a\u001b]0;pwned\u0007', 'b\u009bc'],
  };
  // LaTeX writes the backslash as a command, so that TeX prints it.
  const backslash = { text: '\\', markdown: '\\', latex: '\\textbackslash{}' };
  for (const format of ['text', 'markdown', 'latex']) {
    const written = cliFormat(problem, format);
    const controls = [...written].filter((c) => c !== '\n' && (c < ' ' || (c >= '\u007f' && c <= '\u009f')));
    assert.deepEqual(controls, [], format);
    const shown = backslash[format];
    assert.ok(written.includes(`a${shown}x1b`) && written.includes(`pwned${shown}x07`), `${format}: ESC and BEL shown as \\x1b, \\x07`);
    assert.ok(written.includes(`b${shown}u009bc`), `${format}: C1 CSI shown as \\u009b`);
  }
});
