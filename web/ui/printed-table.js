// Reads a table of numbers as people paste them: a Markdown table, CSV or
// tab-separated rows (as copied from a spreadsheet), a LaTeX tabular or
// bmatrix, or plain rows of numbers, each as the engine's own Markdown,
// LaTeX and text walkthroughs print them (their captions, header rows and
// token labels skipped). Returns { values, decimals } (nested like the
// rows: a matrix, or a vector for one row), each number's decimals as
// written (0.380 has 3), or throws a PasteError naming the line and column
// (from 1) it could not read. −∞ (-inf, \infty, null) is a masked entry; a
// number may end in % (a percentage, kept as written). Decimal commas
// (0,965) are read when every number of the paste that has decimals uses
// them; a paste that mixes them with decimal points is refused.

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
// A number written with a decimal comma (0,965; LaTeX's 0{,}965).
const COMMA_NUMBER = /^[-+\u2212\u2013]?\d*(,|\{,\})\d+([eE][-+]?\d+)?%?$/;
const POWER_OF_TEN = /\s*(?:\\times|\u00d7|\\cdot|\u00b7)\s*10\^\{?([-+]?\d+)\}?$/;
const POINT_NUMBER = /^[-+\u2212\u2013]?\d*\.\d+([eE][-+]?\d+)?%?$/;
// LaTeX's names of rows and columns: \text{q1}, \textbf{weights} (3×3):
const LATEX_LABEL = /^\\(text|textbf|textit|textrm|emph|mathrm|mathbf|mathit|operatorname)\b/;
// LaTeX's lines around a table: \[ \] $$ \begin{..} \end{..} and rules.
const LATEX_FRAME = /^(\\\[|\\\]|\$\$|\\(begin|end|hline|toprule|midrule|bottomrule|setlength|renewcommand|centering|caption|label)\b)/;
const ELLIPSIS = /^\s*(\u2026|\.\.\.|\\[lcvd]?dots)\s*$/; // what the engine prints for rows and columns left out
const MARKDOWN_RULE = /^(?=.*-)\|?[\s:|-]+\|?$/; // |---|:---:|
// LaTeX's row break with more of the table after it on the same line (not a
// \\[2pt] or \hline closing the line): rows are read one per line.
const ROW_BREAK_INSIDE = /\\\\(?!\s*(\[[^\]]*\])?\s*(\\hline)?\s*$)/;

const bare = (word) => word.trim().replace(/^\$|\$$/g, ''); // LaTeX's $-\infty$

function readNumber(text, line, column, comma) {
  const word = text.trim();
  const unsigned = bare(word);
  if (word === 'null' || INFINITE.test(unsigned)) {
    if (!/^[-\u2212]/.test(unsigned) && word !== 'null') {
      throw new PasteError(`"${word}": only −∞ (a masked entry) can be printed as infinite`, line, column);
    }
    return { value: -Infinity, decimals: 0 };
  }
  // 1.011 \times 10^{-43}, 1.011 × 10^-43 as 1.011e-43
  let plain = unsigned.replace(MINUS, '-').replace(POWER_OF_TEN, 'e$1');
  if (comma && COMMA_NUMBER.test(unsigned)) plain = plain.replace(/\{,\}|,/, '.');
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
  if (/\\begin\{(b|p)?matrix\}|\\begin\{tabular\}|&/.test(lines.map((l) => l.text).join('\n'))) return 'latex';
  if (lines.some((line) => line.text.trim().startsWith('|'))) return 'markdown';
  return 'plain';
}

/**
 * How plain rows are split: by tabs (a spreadsheet's), else as the first
 * row of numbers is: by semicolons, by spaces between numbers (which may
 * have decimal commas: 0,965 0,545), else by commas (CSV).
 */
function plainSeparatorOf(lines) {
  if (lines.some((line) => line.text.includes('\t'))) return '\t';
  // The first line with a number, past a caption such as "weights (3×3):".
  const first = lines.find((line) => /(^|[\s,;])[-+\u2212\u2013]?\.?\d/.test(line.text))?.text ?? '';
  if (first.includes(';')) return ';';
  const words = first.trim().split(/\s+/);
  if (!first.includes(',') || (words.length > 1 && words.every((word) => !word.includes(',') || COMMA_NUMBER.test(word)))) {
    return /\s+/;
  }
  return ',';
}

/**
 * Whether the paste's commas are decimal commas: only when no number in it
 * has a decimal point. A paste with both is refused at the first number of
 * the fewer kind, naming one of the other.
 */
function decimalCommas(rows) {
  const cells = rows.flatMap(({ cells: row, number }) => row
    .map(([text, column]) => ({ word: bare(text), number, column })));
  const commas = cells.filter(({ word }) => COMMA_NUMBER.test(word));
  const points = cells.filter(({ word }) => POINT_NUMBER.test(word));
  if (commas.length === 0) return false;
  if (points.length === 0) return true;
  const [odd, usual] = commas.length <= points.length ? [commas, points] : [points, commas];
  const [mark, other] = odd === commas ? ['comma', 'point'] : ['point', 'comma'];
  throw new PasteError(`"${odd[0].word}" has a decimal ${mark}, but "${usual[0].word}" (line ${usual[0].number}) `
    + `has a decimal ${other}: write every number with the same one`, odd[0].number, odd[0].column);
}

const isLabel = (cell) => {
  const word = cell.trim();
  return word === '' || LATEX_LABEL.test(word)
    || (/^[^\d\s.+\-\u2212$\\]/.test(word) && !INFINITE.test(word) && word !== 'null');
};

/**
 * The lines that are rows of the table, as { number, cells, header }:
 * without the table's frame (LaTeX's \begin, Markdown's |---| rule) and,
 * in Markdown, without a caption above the table. header marks Markdown's
 * header row, the line above its rule.
 */
function tableRows(lines, style, plainSeparator) {
  const rows = [];
  let header = null;
  let last = null;
  for (const line of lines) {
    const trimmed = line.text.trim();
    if (trimmed === '') continue;
    if (style === 'markdown' && MARKDOWN_RULE.test(trimmed) && last && !header) header = last;
    last = line;
  }
  for (const line of lines) {
    const trimmed = line.text.trim();
    if (trimmed === '') continue;
    if (style === 'latex' && LATEX_FRAME.test(trimmed)) continue;
    if (style === 'markdown' && MARKDOWN_RULE.test(trimmed)) continue;
    if (style === 'markdown' && !trimmed.startsWith('|')) {
      if (rows.length === 0) continue; // a caption: **weights** (3×3)
      throw new PasteError('text after the table; paste one table at a time', line.number, 1);
    }
    rows.push({ number: line.number, cells: cellsOf(line.text, style, plainSeparator), header: line === header });
  }
  return rows;
}

/** The leading cells of a row that are labels: one, or the words of a label with spaces when split at spaces. */
function labelCells(cells, separator) {
  const numberAt = cells.findIndex(([cell]) => !isLabel(cell));
  if (numberAt < 0) return cells.length;
  return separator instanceof RegExp ? numberAt : Math.min(numberAt, 1);
}

/** Whether cells (after an empty corner cell) number the columns 1, 2, 3, ... */
function numbersColumns(cells) {
  const named = cells[0] && cells[0][0].trim() === '' ? cells.slice(1) : cells;
  return named.length > 0 && named.every(([cell], i) => cell.trim() === String(i + 1));
}

/** The numbers of a pasted table; throws a PasteError for what it cannot read. */
export function parsePrinted(text) {
  const lines = String(text).split(/\r?\n/).map((line, i) => ({ text: line, number: i + 1 }));
  const style = styleOf(lines);
  const folded = style === 'latex' && lines.find((line) => ROW_BREAK_INSIDE.test(line.text));
  if (folded) {
    throw new PasteError('a LaTeX table on one line; put each row, ending in \\\\, on a line of its own', folded.number,
      folded.text.search(ROW_BREAK_INSIDE) + 1);
  }
  const separator = style === 'plain' ? plainSeparatorOf(lines) : null;
  const candidates = tableRows(lines, style, separator);
  const comma = decimalCommas(candidates);
  const header = candidates.find((row) => row.header);
  // Rows of labels above the numbers are captions and column names.
  let body = candidates.filter((row) => !row.header);
  const first = body.findIndex(({ cells }) => !cells.every(([cell]) => isLabel(cell)));
  if (first < 0) throw new PasteError('no numbers to check', 1, 1);
  body = body.slice(first);
  // Rows are named in a first column when the column names leave its
  // corner empty: Markdown's header, or the engine's text tables, whose
  // columns numbered 1, 2, 3 stand above rows with one cell more (their
  // names may be numbers too: W_q's rows 1, 2, 3).
  let named = Boolean(header) && header.cells[0][0].trim() === '';
  if (!header && body.length > 1 && numbersColumns(body[0].cells)) {
    const columns = body[0].cells.filter(([cell]) => cell.trim() !== '').length;
    const under = body.slice(1).map(({ cells }) => cells.length - Math.max(labelCells(cells, separator), 1));
    if (under.every((count) => count === columns)) {
      named = true;
      body = body.slice(1);
    }
  }
  const rows = [];
  for (const { number, cells } of body) {
    const lead = labelCells(cells, separator);
    if (cells.some(([cell]) => ELLIPSIS.test(cell))) {
      throw new PasteError('the table is cut short here ("…"); paste one with every row and column', number,
        cells.find(([cell]) => ELLIPSIS.test(cell))[1]);
    }
    if (lead === cells.length) throw new PasteError('a row without numbers', number, cells[0][1]);
    const numbers = cells.slice(named ? Math.max(lead, 1) : lead);
    const parsed = numbers.map(([cell, column]) => readNumber(cell, number, column, comma));
    if (rows.length > 0 && parsed.length !== rows[0].cells.length) {
      const count = (n) => `${n} ${n === 1 ? 'number' : 'numbers'}`;
      throw new PasteError(`${count(parsed.length)}, but line ${rows[0].line} has ${rows[0].cells.length}`, number, cells[0][1]);
    }
    rows.push({ cells: parsed, line: number });
  }
  const values = rows.map((row) => row.cells.map((cell) => cell.value));
  const decimals = rows.map((row) => row.cells.map((cell) => cell.decimals));
  return rows.length === 1 ? { values: values[0], decimals: decimals[0] } : { values, decimals };
}
