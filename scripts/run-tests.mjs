#!/usr/bin/env node
// Runs test files two at a time in the order given, printing TAP, and exits
// 1 if any test failed. `node --test` sorts its files by name, so the
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
stream.on('test:fail', () => { process.exitCode = 1; });
stream.compose(tap).pipe(process.stdout);
