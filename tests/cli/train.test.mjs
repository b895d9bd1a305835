// `build/attn train`: every task reaches 99% held-out token accuracy within
// its documented step budget for three seeds; the same seed prints the same
// lines; a bad setting is one line naming it, with exit status 2. The
// runs go two at a time (the machine has two cores).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';

const ATTN = fileURLToPath(new URL('../../build/attn', import.meta.url));
const run = promisify(execFile);
const TASKS = ['copy', 'reverse', 'sort', 'previousToken', 'induction', 'lookup'];
const SEEDS = [1, 2, 3];

async function train(args) {
  const { stdout } = await run(ATTN, ['train', ...args], { maxBuffer: 1 << 24 });
  return stdout.trim().split('\n').map((line) => JSON.parse(line));
}

/** Runs jobs two at a time; resolves to their results in order. */
async function twoAtATime(jobs) {
  const results = [];
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) {
      const index = next++;
      results[index] = await jobs[index]();
    }
  };
  await Promise.all([worker(), worker()]);
  return results;
}

test('every task reaches 99% held-out accuracy within its step budget, for seeds 1, 2 and 3', async () => {
  const runs = TASKS.flatMap((task) => SEEDS.map((seed) => ({ task, seed })));
  const outputs = await twoAtATime(runs.map(({ task, seed }) => () => train(['--task', task, '--seed', String(seed), '--log-every', '50'])));
  runs.forEach(({ task, seed }, k) => {
    const lines = outputs[k];
    const summary = lines.at(-1);
    const last = lines.at(-2);
    assert.equal(summary.config.task, task);
    assert.equal(last.step, summary.config.steps, `${task} seed ${seed}: trained for its budget`);
    assert.ok(last.accuracy >= 0.99, `${task} seed ${seed}: held-out accuracy ${last.accuracy} after ${last.step} steps`);
    // The example's predictions are right where it counts.
    const { targets, counted, predicted } = summary.example;
    counted.forEach((c, i) => { if (c) assert.equal(predicted[i], targets[i], `${task} seed ${seed}: position ${i}`); });
  });
});

test('the same seed prints the same lines, and each head\u2019s attention rows sum to 1', async () => {
  const args = ['--task', 'previousToken', '--seed', '4', '--steps', '30'];
  const [first, again] = await Promise.all([train(args), train(args)]);
  assert.deepEqual(first, again);
  const { attention, tokens } = first.at(-1).example;
  assert.equal(attention.length, 2, 'one layer of two heads');
  for (const head of attention) {
    assert.equal(head.length, tokens.length);
    head.forEach((row, i) => {
      assert.ok(Math.abs(row.reduce((a, b) => a + b, 0) - 1) < 1e-12);
      row.forEach((w, j) => { if (j > i) assert.equal(w, 0, 'causal: no weight on later tokens'); });
    });
  }
});

test('a bad setting, example or task is one line naming it, with exit status 2, before any step is trained', async () => {
  const cases = [
    [['--task', 'copy', '--example', '256'], 'attn train: example: must be from 0 to 255, got 256'],
    [['--task', 'copy', '--example', '-1'], 'attn train: --example: expected a whole number from 0'],
    // An unknown flag last on the line is unknown, not a flag without its value.
    [['--task', 'copy', '--bogus'], 'attn train: unknown option --bogus (attn train --help)'],
    [['--task', 'copy', '--steps'], 'attn train: --steps needs a value'],
    [['--task', 'reverse', '--heads', '3'], 'attn train: heads: must divide dModel (32), got 3'],
    [['--task', 'reverse', '--layers', '9'], 'attn train: layers: must be a whole number from 1 to 2, got 9'],
    [['--task', 'juggle'], 'attn train: --task: unknown task (copy, reverse, sort, previousToken, induction, lookup)'],
    [['--task', 'reverse', '--depth', '2'], 'attn train: unknown option --depth (attn train --help)'],
    [['--task', 'lookup', '--seq-length', '8'], 'attn train: seqLength: lookup is pairs then a query, so it must be odd and at least 3, got 8'],
    [['--task', 'copy', '--max-bytes', '0'], 'attn train: --max-bytes: expected a whole number of bytes from 1 to 18446744073709551615, got "0"'],
    [['--task', 'copy', '--max-bytes', '1e6'], 'attn train: --max-bytes: expected a whole number of bytes from 1 to 18446744073709551615, got "1e6"'],
    // strtod alone reads hexadecimal, inf and nan.
    [['--task', 'copy', '--seed', '0x10'], 'attn train: --seed: expected a decimal number (such as 0.01 or 1e-3), got 0x10'],
    [['--task', 'copy', '--learning-rate', 'nan'],
      'attn train: --learning-rate: expected a decimal number (such as 0.01 or 1e-3), got nan'],
  ];
  for (const [args, message] of cases) {
    await assert.rejects(train(args), (error) => {
      assert.equal(error.code, 2, args.join(' '));
      assert.equal(error.stderr.trim(), message);
      assert.equal(error.stdout, '', `${args.join(' ')}: no step is logged`);
      return true;
    });
  }
});

test('--max-bytes bounds what the trainer holds: the limit it names trains, one byte under is refused before any step, and the default is 256 MiB', async () => {
  const refused = async (args) => {
    let message;
    await assert.rejects(train(args), (error) => {
      assert.equal(error.code, 2, args.join(' '));
      assert.equal(error.stdout, '', `${args.join(' ')}: no step is logged`);
      message = error.stderr.trim();
      return true;
    });
    const [, needed, limit] = /^attn train: the trainer needs (\d+) bytes .* more than its limit of (\d+) bytes; /.exec(message) ?? [];
    assert.equal(message, `attn train: the trainer needs ${needed} bytes for its model, batches and working memory, `
      + `more than its limit of ${limit} bytes; use a smaller batchSize, dModel, dFF or seqLength, or raise the limit `
      + '(maxBytes in the JS API, --max-bytes in attn train)');
    return { needed: Number(needed), limit: Number(limit) };
  };
  const copy = ['--task', 'copy', '--steps', '1'];
  const { needed, limit } = await refused([...copy, '--max-bytes', '1000']);
  assert.equal(limit, 1000);
  assert.ok(needed > 1000);
  assert.equal((await train([...copy, '--max-bytes', String(needed)]))[0].step, 1);
  assert.deepEqual(await refused([...copy, '--max-bytes', String(needed - 1)]), { needed, limit: needed - 1 });
  // Every size at its largest: over 256 MiB, refused without --max-bytes.
  const largest = ['--batch-size', '512', '--d-model', '64', '--seq-length', '32', '--layers', '2', '--d-ff', '256', '--heads', '4', '--vocab', '64'];
  const big = await refused([...copy, ...largest]);
  assert.equal(big.limit, 268435456);
  assert.ok(big.needed > 268435456);
});

test('-0 is 0: the seed prints as 0 and trains as seed 0 does', async () => {
  const [minusZero, zero] = await Promise.all([['-0'], ['0']].map(([seed]) => train(['--task', 'copy', '--seed', seed, '--steps', '2'])));
  assert.equal(minusZero.at(-1).config.seed, 0);
  assert.ok(!JSON.stringify(minusZero).includes('-0,'));
  assert.deepEqual(minusZero, zero);
});

test('attn train, its --help and attn --help and --version exit 1 with a message when standard output cannot be written', async () => {
  for (const args of [['train', '--task', 'copy', '--steps', '2'], ['train', '--help'], ['--help'], ['--version']]) {
    const shell = `"$ATTN" ${args.join(' ')} > /dev/full`;
    await assert.rejects(run('bash', ['-c', shell], { env: { ...process.env, ATTN } }), (error) => {
      assert.equal(error.code, 1, args.join(' '));
      assert.match(error.stderr, /^attn( train)?: cannot write the result: No space left on device\n$/);
      return true;
    });
  }
});

/** A number's significant digits as written: "1.2812409748816797e-06" → "12812409748816797", "0.01" → "1". */
const digitsOf = (text) => text.replace(/e.*$/i, '').replace(/[-.]/g, '').replace(/^0+/, '').replace(/0+$/, '');

test('every number attn train prints is the shortest that reads back as the same double, as JavaScript writes it', async () => {
  const { stdout } = await run(ATTN, ['train', '--task', 'copy', '--steps', '20', '--log-every', '10']);
  const numbers = stdout.match(/-?\d+(\.\d+)?(e[-+]?\d+)?/gi);
  assert.ok(numbers.length > 100, `${numbers.length} numbers`);
  for (const text of numbers) assert.equal(digitsOf(text), digitsOf(String(Number(text))), text);
});
