// Reads a table of numbers as people paste them: a Markdown table, CSV or
// tab-separated rows (as copied from a spreadsheet), a LaTeX tabular or
// bmatrix, or plain rows of numbers. Returns { values, decimals } (nested
// like the rows: a matrix, or a vector for one row), each number's decimals
// as written (0.380 has 3), or throws a PasteError naming the line and
// column (from 1) it could not read. −∞ (-inf, \infty, null) is a masked
// entry; a number may end in % (a percentage, kept as written).

export class PasteError extends Error {
  constructor(message, line, column) {
    super(`line ${line}, column ${column}: ${message}`);
    this.name = 'PasteError';
    this.line = line;
    this.column = column;
  }
}

const MINUS = /[\u2212\u2013]/g; // − and – as people type them
const NUMBER = /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?%?$/;
const INFINITE = /^([-+\u2212]?)(inf|infinity|\u221e|\\infty|-?\\infty)$/i;

function readNumber(text, line, column) {
  const word = text.trim();
  const bare = word.replace(/^\$|\$$/g, ''); // LaTeX's $-\infty$
  if (word === 'null' || INFINITE.test(bare)) {
    if (!/^[-\u2212]/.test(bare) && word !== 'null') {
      throw new PasteError(`"${word}": only −∞ (a masked entry) can be printed as infinite`, line, column);
    }
    return { value: -Infinity, decimals: 0 };
  }
  const plain = word.replace(MINUS, '-').replace(/^\$|\$$/g, '');
  if (!NUMBER.test(plain)) {
    throw new PasteError(word === '' ? 'an empty cell; write a number in every cell' : `"${word}" is not a number`, line, column);
  }
  const mantissa = plain.replace(/%$/, '').split(/[eE]/)[0];
  const decimals = mantissa.includes('.') ? mantissa.split('.')[1].length : 0;
  return { value: Number(plain.replace(/%$/, '')), decimals };
}

/** Cells of one line: [text, column] pairs, after the table's own marks. */
function cellsOf(line, style, plainSeparator) {
  let text = line;
  let offset = 0;
  if (style === 'markdown') {
    const start = text.indexOf('|');
    text = text.slice(start + 1).replace(/\|\s*$/, '');
    offset = start + 1;
  } else if (style === 'latex') {
    text = text.replace(/\\\\\s*(\\hline)?\s*$/, '').replace(/\\hline/g, '');
  }
  const separator = style === 'markdown' ? '|' : style === 'latex' ? '&' : plainSeparator;
  const cells = [];
  if (separator instanceof RegExp) {
    for (const match of text.matchAll(/\S+/g)) cells.push([match[0], offset + match.index + 1]);
    return cells;
  }
  let at = 0;
  for (const part of text.split(separator)) {
    // An empty cell is named where it starts, a number where it starts.
    const lead = part.trim() === '' ? 0 : part.length - part.trimStart().length;
    cells.push([part, offset + at + lead + 1]);
    at += part.length + separator.length;
  }
  return cells;
}

function styleOf(lines) {
  const first = lines.find((line) => line.text.trim() !== '')?.text ?? '';
  if (/\\begin\{(b|p)?matrix\}|\\begin\{tabular\}|&/.test(lines.map((l) => l.text).join('\n'))) return 'latex';
  if (first.trim().startsWith('|')) return 'markdown';
  return 'plain';
}

/** The numbers of a pasted table; throws a PasteError for what it cannot read. */
export function parsePrinted(text) {
  const lines = String(text).split(/\r?\n/).map((line, i) => ({ text: line, number: i + 1 }));
  const style = styleOf(lines);
  // Plain rows are split alike: by tabs (a spreadsheet's), else by what the
  // first row uses, commas, semicolons or spaces.
  const first = lines.find((line) => line.text.trim() !== '')?.text ?? '';
  const plainSeparator = lines.some((line) => line.text.includes('\t')) ? '\t'
    : first.includes(',') ? ',' : first.includes(';') ? ';' : /\s+/;
  const rows = [];
  for (const { text: line, number } of lines) {
    const trimmed = line.trim();
    if (trimmed === '') continue;
    if (style === 'latex' && /^\\(begin|end|hline|toprule|midrule|bottomrule)\b/.test(trimmed)) continue;
    if (style === 'markdown' && /^\|?[\s:|-]+\|?$/.test(trimmed)) continue; // |---|---|
    const cells = cellsOf(line, style, plainSeparator);
    const isLabel = (cell) => {
      const word = cell.trim();
      return word === '' || (/^[^\d\s.+\-\u2212$\\]/.test(word) && !INFINITE.test(word) && word !== 'null');
    };
    // A header row of labels (row and column names) is skipped, as is a
    // leading label column.
    if (cells.every(([cell]) => isLabel(cell))) {
      if (rows.length === 0) continue;
      throw new PasteError('a row without numbers', number, cells[0][1]);
    }
    const numbers = isLabel(cells[0][0]) ? cells.slice(1) : cells;
    const parsed = numbers.map(([cell, column]) => readNumber(cell, number, column));
    if (rows.length > 0 && parsed.length !== rows[0].cells.length) {
      const count = (n) => `${n} ${n === 1 ? 'number' : 'numbers'}`;
      throw new PasteError(`${count(parsed.length)}, but line ${rows[0].line} has ${rows[0].cells.length}`, number, cells[0][1]);
    }
    rows.push({ cells: parsed, line: number });
  }
  if (rows.length === 0) throw new PasteError('no numbers to check', 1, 1);
  const values = rows.map((row) => row.cells.map((cell) => cell.value));
  const decimals = rows.map((row) => row.cells.map((cell) => cell.decimals));
  return rows.length === 1 ? { values: values[0], decimals: decimals[0] } : { values, decimals };
}
