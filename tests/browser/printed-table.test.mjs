// The reader of pasted tables behind "Check your own numbers"
// (web/ui/printed-table.js), in Node: every format a learner pastes gives
// the same numbers with the decimals as written, and what it cannot read
// is named by line and column.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
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

test('decimal commas are read when every number with decimals has one, in every format', () => {
  const want = { values: [[0.965, 0.5], [-Infinity, 0.045]], decimals: [[3, 1], [0, 3]] };
  const pastes = {
    spaces: '0,965 0,5\n-inf 0,045',
    semicolons: '0,965;0,5\n-inf;0,045',
    tabs: 'cat\t0,965\t0,5\nsat\t-inf\t0,045',
    markdown: '| | cat | sat |\n|---|---|---|\n| cat | 0,965 | 0,5 |\n| sat | -inf | 0,045 |',
    latex: '\\begin{bmatrix}\n0{,}965 & 0{,}5 \\\\\n-\\infty & 0{,}045\n\\end{bmatrix}',
  };
  for (const [format, text] of Object.entries(pastes)) assert.deepEqual(parsePrinted(text), want, format);
  // Commas between numbers written with points, or whole numbers, separate them (CSV).
  assert.deepEqual(parsePrinted('0.5,0.25\n1,0').values, [[0.5, 0.25], [1, 0]]);
  assert.deepEqual(parsePrinted('0.5, 0.25').values, [0.5, 0.25]);
});

test('a paste that mixes decimal commas and points is refused at the odd one out, naming the other', () => {
  const cases = [
    ['0,965 0,545\n0,1 0.2', 'line 2, column 5: "0.2" has a decimal point, but "0,965" (line 1) has a decimal comma: '
      + 'write every number with the same one'],
    ['0.965 & 0.545 \\\\\n0,1 & 0.2', 'line 2, column 1: "0,1" has a decimal comma, but "0.965" (line 1) has a '
      + 'decimal point: write every number with the same one'],
  ];
  for (const [text, message] of cases) {
    assert.throws(() => parsePrinted(text), { name: 'PasteError', message }, JSON.stringify(text));
  }
});

test('column numbers above named rows are a header, as the engine prints an output\u2019s or a W_q\u2019s', () => {
  assert.deepEqual(parsePrinted('      1  2\n  q1  4  5\n  q2  6  7').values, [[4, 5], [6, 7]]);
  assert.deepEqual(parsePrinted('     1  2\n  1  1  0\n  2  0  1').values, [[1, 0], [0, 1]]);
  assert.deepEqual(parsePrinted('|  | 1 | 2 |\n|---|---:|---:|\n| 1 | 1 | 0 |\n| 2 | 0 | 1 |').values, [[1, 0], [0, 1]]);
  // Without names beside them, numbers 1 2 are a row like any other.
  assert.deepEqual(parsePrinted('1 2\n3 4').values, [[1, 2], [3, 4]]);
});

test('what cannot be read is named by its line and column', () => {
  const cases = [
    ['0.5 0.5\n0.5 0,5x', 'line 2, column 5: "0,5x" is not a number'],
    ['0.5,0.5\n0.5', 'line 2, column 1: 1 number, but line 1 has 2'],
    ['| a | b |\n|---|---|\n| 0.5 |  |', 'line 3, column 8: an empty cell; write a number in every cell'],
    ['0.5 +inf', 'line 1, column 5: "+inf": only \u2212\u221e (a masked entry) can be printed as infinite'],
    ['0.5 0.5\ncat sat', 'line 2, column 1: a row without numbers'],
    ['   \n', 'line 1, column 1: no numbers to check'],
    ['| a | b |\n|---|---|\n| 0.5 | 0.5 |\nthe end', 'line 4, column 1: text after the table; paste one table at a time'],
    // As a formula is often written, in $$ or not: not read as rows.
    ['$$\\begin{bmatrix} 0.4 & 0.6 \\\\ 0.5 & 0.5 \\end{bmatrix}$$',
      'line 1, column 29: a LaTeX table on one line; put each row, ending in \\\\, on a line of its own'],
  ];
  for (const [text, message] of cases) {
    assert.throws(() => parsePrinted(text), { name: 'PasteError', message }, JSON.stringify(text));
  }
});

// The engine's own tables pasted back: every table of every walkthrough
// example, as build/attn prints it in Markdown, LaTeX and text, with its
// caption and without, reads as the engine's numbers (its JSON result, or
// the input it was given) to the decimals printed.
test('every table the engine prints in Markdown, LaTeX and text reads back as its numbers', async () => {
  const { engineTables, engineOutput } = await import('./engine-tables.mjs');
  const presets = JSON.parse(readFileSync(new URL('../../web/presets.json', import.meta.url), 'utf8')).presets;
  // The walkthrough's examples (a multi-head one has its inputs made at random by the page).
  const problems = presets.filter((preset) => preset.input && preset.mode && !(preset.input.numHeads > 1))
    .map((preset) => preset.input);
  // Token labels with spaces and a masked (−∞) entry.
  problems.push({ kind: 'scaledDotProduct', q: [[1, 0], [0, 1]], k: [[1, 0], [0, 1]], v: [[1, 2], [4, 5]],
    mask: 'causal', tokens: ['the cat', 'sat'] });
  const lower = (object) => Object.fromEntries(Object.entries(object).map(([key, v]) => [key.toLowerCase(), v]));
  const flat = (value) => (Array.isArray(value) ? value.flatMap(flat) : [value === null ? -Infinity : value]);
  let read = 0;
  for (const problem of problems) {
    const result = JSON.parse(engineOutput(problem, 'json'));
    // A one-head problem's walkthrough shows its head's scores and weights.
    const known = { ...lower(problem), ...lower(result.heads?.[0] ?? {}), ...lower(result) };
    for (const { format, name, text, table } of engineTables(problem)) {
      const want = flat(known[name === 'S' ? 'scores' : name.replace('_', '').toLowerCase()]);
      for (const paste of [text, table]) {
        const where = `${problem.kind} ${format} ${name}:\n${paste}`;
        // A long table is printed cut short (its first 8 rows, then …): refused as that.
        if (/\u2026|\\[cv]?dots/.test(paste)) {
          assert.throws(() => parsePrinted(paste), /the table is cut short here/, where);
          continue;
        }
        let table;
        assert.doesNotThrow(() => { table = parsePrinted(paste); }, where);
        const { values, decimals } = table;
        assert.equal(flat(values).length, want.length, where);
        flat(values).forEach((value, i) => {
          const unit = 10 ** -flat(decimals)[i];
          if (value === -Infinity) assert.equal(want[i], -Infinity, where);
          else assert.ok(Math.abs(value - want[i]) <= unit / 2 + 1e-9, `${where}\n${value} for ${want[i]}`);
        });
        read++;
      }
    }
  }
  assert.ok(read > 300, `${read} tables read`);
});
