// The Markdown documentation's links, read as GitHub reads them: every
// relative link or image in README.md, CHANGES.md, ARCHITECTURE.md and
// docs/*.md (Markdown links, and src/href in inline HTML such as <img>) must
// name a file that exists, and a link with a #fragment into a Markdown file
// must name one of its headings by GitHub's anchor rules. A failure names the
// file, the line and the link. README.md stays a front door: 250 lines at most.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import MarkdownIt from 'markdown-it';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const README_MAX_LINES = 250;

// html: true so that <img src> and <a href> in the text come out as tokens.
const markdown = new MarkdownIt({ html: true });

/** The documentation files checked, relative to the repository's root. */
function docFiles() {
  const docs = readdirSync(join(ROOT, 'docs')).filter((name) => name.endsWith('.md')).sort();
  return ['README.md', 'CHANGES.md', 'ARCHITECTURE.md', ...docs.map((name) => `docs/${name}`)];
}

/**
 * A heading's anchor as GitHub makes it (github-slugger): lowercase, every
 * character that is not a letter, mark, digit, space, '-' or '_' dropped,
 * each space turned into '-'. A repeated anchor gets -1, -2, … (`seen`).
 */
function slug(text, seen = new Map()) {
  const base = text.toLowerCase().replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-');
  const count = seen.get(base) ?? 0;
  seen.set(base, count + 1);
  return count === 0 ? base : `${base}-${count}`;
}

/** The text of an inline token as a reader sees it (text and code, no markup). */
const plainText = (inline) => inline.children
  .filter((child) => child.type === 'text' || child.type === 'code_inline')
  .map((child) => child.content)
  .join('');

const HTML_TARGET = /\b(?:src|href)\s*=\s*("([^"]*)"|'([^']*)')/gi;
const HTML_ID = /\b(?:id|name)\s*=\s*("([^"]*)"|'([^']*)')/gi;

/**
 * The anchors and the link targets of a Markdown text: anchors from its
 * headings and from id/name attributes in its HTML; links as { target, line }
 * with line counted from 1.
 */
function readMarkdown(text) {
  const lines = text.split('\n');
  const tokens = markdown.parse(text, {});
  const seen = new Map();
  const anchors = new Set();
  const links = [];

  // A link's line: the first line of its block that holds the target (an
  // inline token knows only its block's lines), else the block's first line.
  const lineOf = (target, map) => {
    const [first, last] = map ?? [0, lines.length];
    for (let i = first; i < last; i += 1) if (lines[i].includes(target)) return i + 1;
    return first + 1;
  };
  const fromHtml = (html, map) => {
    for (const match of html.matchAll(HTML_TARGET)) {
      const target = match[2] ?? match[3];
      links.push({ target, line: lineOf(target, map) });
    }
    for (const match of html.matchAll(HTML_ID)) anchors.add(match[2] ?? match[3]);
  };

  tokens.forEach((token, index) => {
    if (token.type === 'heading_open') anchors.add(slug(plainText(tokens[index + 1]), seen));
    if (token.type === 'html_block') fromHtml(token.content, token.map);
    if (token.type !== 'inline') return;
    for (const child of token.children) {
      if (child.type === 'link_open' || child.type === 'image') {
        const target = child.attrGet(child.type === 'image' ? 'src' : 'href');
        links.push({ target, line: lineOf(target, token.map) });
      } else if (child.type === 'html_inline') {
        fromHtml(child.content, token.map);
      }
    }
  });
  return { anchors, links };
}

const isExternal = (target) => /^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//');

/**
 * The broken links of the given files (paths relative to root), each as
 * "file:line: link: what is wrong". `disk` reads a file and says whether a
 * path exists (the real disk unless a test gives its own).
 */
function brokenLinks(files, root, disk = { read: (path) => readFileSync(path, 'utf8'), exists: existsSync }) {
  const parsed = new Map();
  const parse = (path) => {
    if (!parsed.has(path)) parsed.set(path, readMarkdown(disk.read(path)));
    return parsed.get(path);
  };
  const problems = [];
  for (const file of files) {
    const from = join(root, file);
    for (const { target, line } of parse(from).links) {
      if (isExternal(target)) continue;
      const where = `${file}:${line}: ${target}`;
      const hash = target.indexOf('#');
      const pathPart = hash === -1 ? target : target.slice(0, hash);
      const fragment = hash === -1 ? '' : decodeURIComponent(target.slice(hash + 1));
      const path = pathPart === '' ? from : resolve(dirname(from), decodeURIComponent(pathPart));
      if (!disk.exists(path)) {
        problems.push(`${where}: no file ${relative(root, path)}`);
      } else if (fragment !== '' && path.endsWith('.md') && !parse(path).anchors.has(fragment)) {
        problems.push(`${where}: no heading with the anchor #${fragment} in ${relative(root, path)}`);
      }
    }
  }
  return problems;
}

test('heading anchors follow GitHub\'s rules: lowercase, punctuation dropped, spaces to hyphens', () => {
  assert.equal(slug('Installing: static and shared libraries, pkg-config, CMake'),
    'installing-static-and-shared-libraries-pkg-config-cmake');
  assert.equal(slug('Writing to a file: -o'), 'writing-to-a-file--o');
  assert.equal(slug("The page's figures"), 'the-pages-figures');
  assert.equal(slug('Why scale by √d_k'), 'why-scale-by-d_k');
  const seen = new Map();
  assert.deepEqual([slug('Tests', seen), slug('Tests', seen)], ['tests', 'tests-1']);
});

test('a heading written with code takes its anchor from the code\'s text', () => {
  const { anchors } = readMarkdown('# The CLI\n\n## `make bench`\n\n## A run of `make bench`\n');
  assert.deepEqual([...anchors], ['the-cli', 'make-bench', 'a-run-of-make-bench']);
});

test('a missing file or heading is reported with its file, line and link; code is not read as links', () => {
  const files = {
    [join('/r', 'a.md')]: '# A\n\nText [b](b.md#there) and [self](#a).\n\n<img src="img/x.png" alt="">\n\n```\n[not a link](nowhere.md)\n```\n\n[gone](gone.md)\n',
    [join('/r', 'b.md')]: '# B\n\n## Here\n',
  };
  const problems = brokenLinks(['a.md'], '/r', { read: (path) => files[path], exists: (path) => path in files });
  assert.deepEqual(problems, [
    'a.md:3: b.md#there: no heading with the anchor #there in b.md',
    'a.md:5: img/x.png: no file img/x.png',
    'a.md:11: gone.md: no file gone.md',
  ]);
});

test('README.md is a front door of at most 250 lines', () => {
  const lines = readFileSync(join(ROOT, 'README.md'), 'utf8').trimEnd().split('\n').length;
  assert.ok(lines <= README_MAX_LINES, `README.md has ${lines} lines; move detail into docs/`);
});

// web/anywidget.js is the module's source: loaded from text, as anywidget
// loads a module, its imports have nowhere to resolve from.
test('README.md names the anywidget module that hosts load, the self-contained build that build-element.mjs writes', () => {
  const row = readFileSync(join(ROOT, 'README.md'), 'utf8').split('\n').find((line) => line.includes('anywidget module'));
  const [, where] = row.split('|').slice(1);
  assert.match(where, /^ `web\/dist\/attention-anywidget\.mjs`/);
  assert.match(readFileSync(join(ROOT, 'scripts', 'build-element.mjs'), 'utf8'), /out: 'attention-anywidget\.mjs'/);
});

test('every relative link and image in the documentation names a file and heading that exist', () => {
  const problems = brokenLinks(docFiles(), ROOT);
  assert.deepEqual(problems, [], `broken links:\n${problems.join('\n')}`);
});
