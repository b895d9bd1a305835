// `build/attn -o FILE` (docs/cli.md, "Writing to a file"): a regular FILE
// gets a new file of a unique name beside it, created exclusively (a link
// planted at any name is never followed), then renamed over it, keeping
// its mode, owner and group; a device, a FIFO or what standard output is
// gets written directly and is never replaced; a link is written through.
// A failed write leaves FILE as it was and no temporary file behind.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  chmodSync, chownSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync, statSync,
  symlinkSync, writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ATTN = fileURLToPath(new URL('../../build/attn', import.meta.url));
const INPUT = fileURLToPath(new URL('cat-sat-mat.json', import.meta.url));
const GOLDEN = readFileSync(new URL('golden/cat-sat-mat.json', import.meta.url), 'utf8');

/** Runs `shell` in bash with $ATTN and $INPUT set; { status, stderr }. */
function sh(shell) {
  const { status, stderr } = shWithOutput(shell);
  return { status, stderr };
}

/** Runs `shell` in bash with $ATTN and $INPUT set; { status, stdout, stderr }. */
function shWithOutput(shell) {
  const run = spawnSync('bash', ['-c', shell], {
    env: { ...process.env, ATTN, INPUT }, encoding: 'utf8', maxBuffer: 2 ** 26,
  });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

const asRoot = process.getuid() === 0;

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

test('when FILE is a link, its target gets the result and the link stays', (t) => {
  const dir = folder(t);
  const target = join(dir, 'target.json');
  const file = join(dir, 'result.json');
  writeFileSync(target, 'previous');
  chmodSync(target, 0o640);
  symlinkSync(target, file);
  assert.deepEqual(sh(`"$ATTN" -o '${file}' "$INPUT"`), { status: 0, stderr: '' });
  assert.equal(readlinkSync(file), target, 'FILE is still the link');
  assert.equal(readFileSync(target, 'utf8'), GOLDEN);
  assert.equal(mode(target).toString(8), '640');
  assert.deepEqual(readdirSync(dir).sort(), ['result.json', 'target.json'], 'no temporary file is left');
});

test('a link to nothing is refused, as cp refuses to write through it, and nothing is created', (t) => {
  const dir = folder(t);
  const file = join(dir, 'result.json');
  symlinkSync(join(dir, 'missing.json'), file);
  assert.deepEqual(sh(`"$ATTN" -o '${file}' "$INPUT"`), {
    status: 2,
    stderr: `attn: cannot write ${file}: it is a link to a file that does not exist (attn writes through a link, ` +
      'never replaces it)\n',
  });
  assert.deepEqual(readdirSync(dir), ['result.json']);
});

test('-o /dev/stdout, -o - and a link to /proc/self/fd/1 write into the pipe the shell set up', (t) => {
  const dir = folder(t);
  const link = join(dir, 'out');
  symlinkSync('/proc/self/fd/1', link);
  for (const name of ['/dev/stdout', '-', link]) {
    assert.deepEqual(shWithOutput(`"$ATTN" -o '${name}' "$INPUT" | cat`), { status: 0, stdout: GOLDEN, stderr: '' }, name);
  }
  assert.equal(readlinkSync(link), '/proc/self/fd/1', 'the link is left as it was');
  assert.deepEqual(readdirSync(dir), ['out']);
});

test('-o /dev/stdout after >> appends to the file, as the shell opened it', (t) => {
  const file = join(folder(t), 'log.json');
  writeFileSync(file, 'first\n');
  assert.deepEqual(sh(`"$ATTN" -o /dev/stdout "$INPUT" >> '${file}'`), { status: 0, stderr: '' });
  assert.equal(readFileSync(file, 'utf8'), `first\n${GOLDEN}`);
});

test('a FIFO is written to and stays a FIFO', (t) => {
  const dir = folder(t);
  const fifo = join(dir, 'fifo');
  const copy = join(dir, 'copy.json');
  const run = sh(`mkfifo '${fifo}' && { cat '${fifo}' > '${copy}' & } && "$ATTN" -o '${fifo}' "$INPUT"; s=$?; wait; exit $s`);
  assert.deepEqual(run, { status: 0, stderr: '' });
  assert.ok(lstatSync(fifo).isFIFO());
  assert.equal(readFileSync(copy, 'utf8'), GOLDEN);
  assert.deepEqual(readdirSync(dir).sort(), ['copy.json', 'fifo']);
});

/**
 * /dev/null and /dev/full, or as root the same devices made in a folder of
 * the test's own (the old -o, run as root, replaced /dev/full with a file).
 */
function devices(t) {
  if (!asRoot) return { nul: '/dev/null', full: '/dev/full', dir: null };
  const dir = folder(t);
  const made = { nul: join(dir, 'null'), full: join(dir, 'full'), dir };
  const run = sh(`mknod '${made.nul}' c 1 3 && mknod '${made.full}' c 1 7`);
  assert.equal(run.status, 0, run.stderr);
  return made;
}

test('a character device is written to and never replaced: /dev/null takes the result, /dev/full says it is full', (t) => {
  const { nul, full, dir } = devices(t);
  const before = [statSync(nul).rdev, statSync(full).rdev];
  assert.deepEqual(sh(`"$ATTN" -o '${nul}' "$INPUT"`), { status: 0, stderr: '' });
  assert.deepEqual(sh(`"$ATTN" -o '${full}' "$INPUT"`), {
    status: 1,
    stderr: `attn: cannot write ${full}: No space left on device\n`,
  });
  assert.ok(lstatSync(nul).isCharacterDevice() && lstatSync(full).isCharacterDevice());
  assert.deepEqual([statSync(nul).rdev, statSync(full).rdev], before);
  if (dir) assert.deepEqual(readdirSync(dir).sort(), ['full', 'null'], 'no temporary file is left');
});

test('a file of another owner, rewritten by root, keeps its owner, group and mode', { skip: !asRoot && 'needs root' }, (t) => {
  const file = join(folder(t), 'theirs.json');
  writeFileSync(file, 'previous');
  chownSync(file, 12345, 23456);
  chmodSync(file, 0o664);
  assert.deepEqual(sh(`"$ATTN" -o '${file}' "$INPUT"`), { status: 0, stderr: '' });
  const written = statSync(file);
  assert.deepEqual([written.uid, written.gid, (written.mode & 0o7777).toString(8)], [12345, 23456, '664']);
  assert.equal(readFileSync(file, 'utf8'), GOLDEN);
});

test('a user who cannot keep a file\'s owner is refused and the file is untouched', { skip: !asRoot && 'needs root' }, (t) => {
  const dir = folder(t);
  chmodSync(dir, 0o777); // the user may make and rename files here
  const file = join(dir, 'roots.json');
  writeFileSync(file, 'previous');
  chmodSync(file, 0o666);
  const run = sh(`setpriv --reuid=65534 --regid=65534 --clear-groups "$ATTN" -o '${file}' "$INPUT"`);
  assert.deepEqual(run, {
    status: 2,
    stderr: `attn: cannot write ${file}: it belongs to another user or group, which a file written in its place ` +
      'would not keep\n',
  });
  assert.equal(readFileSync(file, 'utf8'), 'previous');
  assert.equal(statSync(file).uid, 0);
  assert.deepEqual(readdirSync(dir), ['roots.json']);
});

test('a name of 250 bytes is written (the temporary name is cut to fit 255), and a folder is refused', (t) => {
  const dir = folder(t);
  const file = join(dir, 'a'.repeat(250));
  assert.deepEqual(sh(`"$ATTN" -o '${file}' "$INPUT"`), { status: 0, stderr: '' });
  assert.equal(readFileSync(file, 'utf8'), GOLDEN);
  assert.deepEqual(readdirSync(dir), ['a'.repeat(250)]);
  mkdirSync(join(dir, 'sub'));
  assert.deepEqual(sh(`"$ATTN" -o '${join(dir, 'sub')}' "$INPUT"`), {
    status: 2,
    stderr: `attn: cannot write ${join(dir, 'sub')}: it is a folder\n`,
  });
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

/** A scaled dot-product problem of n × n queries, keys and values whose rows are one-hot (row i has 1 at i % n). */
function oneHotProblem(n) {
  const rows = Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => (j === i ? 1 : 0)));
  return JSON.stringify({ kind: 'scaledDotProduct', q: rows, k: rows, v: rows });
}

test('a result past the 1 MiB held in memory streams whole to FILE and to a pipe, and a write failing part way still leaves FILE as it was', (t) => {
  const dir = folder(t);
  const input = join(dir, 'problem.json');
  const file = join(dir, 'result.json');
  const n = 300; // scores, scaled and weights: 3 × 90,000 numbers, about 2.6 MB
  writeFileSync(input, oneHotProblem(n));
  const piped = shWithOutput(`"$ATTN" '${input}'`);
  assert.equal(piped.status, 0, piped.stderr);
  assert.ok(piped.stdout.length > 2 ** 21, `${piped.stdout.length} bytes`);
  assert.deepEqual(sh(`"$ATTN" -o '${file}' '${input}'`), { status: 0, stderr: '' });
  assert.equal(readFileSync(file, 'utf8'), piped.stdout);
  // q_i · k_j is 1 where i = j, else 0, scaled by 1/√n; weights e^s / Σ e^s.
  const result = JSON.parse(piped.stdout);
  const on = Math.exp(1 / Math.sqrt(n)) / (Math.exp(1 / Math.sqrt(n)) + n - 1);
  assert.equal(result.weights.length, n);
  assert.ok(Math.abs(result.weights[7][7] - on) < 1e-15, `${result.weights[7][7]} ≠ ${on}`);
  assert.ok(Math.abs(result.weights[7][8] - (1 - on) / (n - 1)) < 1e-15);
  assert.equal(result.scores[n - 1][n - 1], 1);

  writeFileSync(file, 'previous');
  const failed = sh(`ulimit -f 2048; trap '' XFSZ; "$ATTN" -o '${file}' '${input}'`);
  assert.deepEqual(failed, { status: 1, stderr: `attn: cannot write ${file}: File too large\n` });
  assert.equal(readFileSync(file, 'utf8'), 'previous');
  assert.deepEqual(readdirSync(dir).sort(), ['problem.json', 'result.json']);
});
