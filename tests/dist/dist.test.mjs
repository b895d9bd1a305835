// Distribution: the TypeScript declarations type-check a usage example;
// the npm tarball holds the module, its WASM and its types, the custom
// element with its WASM and KaTeX, the page and embed.html with every file
// they load, and nothing of the repository besides,
// and a scratch project installs it offline and imports both by name; `make install` gives a header, a library and a
// pkg-config file that a C program builds against, a CMake package that find_package finds, bin/attn, and
// `make uninstall` takes it all away again.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const tsc = join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc');
const { name: PACKAGE, version: VERSION } = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8'));

// Tutorial 000: Q = K = [[1, 0], [0, 1], [1, 1]], V = [[1, 2, 3], [4, 5, 6],
// [7, 8, 9]], d_k = 2. Row 0 of the scaled scores is [a, 0, a] with
// a = 1/sqrt(2), so its weights are [e^a, 1, e^a] / (2e^a + 1) and its
// output's first entry is (1 + 7) w00 + 4 w01.
const A = Math.SQRT1_2;
const W00 = Math.exp(A) / (2 * Math.exp(A) + 1);
const W01 = 1 / (2 * Math.exp(A) + 1);
const OUTPUT00 = 8 * W00 + 4 * W01;
const TOLERANCE = 1e-15;

function assertNear(actual, expected, what) {
  assert.ok(Number.isFinite(actual) && Math.abs(actual - expected) <= TOLERANCE * Math.abs(expected),
            `${what}: expected ${expected}, got ${actual}`);
}

/** Runs a command to completion; fails the test with its output otherwise. */
function run(command, args, options = {}) {
  const result = spawnSync(command, args, { encoding: 'utf8', ...options });
  if (result.error) throw result.error;
  assert.equal(result.status, 0,
               `${command} ${args.join(' ')} exited with ${result.status}\n${result.stdout}\n${result.stderr}`);
  return result.stdout;
}

/** Calls body with a fresh temporary directory, removed afterwards. */
// What a page or module of web/ loads from beside it: src and href in HTML,
// static and dynamic imports and new URL(…, import.meta.url) in JS.
// As written in web/ and as esbuild writes it in the page's bundles (web/dist/page/: double quotes, no spaces).
const LOCAL_REFERENCE = /(?:src|href)="(\.?[\w./-]+)"|from ?['"](\.[^'"]+)['"]|import\(['"](\.[^'"]+)['"]\)|new URL\(['"](\.?\.?\/?[\w./-]+)['"], ?import\.meta\.url\)/g;

/** Every file that the given entry files load, transitively, as paths below root; throws for one that is missing. */
function filesLoadedBy(root, entries) {
  const seen = new Set();
  const queue = [...entries];
  while (queue.length) {
    const file = queue.shift();
    if (seen.has(file)) continue;
    assert.ok(existsSync(join(root, file)), `${file} is loaded but missing from ${root}`);
    seen.add(file);
    if (!/\.(html|js|mjs)$/.test(file)) continue;
    for (const match of readFileSync(join(root, file), 'utf8').matchAll(LOCAL_REFERENCE)) {
      const target = match.slice(1).find(Boolean);
      if (target.startsWith('#') || target.includes(':')) continue;
      queue.push(relative(root, join(root, dirname(file), target)));
    }
  }
  return seen;
}

async function withTempDir(body) {
  const dir = mkdtempSync(join(tmpdir(), 'attention-dist-'));
  try {
    return await body(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const TSCONFIG = {
  compilerOptions: {
    strict: true, noEmit: true, target: 'es2022',
    module: 'nodenext', moduleResolution: 'nodenext', types: [], skipDefaultLibCheck: true,
  },
};

test('the TypeScript declarations type-check the usage example and reject its wrong usage', () => {
  assert.ok(existsSync(tsc), `${tsc} is missing: run npm ci`);
  run(process.execPath, [tsc, '-p', join(repoRoot, 'tests/types/tsconfig.json')], { cwd: repoRoot });
});

test('npm pack makes a tarball that a scratch project installs offline and imports, API and element, by name', async () => {
  await withTempDir(async (dir) => {
    const packDir = join(dir, 'pack');
    mkdirSync(packDir);
    run('npm', ['pack', '--pack-destination', packDir], { cwd: repoRoot });
    const tarballs = readdirSync(packDir).filter((name) => name.endsWith('.tgz'));
    assert.equal(tarballs.length, 1, `expected one tarball, got ${tarballs.join(', ')}`);
    const tarball = join(packDir, tarballs[0]);

    const entries = run('tar', ['-tzf', tarball]).split('\n').filter(Boolean);
    for (const file of ['package.json', 'web/lib/attention.js', 'web/lib/facts.js', 'web/lib/attention.d.ts',
                        'web/lib/attention.wasm', 'web/lib/attention-page.wasm', 'web/dist/attention-walkthrough.js',
                        'web/dist/attention-walkthrough.mjs',
                        'web/dist/attention.wasm', 'web/attention-walkthrough.d.ts',
                        'web/vendor/katex/katex.mjs', 'web/vendor/katex/katex.min.css',
                        'web/vendor/katex/fonts/KaTeX_Main-Regular.woff2']) {
      assert.ok(entries.includes(`package/${file}`), `the tarball lacks ${file}: ${entries.join(', ')}`);
    }
    const strays = entries.filter((entry) => entry.startsWith('package/tests/') ||
                                             entry.includes('node_modules/') ||
                                             entry.startsWith('package/src/'));
    assert.deepEqual(strays, []);

    const project = join(dir, 'project');
    mkdirSync(project);
    writeFileSync(join(project, 'package.json'),
                  JSON.stringify({ name: 'scratch', version: '1.0.0', private: true, type: 'module' }));
    run('npm', ['install', '--offline', '--no-audit', '--no-fund', '--cache', join(dir, 'npm-cache'),
                tarball], { cwd: project });

    writeFileSync(join(project, 'check.mjs'), `
      import { loadAttention } from '${PACKAGE}';
      const attn = await loadAttention();
      const { weights, output } = attn.scaledDotProduct({
        q: [[1, 0], [0, 1], [1, 1]], k: [[1, 0], [0, 1], [1, 1]], v: [[1, 2, 3], [4, 5, 6], [7, 8, 9]],
      });
      console.log(JSON.stringify({ w00: weights[0][0], w01: weights[0][1], output00: output[0][0] }));
    `);
    const result = JSON.parse(run(process.execPath, ['check.mjs'], { cwd: project }));
    // Copied to a site as it is, the package's web/ serves the page and its embeds.
    const loaded = filesLoadedBy(join(project, 'node_modules', PACKAGE, 'web'), ['index.html', 'embed.html']);
    for (const file of ['dist/page/app.js', 'dist/page/engine-preload.js', 'embed.js', 'widgets/registry.js', 'ui/math.js', 'lib/engine-file.js', 'vendor/formulas.js',
      'vendor/katex/katex.min.css', 'presets.json']) {
      assert.ok(loaded.has(file), `the pages load ${file} (found ${[...loaded].join(', ')})`);
    }
    // engine-file.js names the page's engine at run time, by what the browser runs: every build is there.
    for (const build of ['attention-page', 'attention-page-scalar', 'attention-page-relaxed']) {
      const file = join(project, 'node_modules', PACKAGE, 'web', 'lib', `${build}.wasm`);
      assert.ok(existsSync(file), `the package holds web/lib/${build}.wasm`);
    }
    assertNear(result.w00, W00, 'weights[0][0]');
    assertNear(result.w01, W01, 'weights[0][1]');
    assertNear(result.output00, OUTPUT00, 'output[0][0]');

    // The element's script resolves by name and defines <attention-walkthrough>
    // (run here with just enough of a DOM to be defined, not rendered).
    writeFileSync(join(project, 'check-element.mjs'), `
      const defined = [];
      globalThis.document = { baseURI: 'https://example.org/', currentScript: null };
      globalThis.HTMLElement = class {};
      globalThis.customElements = { get: () => undefined, define: (name) => defined.push(name) };
      await import('${PACKAGE}/element');
      console.log(JSON.stringify(defined));
    `);
    assert.deepEqual(JSON.parse(run(process.execPath, ['check-element.mjs'], { cwd: project })),
                     ['attention-walkthrough']);

    // CommonJS (Node 18 cannot require an ES module), the default export, and
    // the element imported where there is no DOM at all (server-side rendering).
    writeFileSync(join(project, 'check.cjs'), `
      const { loadAttention } = require('${PACKAGE}');
      loadAttention().then((attn) => console.log(JSON.stringify(attn.softmax({ x: [0, 0] }).weights)));
    `);
    assert.deepEqual(JSON.parse(run(process.execPath, ['check.cjs'], { cwd: project })), [0.5, 0.5]);
    writeFileSync(join(project, 'check-default.mjs'), `
      import attention from '${PACKAGE}';
      const attn = await attention.loadAttention();
      try { attn.softmax({ x: 'no' }); } catch (error) { console.log(JSON.stringify(error instanceof attention.AttentionError)); }
    `);
    assert.equal(JSON.parse(run(process.execPath, ['check-default.mjs'], { cwd: project })), true);
    writeFileSync(join(project, 'check-ssr.mjs'), `await import('${PACKAGE}/element'); console.log('"imported"');`);
    assert.equal(JSON.parse(run(process.execPath, ['check-ssr.mjs'], { cwd: project })), 'imported');

    // The installed types resolve by the package's name, as in a TypeScript project.
    writeFileSync(join(project, 'check.ts'), `
      import { loadAttention, type Matrix } from '${PACKAGE}';
      const attn = await loadAttention();
      const weights: Matrix = attn.scaledDotProduct({ q: [[1, 0]], k: [[1, 0]], v: [[1]] }).weights;
      // @ts-expect-error the result of a matrix query is a matrix
      const row: number[] = attn.scaledDotProduct({ q: [[1, 0]], k: [[1, 0]], v: [[1]] }).weights;
      export { weights, row };
    `);
    writeFileSync(join(project, 'check-element.ts'), `
      import '${PACKAGE}/element';
      import type { AttentionWalkthroughElement } from '${PACKAGE}/element';
      const element: AttentionWalkthroughElement = document.createElement('attention-walkthrough');
      const state: unknown = element.widget?.getState();
      // @ts-expect-error the widget is null until the element is ready
      element.widget.setState(state);
      export { element };
    `);
    writeFileSync(join(project, 'tsconfig.json'),
                  JSON.stringify({ ...TSCONFIG, files: ['check.ts', 'check-element.ts'] }));
    run(process.execPath, [tsc, '-p', join(project, 'tsconfig.json')], { cwd: project });
    // TypeScript's older node10 resolution reads no "exports": typesVersions
    // still finds the element's types.
    writeFileSync(join(project, 'check-node10.ts'), `
      import type { AttentionWalkthroughElement, AttentionWalkthroughConstructor } from '${PACKAGE}/element';
      declare const element: AttentionWalkthroughElement;
      declare const constructor: AttentionWalkthroughConstructor;
      constructor.assetBase = 'https://cdn.example/attention/dist/';
      export const ready: boolean = element.widget !== null;
    `);
    writeFileSync(join(project, 'tsconfig.node10.json'), JSON.stringify({
      compilerOptions: { module: 'commonjs', moduleResolution: 'node10', strict: true, noEmit: true, target: 'es2022', lib: ['es2022', 'dom'], types: [] },
      files: ['check-node10.ts'],
    }));
    run(process.execPath, [tsc, '-p', join(project, 'tsconfig.node10.json')], { cwd: project });
  });
});

const C_PROGRAM = `
#include <attention.h>
#include <stdio.h>

int main(void)
{
    const double q[3 * 2] = {1, 0, 0, 1, 1, 1};           /* [n_q, d_k], K = Q */
    const double v[3 * 3] = {1, 2, 3, 4, 5, 6, 7, 8, 9};  /* [n_k, d_v] */
    double weights[3 * 3], output[3 * 3];                 /* [n_q, n_k], [n_q, d_v] */
    double work[16];
    if (attn_sdpa_work_size(3) > sizeof work / sizeof work[0]) return 3;
    int status = attn_sdpa(NULL, NULL, weights, output, q, q, v, 1, 3, 3, 2, 3,
                           NULL, work);
    if (status != ATTN_OK) {
        fprintf(stderr, "%s\\n", attn_status_text(status));
        return 2;
    }
    printf("%.17g %.17g %.17g\\n", weights[0], weights[1], output[0]);
    return 0;
}
`;

test('make install puts a header, a library and attention.pc under PREFIX that a C program builds with', async () => {
  await withTempDir(async (dir) => {
    const prefix = join(dir, 'prefix');
    run('make', ['-s', 'install', `PREFIX=${prefix}`], { cwd: repoRoot });
    const pc = readFileSync(join(prefix, 'lib/pkgconfig/attention.pc'), 'utf8');
    assert.match(pc, new RegExp(`^prefix=${prefix}$`, 'm'));

    const env = { ...process.env, PKG_CONFIG_PATH: join(prefix, 'lib/pkgconfig') };
    const flags = run('pkg-config', ['--cflags', '--libs', 'attention'], { env }).trim().split(/\s+/);
    assert.ok(flags.includes(`-I${prefix}/include`) && flags.includes('-lattention') && flags.includes('-lm'),
              `pkg-config gave ${flags.join(' ')}`);

    writeFileSync(join(dir, 'program.c'), C_PROGRAM);
    const program = join(dir, 'program');
    run(process.env.CC || 'cc', ['-std=c11', '-Wall', '-Werror', join(dir, 'program.c'), '-o', program, ...flags],
        { cwd: dir });
    // -lattention picks the shared library, found at run time through
    // LD_LIBRARY_PATH as for any library outside the system's directories.
    const runEnv = { ...process.env, LD_LIBRARY_PATH: join(prefix, 'lib') };
    const [w00, w01, output00] = run(program, [], { env: runEnv }).trim().split(' ').map(Number);
    assertNear(w00, W00, 'weights[0]');
    assertNear(w01, W01, 'weights[1]');
    assertNear(output00, OUTPUT00, 'output[0]');
  });
});

const CMAKE_LISTS = (target) => `
cmake_minimum_required(VERSION 3.13)
project(uses_attention C)
find_package(attention 0.1 CONFIG REQUIRED)
add_executable(program program.c)
target_link_libraries(program PRIVATE ${target})
`;

for (const [target, extra] of [['attention::attention', []],
                               ['attention::attention', ['-Dattention_USE_STATIC_LIBS=ON']],
                               ['attention::attention_static', []]]) {
  const how = extra.length ? `${target} with ${extra.join(' ')}` : target;
  test(`make install gives a CMake package: a C program built with find_package(attention) and ${how} runs`, async () => {
    if (spawnSync('cmake', ['--version']).status !== 0) {
      assert.fail('cmake is missing: run scripts/ensure-deps.sh');
    }
    await withTempDir(async (dir) => {
      const prefix = join(dir, 'prefix');
      run('make', ['-s', 'install', `PREFIX=${prefix}`], { cwd: repoRoot });
      const source = join(dir, 'src');
      mkdirSync(source);
      writeFileSync(join(source, 'program.c'), C_PROGRAM);
      writeFileSync(join(source, 'CMakeLists.txt'), CMAKE_LISTS(target));
      const build = join(dir, 'build');
      run('cmake', ['-S', source, '-B', build, `-DCMAKE_PREFIX_PATH=${prefix}`, ...extra]);
      run('cmake', ['--build', build]);
      const program = join(build, 'program');
      const linked = run('readelf', ['-d', program]);
      const shared = target === 'attention::attention' && extra.length === 0;
      assert.equal(/libattention\.so\.0/.test(linked), shared, `dynamic section:\n${linked}`);
      // CMake's build tree RPATH finds the shared library without help.
      const [w00, w01, output00] = run(program, []).trim().split(' ').map(Number);
      assertNear(w00, W00, 'weights[0]');
      assertNear(w01, W01, 'weights[1]');
      assertNear(output00, OUTPUT00, 'output[0]');
    });
  });
}

test('find_package(attention 1.0) refuses the installed 0.x, by its version file', async () => {
  await withTempDir(async (dir) => {
    const prefix = join(dir, 'prefix');
    run('make', ['-s', 'install', `PREFIX=${prefix}`], { cwd: repoRoot });
    const source = join(dir, 'src');
    mkdirSync(source);
    writeFileSync(join(source, 'program.c'), C_PROGRAM);
    writeFileSync(join(source, 'CMakeLists.txt'),
                  CMAKE_LISTS('attention::attention').replace('attention 0.1', 'attention 1.0'));
    const result = spawnSync('cmake', ['-S', source, '-B', join(dir, 'build'), `-DCMAKE_PREFIX_PATH=${prefix}`],
                             { encoding: 'utf8' });
    assert.notEqual(result.status, 0);
    assert.match(result.stderr, /compatible with requested version "1\.0"[\s\S]*attentionConfig\.cmake, version: 0\.1\.0/);
  });
});

test('make install puts build/attn in bin/ and make uninstall removes every installed file', async () => {
  await withTempDir(async (dir) => {
    const prefix = join(dir, 'prefix');
    run('make', ['-s', 'install', `PREFIX=${prefix}`], { cwd: repoRoot });
    const installed = [];
    const walk = (at) => {
      for (const entry of readdirSync(at, { withFileTypes: true })) {
        const path = join(at, entry.name);
        if (entry.isDirectory()) walk(path);
        else installed.push(relative(prefix, path));
      }
    };
    walk(prefix);
    assert.deepEqual(installed.sort(), [
      'bin/attn', 'include/attention.h',
      'lib/cmake/attention/attentionConfig.cmake', 'lib/cmake/attention/attentionConfigVersion.cmake',
      'lib/libattention.a', 'lib/libattention.so', `lib/libattention.so.${VERSION.split('.')[0]}`,
      `lib/libattention.so.${VERSION}`,
      'lib/pkgconfig/attention.pc',
    ]);
    const output = run(join(prefix, 'bin/attn'), [], { input: '{"kind": "softmax", "x": [0, 0]}' });
    assert.equal(output, '{"scaled":[0,0],"max":0,"exp":[1,1],"sum":2,"weights":[0.5,0.5]}\n');
    run('make', ['-s', 'uninstall', `PREFIX=${prefix}`], { cwd: repoRoot });
    installed.length = 0;
    walk(prefix);
    assert.deepEqual(installed, []);
    assert.ok(!existsSync(join(prefix, 'lib/cmake')), 'lib/cmake is removed once empty');
  });
});

test('make install honours DESTDIR and keeps PREFIX in attention.pc', async () => {
  await withTempDir(async (dir) => {
    run('make', ['-s', 'install', `DESTDIR=${dir}`, 'PREFIX=/opt/attention'], { cwd: repoRoot });
    const root = join(dir, 'opt/attention');
    for (const file of ['lib/libattention.a', 'include/attention.h', 'lib/pkgconfig/attention.pc']) {
      assert.ok(existsSync(join(root, file)), `${file} is missing under DESTDIR`);
    }
    assert.deepEqual(readFileSync(join(root, 'include/attention.h')),
                     readFileSync(join(repoRoot, 'src/attention.h')));
    const pc = readFileSync(join(root, 'lib/pkgconfig/attention.pc'), 'utf8');
    assert.match(pc, /^prefix=\/opt\/attention$/m);
    const version = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')).version;
    assert.match(pc, new RegExp(`^Version: ${version.replace(/\./g, '\\.')}$`, 'm'));
  });
});
