// The tables the engine itself writes, cut out of `build/attn --format
// markdown | latex | text` as a learner would select one to paste back:
// each with its caption ("**weights** (3×3)", "\textbf{weights} (3×3):",
// "weights (3×3):") and without it. Needs build/attn (make build/attn).

import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const attn = fileURLToPath(new URL('../../build/attn', import.meta.url));

/** What build/attn prints for `problem` in `format`. */
export function engineOutput(problem, format) {
  const child = spawnSync(attn, ['--format', format], { input: JSON.stringify(problem), encoding: 'utf8' });
  if (child.error) throw child.error;
  if (child.status !== 0) throw new Error(`build/attn --format ${format}: ${child.stderr}`);
  return child.stdout;
}

// Each format's caption (its table's name first) and where its table ends.
const FORMATS = {
  markdown: { caption: /^\*\*(.+?)\*\* \(/, starts: (line) => line.startsWith('|'), ends: (line) => !line.startsWith('|') },
  latex: { caption: /^\\textbf\{(.+?)\} \(/, starts: (line) => line === '\\[', ends: (line, table) => table.at(-1) === '\\]' },
  text: { caption: /^(\S+) \(.*\):$/, starts: (line) => line.startsWith('  '), ends: (line) => !line.startsWith('  ') },
};

/** [{ format, name, text, table }]: every table of the walkthrough, text with its caption, table without. */
export function engineTables(problem) {
  const tables = [];
  for (const [format, { caption, starts, ends }] of Object.entries(FORMATS)) {
    const lines = engineOutput(problem, format).split('\n');
    lines.forEach((line, at) => {
      const named = caption.exec(line);
      if (!named) return;
      const table = [];
      let i = at + 1;
      while (i < lines.length && lines[i] === '') i++;
      if (!starts(lines[i] ?? '')) return;
      for (; i < lines.length && !(table.length > 0 && ends(lines[i], table)); i++) table.push(lines[i]);
      // W\_q and W\ensuremath{_q} are W_q.
      const name = named[1].replaceAll('\\_', '_').replace(/\\ensuremath\{(.*?)\}/g, '$1');
      tables.push({ format, name, text: lines.slice(at, i).join('\n'), table: table.join('\n') });
    });
  }
  return tables;
}
