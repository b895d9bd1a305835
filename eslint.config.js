// ESLint's flat config: its recommended rules (mistakes, not style) plus a
// line length of 120, for the page's modules (browser globals) and for the
// scripts, tests and benches (Node globals). `make lint` runs it.
import js from '@eslint/js';
import globals from 'globals';

export default [
  { ignores: ['node_modules/', 'build/', 'web/vendor/', 'web/dist/', 'python/build/',
    'python/attention_explainer/*.js', '.probe/'] },
  js.configs.recommended,
  {
    languageOptions: { ecmaVersion: 'latest', sourceType: 'module' },
    rules: {
      'max-len': ['error', { code: 120, ignoreUrls: true, ignoreRegExpLiterals: true, ignoreStrings: true, ignoreTemplateLiterals: true }],
      'no-unused-vars': ['error', { args: 'after-used', caughtErrors: 'none', ignoreRestSiblings: true }],
    },
  },
  { files: ['web/**/*.js'], languageOptions: { globals: globals.browser } },
  // The API module also runs in Node, which it recognises by `process`.
  { files: ['web/lib/**/*.js'], languageOptions: { globals: { ...globals.browser, process: 'readonly' } } },
  {
    files: ['**/*.mjs', '**/*.cjs', 'eslint.config.js'],
    languageOptions: { globals: { ...globals.node } },
  },
  // Browser tests and the page bench hand functions to page.evaluate, which
  // run in the page.
  {
    files: ['tests/browser/**', 'tests/engines/**', 'tests/python/**', 'bench/page.mjs', 'bench/page-timing.mjs',
      'bench/browser-side-by-side.mjs', 'scripts/build-first-screen.mjs'],
    languageOptions: { globals: { ...globals.node, ...globals.browser } },
  },
];
