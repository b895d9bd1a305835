// web/lib/facts.js, the facts the JS API shares with the C library: the
// committed file is what scripts/gen-facts.c writes now, the declarations
// (attention.d.ts: kinds and their fields, tasks, settings, status codes)
// and the header (attention.h) say the same, the engine takes every kind,
// field and task it lists, and the messages of the JS API and build/attn
// for an unknown kind list every kind.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { declarations, declaredType } from './declarations.mjs';
import { haveNativeCli, loadEngine, nativeCli, repoRoot } from './support.mjs';
import { KIND_FIELDS, KINDS, STATUS, STATUS_TEXT, TASKS, TRAINER_SETTINGS } from '../../web/lib/facts.js';

const generator = join(repoRoot, 'build/gen-facts');
const read = (path) => readFileSync(join(repoRoot, path), 'utf8');

/** The string literals of `export type <name> = 'a' | 'b' ...;` in attention.d.ts. */
function declaredUnion(name) {
  const declaration = read('web/lib/attention.d.ts').match(new RegExp(`export type ${name} =([^;]*);`));
  assert.ok(declaration, `attention.d.ts declares no type ${name}`);
  return [...declaration[1].matchAll(/'([^']*)'/g)].map(([, literal]) => literal);
}

test('web/lib/facts.js is what scripts/gen-facts.c writes now (else run make facts)',
     { skip: !existsSync(generator) && 'build/gen-facts is missing: make build/gen-facts' }, () => {
  const written = spawnSync(generator, { encoding: 'utf8' });
  assert.equal(written.status, 0, written.stderr);
  assert.equal(read('web/lib/facts.js'), written.stdout);
});

test('the facts list the nine kinds of src/problem/problem.c, in its order', () => {
  assert.deepEqual(KINDS, ['scaledDotProduct', 'weightedSum', 'multiHead', 'additive', 'luong', 'linear',
                               'softmax', 'transformerBlock', 'onlineSoftmax']);
});

test('attention.d.ts declares every kind and every task of the facts, in their order', () => {
  assert.deepEqual(declaredUnion('ProblemKind'), KINDS);
  assert.deepEqual(declaredUnion('TrainerTask'), TASKS);
});

/** The member names of `export interface <name> { ... }` in attention.d.ts. */
function declaredMembers(name) {
  const body = read('web/lib/attention.d.ts').match(new RegExp(`export interface ${name} \\{\\n([\\s\\S]*?)\\n\\}`));
  assert.ok(body, `attention.d.ts declares no interface ${name}`);
  return [...body[1].matchAll(/^ {2}(\w+)\??:/gm)].map(([, member]) => member);
}

test('attention.d.ts declares every trainer setting of the facts, in their order', () => {
  assert.deepEqual(declaredMembers('TrainerSettings'), ['task', ...TRAINER_SETTINGS]);
  assert.deepEqual(declaredMembers('TrainerConfig'), ['task', ...TRAINER_SETTINGS]);
});

test('attention.d.ts\'s Problem declares each kind with exactly the fields of the facts', () => {
  // A field typed never is one the kind refuses.
  const { checker } = declarations();
  const declared = {};
  for (const member of declaredType('Problem').types) {
    const kind = checker.getTypeOfSymbol(member.getProperty('kind')).value;
    declared[kind] ??= new Set();
    for (const property of checker.getPropertiesOfType(member)) {
      const never = checker.getTypeOfSymbol(property).flags & ts.TypeFlags.Never;
      if (property.name !== 'kind' && !never) declared[kind].add(property.name);
    }
  }
  assert.deepEqual(Object.keys(declared).sort(), [...KINDS].sort());
  for (const kind of KINDS) {
    assert.deepEqual([...declared[kind]].sort(), Object.keys(KIND_FIELDS[kind]).sort(), `the fields of ${kind}`);
  }
});

test('the status codes are attention.h\'s, and attention.d.ts declares every error code', () => {
  const header = read('src/attention.h');
  const declared = Object.fromEntries([...header.matchAll(/^\s+(ATTN_(?:OK|ERR_\w+)) = (\d+)/gm)]
    .map(([, name, code]) => [name, Number(code)]));
  assert.deepEqual(STATUS, declared);
  assert.equal(STATUS_TEXT.length, Object.keys(STATUS).length);
  // "| 5  // ATTN_ERR_OPTION (...)" a line, the last with its semicolon.
  const types = read('web/lib/attention.d.ts').match(/export type AttentionStatus =\n((?:\s+\|.*\n)+)/)[1];
  const codes = [...types.matchAll(/\|\s*(\d+);?\s*\/\/ (ATTN_\w+)/g)].map(([, code, name]) => [name, Number(code)]);
  assert.deepEqual(Object.fromEntries(codes), Object.fromEntries(Object.entries(STATUS).filter(([, code]) => code)));
});

test('the engine takes every kind of the facts, with exactly the fields they list', async () => {
  const attn = await loadEngine();
  assert.deepEqual(Object.keys(KIND_FIELDS), KINDS);
  for (const [name, fields] of Object.entries(KIND_FIELDS)) {
    assert.throws(() => attn.run({ kind: name, noSuchField: 1 }), {
      status: STATUS.ATTN_ERR_INPUT,
      message: `noSuchField: unknown field for kind "${name}" (fields: ${Object.keys(fields).join(', ')})`,
    });
  }
});

test('the JS API\'s message for an unknown kind lists every kind', async () => {
  const attn = await loadEngine();
  assert.throws(() => attn.run({ kind: 'telepathy' }), (error) => {
    assert.equal(error.status, STATUS.ATTN_ERR_OPTION);
    const listed = error.message.match(/expected one of (.*)$/)[1];
    assert.deepEqual(listed.split(', ').map((quoted) => JSON.parse(quoted)), KINDS);
    return true;
  });
});

test('build/attn\'s message for an unknown kind lists every kind',
     { skip: !haveNativeCli() && 'build/attn is missing: make build/attn' }, () => {
  const child = spawnSync(nativeCli, [], { input: '{"kind": "telepathy"}', encoding: 'utf8' });
  assert.equal(child.status, 2);
  const listed = child.stderr.trim().match(/expected one of (.*)$/)[1];
  assert.deepEqual(listed.split(', ').map((quoted) => JSON.parse(quoted)), KINDS);
});

test('the engine trains every task of the facts and reports every setting', async () => {
  const attn = await loadEngine();
  for (const task of TASKS) {
    const trainer = attn.createTrainer({ task });
    assert.deepEqual(Object.keys(trainer.config), ['task', ...TRAINER_SETTINGS]);
    trainer.dispose();
  }
});
