#!/usr/bin/env node
// Writes build/attention-walkthrough.h5p: an H5P content package (a zip of
// h5p.json, content/content.json and the library it runs on) that an LMS
// with H5P (Moodle, Canvas through H5P.com, WordPress's H5P plugin) takes
// as an upload. The content is cat-sat-mat in the compact layout with the
// player; an author changes it in H5P's editor (the library's
// semantics.json). The library H5P.AttentionWalkthrough-MAJOR.MINOR holds
// one script: the element's self-contained build
// (web/dist/attention-notebook.js, `make element`) and web/h5p.js.
//
//   node scripts/build-h5p.mjs      (after `make element`; `make h5p`)

import { execFileSync } from 'node:child_process';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { WIDGETS } from '../web/widgets/registry.js';
import { isMultiHeadPreset } from '../web/presets.js';

const REPO = fileURLToPath(new URL('../', import.meta.url));
const BUILD = join(REPO, 'build');
const STAGE = join(BUILD, 'h5p');
const OUTPUT = join(BUILD, 'attention-walkthrough.h5p');
const MACHINE_NAME = 'H5P.AttentionWalkthrough';

// options: values, or [value, label] pairs.
const select = (name, label, options, defaultValue, description) => ({
  name, type: 'select', label, description, default: defaultValue,
  options: options.map((option) => {
    const [value, shown] = Array.isArray(option) ? option : [option, option];
    return { value, label: shown };
  }),
});

// The walkthrough's examples, by title: a list to pick from, not an id to
// type (the multi-head shapes presets open in their section instead).
const { presets } = JSON.parse(await readFile(join(REPO, 'web', 'presets.json'), 'utf8'));
const EXAMPLES = presets.filter((preset) => !isMultiHeadPreset(preset)).map((preset) => [preset.id, preset.title]);

// What H5P's editor asks an author: the element's attributes.
const SEMANTICS = [
  select('widget', 'Widget', Object.keys(WIDGETS), 'walkthrough', 'The step-by-step walkthrough, or one of the sections.'),
  select('preset', 'Example', EXAMPLES, 'cat-sat-mat', 'The tutorial example the walkthrough opens with.'),
  { name: 'step', type: 'number', label: 'Step to open at', default: 1, min: 1, optional: true },
  select('layout', 'Layout', ['compact', 'full'], 'compact',
    'Compact: one height that fits a slide or a page; full: as tall as the content.'),
  { name: 'controls', type: 'text', label: 'Controls', default: 'player', optional: true,
    description: 'player, editor, preset, errata, export, embed (comma-separated), all or none.' },
  select('theme', 'Theme', ['light', 'dark', 'auto'], 'light', 'auto follows the reader\u2019s system.'),
  { name: 'exercises', type: 'text', label: 'Exercises (Your turn)', default: 'on', optional: true,
    description: 'on (a score, a weight and an output), off, or the cells to ask for: weights:0:1,output:1:0 '
      + '(result:row:column, from 0). Each is graded (one point) and reported to the LMS.' },
  { name: 'enableSolutionsButton', type: 'boolean', label: 'Show the solutions when the LMS asks', default: true },
];

async function main() {
  const { version, description } = JSON.parse(await readFile(join(REPO, 'package.json'), 'utf8'));
  const [major, minor, patch] = version.split('.').map(Number);
  const element = await readFile(join(REPO, 'web', 'dist', 'attention-notebook.js'), 'utf8').catch(() => {
    throw new Error('build-h5p: web/dist/attention-notebook.js is missing; run `make element` first');
  });
  const glue = await readFile(join(REPO, 'web', 'h5p.js'), 'utf8');
  const library = `${MACHINE_NAME}-${major}.${minor}`;
  const dependency = { machineName: MACHINE_NAME, majorVersion: major, minorVersion: minor };

  const files = {
    'h5p.json': {
      title: 'Attention, step by step', language: 'en', mainLibrary: MACHINE_NAME,
      embedTypes: ['iframe'], license: 'U', preloadedDependencies: [dependency],
    },
    'content/content.json': Object.fromEntries(SEMANTICS.map(({ name, default: value }) => [name, value])),
    [`${library}/library.json`]: {
      title: 'Attention walkthrough', description, machineName: MACHINE_NAME,
      majorVersion: major, minorVersion: minor, patchVersion: patch, runnable: 1,
      author: 'Attention, computed exactly', license: 'U', embedTypes: ['iframe'],
      coreApi: { majorVersion: 1, minorVersion: 19 },
      preloadedJs: [{ path: 'attention-walkthrough.js' }],
    },
    [`${library}/semantics.json`]: SEMANTICS,
  };
  await rm(STAGE, { recursive: true, force: true });
  for (const [name, value] of Object.entries(files)) {
    await mkdir(join(STAGE, name, '..'), { recursive: true });
    await writeFile(join(STAGE, name), `${JSON.stringify(value, null, 2)}\n`);
  }
  await writeFile(join(STAGE, library, 'attention-walkthrough.js'), `${element}\n${glue}`);
  await rm(OUTPUT, { force: true });
  // -X: no extra file attributes; -D: no directory entries (H5P's validator
  // takes files only).
  execFileSync('zip', ['-q', '-r', '-X', '-D', OUTPUT, 'h5p.json', 'content', library], { cwd: STAGE });
  console.log(`build-h5p: build/attention-walkthrough.h5p (library ${library})`);
}

main().catch((error) => {
  console.error(error.message);
  process.exitCode = 1;
});
