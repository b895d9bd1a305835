// web/lib/attention.d.ts read by the TypeScript compiler, which resolves
// unions, intersections and the interfaces a type extends: what the tests
// compare with the facts and with what the engine returns.
import { join } from 'node:path';
import ts from 'typescript';
import { repoRoot } from './support.mjs';

let compiled;

/** The checker and the exported symbols of attention.d.ts, compiled once. */
export function declarations() {
  if (!compiled) {
    const file = join(repoRoot, 'web/lib/attention.d.ts');
    // ES5's library (Omit, the typed arrays) and not the DOM's, which takes seconds to read.
    const program = ts.createProgram([file], { strict: true, noEmit: true, types: [], lib: ['lib.es5.d.ts'] });
    const checker = program.getTypeChecker();
    const exported = checker.getExportsOfModule(checker.getSymbolAtLocation(program.getSourceFile(file)));
    compiled = { checker, exported };
  }
  return compiled;
}

/** The type attention.d.ts exports as `name`. */
export function declaredType(name) {
  const { checker, exported } = declarations();
  return checker.getDeclaredTypeOfSymbol(exported.find((symbol) => symbol.name === name));
}

/** The property names of an exported interface, inherited ones included. */
export function declaredProperties(name) {
  return declarations().checker.getPropertiesOfType(declaredType(name)).map((property) => property.name);
}
