// `build/attn -o FILE`: the result is written to a new file of a unique
// name beside FILE, created exclusively (a link planted at any name is
// never followed), then renamed over FILE; an existing FILE keeps its
// permissions, and a failed write leaves FILE as it was and no temporary
// file behind.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, lstatSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ATTN = fileURLToPath(new URL('../../build/attn', import.meta.url));
const INPUT = fileURLToPath(new URL('cat-sat-mat.json', import.meta.url));
const GOLDEN = readFileSync(new URL('golden/cat-sat-mat.json', import.meta.url), 'utf8');

/** Runs `shell` in bash with $ATTN and $INPUT set; { status, stderr }. */
function sh(shell) {
  const run = spawnSync('bash', ['-c', shell], { env: { ...process.env, ATTN, INPUT }, encoding: 'utf8' });
  return { status: run.status, stderr: run.stderr };
}

/** A new empty folder for one test, removed after it. */
function folder(t) {
  const dir = mkdtempSync(join(tmpdir(), 'attn-output-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const mode = (path) => lstatSync(path).mode & 0o7777;

test('a link planted at FILE.partial is not followed: its target keeps its bytes and FILE is a new regular file', (t) => {
  const dir = folder(t);
  const target = join(dir, 'target.txt');
  const file = join(dir, 'result.json');
  writeFileSync(target, 'not yours');
  symlinkSync(target, `${file}.partial`);
  assert.deepEqual(sh(`"$ATTN" -o '${file}' "$INPUT"`), { status: 0, stderr: '' });
  assert.equal(readFileSync(target, 'utf8'), 'not yours');
  assert.ok(lstatSync(file).isFile(), 'FILE is a regular file, not a link');
  assert.equal(readFileSync(file, 'utf8'), GOLDEN);
  assert.equal(readlinkSync(`${file}.partial`), target, 'the planted link is left as it was');
  assert.deepEqual(readdirSync(dir).sort(), ['result.json', 'result.json.partial', 'target.txt'], 'no temporary file is left');
});

test('when FILE is itself a link, the link is replaced by the result and its target is not written', (t) => {
  const dir = folder(t);
  const target = join(dir, 'target.txt');
  const file = join(dir, 'result.json');
  writeFileSync(target, 'not yours');
  symlinkSync(target, file);
  assert.deepEqual(sh(`"$ATTN" -o '${file}' "$INPUT"`), { status: 0, stderr: '' });
  assert.equal(readFileSync(target, 'utf8'), 'not yours');
  assert.ok(lstatSync(file).isFile());
  assert.equal(readFileSync(file, 'utf8'), GOLDEN);
});

test('-o over an existing file keeps its permissions (0600 stays 0600, whatever the umask)', (t) => {
  const dir = folder(t);
  for (const kept of [0o600, 0o640, 0o604, 0o755]) {
    const file = join(dir, `kept-${kept.toString(8)}.json`);
    writeFileSync(file, 'previous');
    chmodSync(file, kept);
    assert.deepEqual(sh(`umask 022; "$ATTN" -o '${file}' "$INPUT"`), { status: 0, stderr: '' });
    assert.equal(readFileSync(file, 'utf8'), GOLDEN);
    assert.equal(mode(file).toString(8), kept.toString(8));
  }
});

test('a new FILE gets 0666 less the umask, as any file a program creates', (t) => {
  const dir = folder(t);
  for (const [umask, want] of [['022', 0o644], ['077', 0o600], ['002', 0o664]]) {
    const file = join(dir, `new-${umask}.json`);
    assert.deepEqual(sh(`umask ${umask}; "$ATTN" -o '${file}' "$INPUT"`), { status: 0, stderr: '' });
    assert.equal(mode(file).toString(8), want.toString(8), `umask ${umask}`);
  }
});

test('a write that fails part way leaves FILE as it was and no temporary file', (t) => {
  const dir = folder(t);
  const file = join(dir, 'result.json');
  writeFileSync(file, 'previous');
  chmodSync(file, 0o600);
  // Files may grow to 1 KiB (ulimit -f counts blocks of 1024 bytes), and a
  // write past that fails with EFBIG instead of killing the process.
  const run = sh(`ulimit -f 1; trap '' XFSZ; "$ATTN" --format steps -o '${file}' "$INPUT"`);
  assert.deepEqual(run, { status: 1, stderr: `attn: cannot write ${file}: File too large\n` });
  assert.equal(readFileSync(file, 'utf8'), 'previous');
  assert.equal(mode(file), 0o600);
  assert.deepEqual(readdirSync(dir), ['result.json']);
});

test('a failed run creates nothing, and a new FILE is not created when the write fails', (t) => {
  const dir = folder(t);
  const file = join(dir, 'result.json');
  let run = sh(`echo '{"kind": "softmax", "x": [1, "a"]}' | "$ATTN" -o '${file}'`);
  assert.deepEqual(run, { status: 2, stderr: 'attn: x[1]: expected a number, got a string\n' });
  run = sh(`ulimit -f 1; trap '' XFSZ; "$ATTN" --format steps -o '${file}' "$INPUT"`);
  assert.equal(run.status, 1);
  assert.deepEqual(readdirSync(dir), []);
});
