// The reader of pasted tables behind "Check your own numbers"
// (web/ui/printed-table.js), in Node: every format a learner pastes gives
// the same numbers with the decimals as written, and what it cannot read
// is named by line and column.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parsePrinted } from '../../web/ui/printed-table.js';

const WANT = { values: [[0.433, 0.28], [-Infinity, 0.5]], decimals: [[3, 2], [0, 1]] };

test('Markdown, CSV, tab-separated, LaTeX tabular and bmatrix, and plain rows read alike', () => {
  const pastes = {
    markdown: '|     | cat   | sat  |\n|-----|:-----:|-----:|\n| cat | 0.433 | 0.28 |\n| sat | -inf  | 0.5  |',
    csv: '0.433,0.28\n-inf,0.5\n',
    tsv: 'cat\t0.433\t0.28\r\nsat\t\u2212\u221e\t0.5',
    tabular: '\\begin{tabular}{cc}\n\\hline\n0.433 & 0.28 \\\\\n$-\\infty$ & 0.5 \\\\ \\hline\n\\end{tabular}',
    bmatrix: '\\begin{bmatrix}\n0.433 & 0.28 \\\\\n-\\infty & 0.5\n\\end{bmatrix}',
    plain: '  0.433   0.28\n\n  null    0.5  ',
  };
  for (const [format, text] of Object.entries(pastes)) assert.deepEqual(parsePrinted(text), WANT, format);
});

test('one row is a vector; trailing zeros, a minus sign, exponents and percentages keep what was written', () => {
  assert.deepEqual(parsePrinted('0.380 \u22120.000 1.5e-3 43%'), { values: [0.38, -0, 0.0015, 43], decimals: [3, 3, 1, 0] });
});

test('what cannot be read is named by its line and column', () => {
  const cases = [
    ['0.5 0.5\n0.5 0,5x', 'line 2, column 5: "0,5x" is not a number'],
    ['0.5,0.5\n0.5', 'line 2, column 1: 1 number, but line 1 has 2'],
    ['| a | b |\n|---|---|\n| 0.5 |  |', 'line 3, column 8: an empty cell; write a number in every cell'],
    ['0.5 +inf', 'line 1, column 5: "+inf": only \u2212\u221e (a masked entry) can be printed as infinite'],
    ['0.5 0.5\ncat sat', 'line 2, column 1: a row without numbers'],
    ['   \n', 'line 1, column 1: no numbers to check'],
  ];
  for (const [text, message] of cases) {
    assert.throws(() => parsePrinted(text), { name: 'PasteError', message }, JSON.stringify(text));
  }
});
