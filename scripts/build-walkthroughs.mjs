#!/usr/bin/env node
// Writes web/dist/walkthroughs/<preset>.json: each walkthrough example run
// by the native engine (build/attn), so that the page shows the example's
// first screen before its WebAssembly engine arrives, and every example's
// walkthrough where WebAssembly is off (web/widgets/walkthrough-built.js
// answers the walkthrough's calls from these files). Each file holds what
// the engine wrote for the example's own input, answering the calls the
// page makes (web/lib/attention.js), as the engine's JSON text:
//
//   { input: the engine input, as the page makes it (engineInput),
//     result: `attn --format json` (walkthrough()'s result),
//     outline: `attn --format steps --outline` (walkthrough(input,
//     { equations: false })'s steps), equations: [`attn --format steps
//     --step N`, for each step N] (stepEquations(input, N)),
//     check?: { printed, decimals: the tutorial's printed numbers (the
//     preset's printed and printedDecimals), report: `attn check
//     --allow-none --format json` of them (check()'s report, which says
//     so where none names a result, as for it-animal's illustration) } }
//
//   node scripts/build-walkthroughs.mjs      (after make build/attn; `make vendor`)

import { execFileSync } from 'node:child_process';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { problemFromPreset, walkthroughPresets } from '../web/widgets/walkthrough-problem.js';
import { engineInput } from '../web/widgets/walkthrough-steps.js';

const REPO = fileURLToPath(new URL('../', import.meta.url));
export const WALKTHROUGHS_DIST = join(REPO, 'web', 'dist', 'walkthroughs');
const ATTN = join(REPO, 'build', 'attn');

// build/attn's exit status 1 from `check` means "some printed numbers do not
// hold": a report all the same.
function attn(args, input) {
  try {
    return execFileSync(ATTN, args, {
      input: JSON.stringify(input), encoding: 'utf8', maxBuffer: 1 << 28, stdio: ['pipe', 'pipe', 'pipe'],
    }).trim();
  } catch (error) {
    if (args[0] === 'check' && error.status === 1) return error.stdout.trim();
    throw new Error(`build/attn ${args.join(' ')}: ${error.stderr || error.message}`);
  }
}

/** What the page asks the engine for one example, from build/attn. */
export function builtWalkthrough(preset) {
  const input = engineInput(problemFromPreset(preset));
  const outline = attn(['--format', 'steps', '--outline'], input);
  const count = JSON.parse(outline).steps.length;
  const equations = Array.from({ length: count }, (_, k) => attn(['--format', 'steps', '--step', String(k + 1)], input));
  const built = { input, result: attn(['--format', 'json'], input), outline, equations };
  if (preset.printed) {
    const { printed, printedDecimals: decimals } = preset;
    const report = attn(['check', '--allow-none', '--format', 'json'], { ...input, printed, printedDecimals: decimals });
    built.check = { printed, decimals, report };
  }
  return built;
}

async function main() {
  const presets = JSON.parse(await readFile(join(REPO, 'web', 'presets.json'), 'utf8'));
  await rm(WALKTHROUGHS_DIST, { recursive: true, force: true });
  await mkdir(WALKTHROUGHS_DIST, { recursive: true });
  let bytes = 0;
  const list = walkthroughPresets(presets);
  for (const preset of list) {
    const text = JSON.stringify(builtWalkthrough(preset));
    bytes += text.length;
    await writeFile(join(WALKTHROUGHS_DIST, `${preset.id}.json`), text);
  }
  console.log(`build-walkthroughs: web/dist/walkthroughs/, ${list.length} examples, ${(bytes / 1024).toFixed(1)} KB`);
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error) => {
    console.error(error.message);
    process.exitCode = 1;
  });
}
