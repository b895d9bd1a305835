// The LaTeX that `build/attn --format latex` prints (and the page's "Copy as
// LaTeX" copies) compiles: every preset of the page, random problems of
// every kind and option, a matrix too large to show whole, and token labels
// made of LaTeX's special characters, each pasted into the smallest document
// docs/cli.md asks for (article + amsmath) and run through pdflatex with
// -halt-on-error. The text layer of the PDF (pdftotext) shows the hostile
// labels as typed, except _ ~ ^: LaTeX's default font encoding (OT1) draws
// them as a rule and accents, which look right but have no character.
//
// pdflatex comes from Debian's texlive-latex-base and pdftotext from
// poppler-utils; scripts/ensure-deps.sh installs them.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cliFormat, exportProblems } from './exports.mjs';

// Labels a course might use that LaTeX treats specially ("--" would print
// as a dash), and a few accents.
// (Eight: the walkthrough shows the first 8 rows and columns of a matrix.)
const HOSTILE_LABELS = ['<pad>', 'a_b', '50% #1', '$x$ {} `c`', 'back\\slash', '~^', 'R&D a--b', 'café Über ça'];

function document(fragments) {
  return [
    '\\documentclass{article}',
    '\\usepackage{amsmath}',
    '\\begin{document}',
    ...fragments.flatMap(({ name, latex }) => [`% ${name}`, latex, '\\clearpage']),
    '\\end{document}',
    '',
  ].join('\n');
}

/** Runs pdflatex on text; returns { ok, log, pdf } (pdf: the file's path). */
function compile(dir, name, text) {
  writeFileSync(join(dir, `${name}.tex`), text);
  const run = spawnSync('pdflatex', ['-interaction=nonstopmode', '-halt-on-error', '-no-shell-escape', `${name}.tex`],
    { cwd: dir, encoding: 'utf8', timeout: 120_000 });
  assert.ok(!run.error, `pdflatex could not run (${run.error?.message}): scripts/ensure-deps.sh installs texlive-latex-base`);
  return { ok: run.status === 0, log: run.stdout, pdf: join(dir, `${name}.pdf`) };
}

/** The lines of a pdflatex log from its first error ("! ...") on. */
const firstError = (log) => {
  const lines = log.split('\n');
  const at = lines.findIndex((line) => line.startsWith('!'));
  return lines.slice(Math.max(at, 0), at + 8).join('\n');
};

test('every LaTeX walkthrough compiles in an article with amsmath, and hostile labels print as typed', () => {
  const dir = mkdtempSync(join(tmpdir(), 'attn-latex-'));
  try {
    const all = exportProblems(HOSTILE_LABELS).map(({ name, problem }) => ({ name, latex: cliFormat(problem, 'latex') }));
    const whole = compile(dir, 'all', document(all));
    if (!whole.ok) {
      // Name the fragments that fail on their own.
      const failing = all.filter((fragment, i) => !compile(dir, `one-${i}`, document([fragment])).ok);
      assert.fail(`pdflatex stopped:\n${firstError(whole.log)}\nfailing on their own: ${failing.map((f) => f.name).join(', ')}`);
    }
    const text = spawnSync('pdftotext', ['-layout', whole.pdf, '-'], { encoding: 'utf8' });
    assert.ok(!text.error, `pdftotext could not run (${text.error?.message}): scripts/ensure-deps.sh installs poppler-utils`);
    const shown = text.stdout.normalize('NFC'); // OT1 builds é from e and an accent
    for (const label of HOSTILE_LABELS.filter((l) => !/[_~^]/.test(l))) {
      assert.ok(shown.includes(label), `the PDF shows the label ${label}`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the LaTeX of every example of the page keeps within an article\u2019s text width', () => {
  const dir = mkdtempSync(join(tmpdir(), 'attn-latex-'));
  try {
    const presets = exportProblems(HOSTILE_LABELS).filter(({ name }) => name.startsWith('preset '));
    assert.ok(presets.length >= 10, `${presets.length} presets`);
    const wide = presets.filter(({ name, problem }) => {
      const { ok, log } = compile(dir, 'one', document([{ name, latex: cliFormat(problem, 'latex') }]));
      assert.ok(ok, `${name} compiles`);
      return /Overfull \\hbox/.test(log);
    });
    assert.deepEqual(wide.map(({ name }) => name), [], 'examples with a line past the margin');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
