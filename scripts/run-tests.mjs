#!/usr/bin/env node
// Runs test files two at a time in the order given, printing TAP, and exits
// 1 if any test failed, then names every failed test again at the end,
// where a log cut to its tail (CI's) still shows them. `node --test` sorts its files by name, so the
// browser suite's longest file (walkthrough, 7 of its 25 minutes on a busy
// two-core machine) started last and ran alone while the other core idled;
// the Makefile lists the longest first.
//
//   node scripts/run-tests.mjs tests/browser/walkthrough.test.mjs tests/browser/a11y.test.mjs ...

import { run } from 'node:test';
import { tap } from 'node:test/reporters';
import { resolve } from 'node:path';

const files = process.argv.slice(2).map((file) => resolve(file));
if (files.length === 0) {
  console.error('usage: node scripts/run-tests.mjs FILE...');
  process.exit(2);
}
const stream = run({ files, concurrency: 2 });
const failures = [];
stream.on('test:fail', (test) => {
  process.exitCode = 1;
  const error = test.details?.error;
  if (error?.failureType === 'subtestsFailed') return; // its failed subtest is named
  const cause = error?.cause ?? error;
  const message = String(cause?.message ?? cause ?? '').split('\n')[0];
  const where = test.file ? `${test.file.replace(`${process.cwd()}/`, '')}: ` : '';
  failures.push(`${where}${test.name}\n      ${message}`);
});
stream.compose(tap).pipe(process.stdout);
process.on('exit', () => {
  if (failures.length === 0) return;
  console.log(`\n# ${failures.length} failed:`);
  for (const failure of failures) console.log(`  ✗ ${failure}`);
});
