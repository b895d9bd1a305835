// The page's constant formulas, typeset by KaTeX at build time, so that no
// page has to load KaTeX's script (~270 KB) to show them: vendor.mjs writes
// them for the served page (web/vendor/formulas.js, KaTeX's HTML and
// MathML, drawn with KaTeX's stylesheet and fonts) and build-single.mjs
// inlines them in the one-file page (MathML only, drawn with the browser's
// fonts). web/ui/math.js looks a formula up there first and loads KaTeX only
// for one that is missing.

import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import katex from 'katex';
import ts from 'typescript';

const REPO = fileURLToPath(new URL('../', import.meta.url));

/** The value of a string literal or a + of them; undefined for anything else. */
function constantString(node) {
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return node.text;
  if (ts.isParenthesizedExpression(node)) return constantString(node.expression);
  if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.PlusToken) {
    const left = constantString(node.left);
    const right = constantString(node.right);
    if (left !== undefined && right !== undefined) return left + right;
  }
  return undefined;
}

// A TeX command, or a sub/superscript in something that is neither prose
// (two words in a row) nor one long identifier. A string taken wrongly only
// costs bytes; one missed makes the page load KaTeX to typeset it.
function looksLikeTex(text) {
  if (/\\[A-Za-z]/.test(text)) return true;
  if (/^[\w./-]+\.[a-z0-9]{2,5}$/.test(text)) return false; // a file name or path (KaTeX_Main-Regular.woff2)
  if (/[^\x20-\x7e]/.test(text)) return false; // a label: our TeX writes √ and ᵀ as commands
  return /[_^]/.test(text) && !/[A-Za-z]{3,} [A-Za-z]{3,}/.test(text) && !/^\w{5,}$/.test(text);
}

/**
 * The engine's formulas: every C string constant in src/walkthrough/ that
 * reads as TeX (adjacent literals concatenated, across the backslash-newlines
 * of a #define, and unescaped).
 */
async function engineFormulas() {
  const dir = join(REPO, 'src', 'walkthrough');
  const found = [];
  for (const name of (await readdir(dir)).filter((file) => file.endsWith('.c'))) {
    const source = await readFile(join(dir, name), 'utf8');
    for (const [constant] of source.matchAll(/"(?:[^"\\\n]|\\.)*"(?:(?:\s|\\\n)*"(?:[^"\\\n]|\\.)*")*/g)) {
      const text = [...constant.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map(([, literal]) => literal.replace(/\\(.)/g, '$1')).join('');
      // A printf format (%) is filled in at run time: typeset as KaTeX loads.
      if (looksLikeTex(text) && !text.includes('%')) found.push(text);
    }
  }
  return found;
}

/** Every whole constant string in files (JS sources) that reads as TeX, and the engine's, sorted. */
export async function formulaSources(files) {
  const found = new Set(await engineFormulas());
  for (const file of files) {
    const source = ts.createSourceFile(file, await readFile(file, 'utf8'), ts.ScriptTarget.Latest, true);
    const visit = (node) => {
      const text = constantString(node);
      if (text === undefined || constantString(node.parent) !== undefined) {
        ts.forEachChild(node, visit);
        return;
      }
      if (looksLikeTex(text)) found.add(text);
    };
    visit(source);
  }
  return [...found].sort();
}

/** KaTeX's markup for tex, or undefined when tex is not TeX after all (an identifier, a message). */
export function typeset(tex, { display, output }) {
  try {
    return katex.renderToString(tex, { displayMode: display, output, throwOnError: true, strict: 'ignore' });
  } catch {
    return undefined;
  }
}

// The builds that carry no KaTeX (the one-file page, the notebook and
// anywidget builds) draw the formulas as MathML, without KaTeX's stylesheet:
// its size and spacing around display math.
export const MATHML_CSS = '.katex{font-size:1.15em}.katex math[display=block]{margin:.5em 0}';

/** Every constant formula in files (the bundled modules), typeset as MathML: { tex: markup }. */
export async function mathmlFormulas(files) {
  const math = {};
  for (const tex of await formulaSources(files)) {
    const markup = typeset(tex, { display: true, output: 'mathml' });
    // The TeX source is in the element's data-tex already; xmlns is implied in HTML.
    if (markup) {
      math[tex] = markup
        .replace(' xmlns="http://www.w3.org/1998/Math/MathML"', '')
        .replace(/<annotation encoding="application\/x-tex">[\s\S]*?<\/annotation>/, '');
    }
  }
  return math;
}
