// The tutorials' claims that are not worked examples ("each row sums to 1",
// a memory estimate, "values often exceed ±24"), as checked in
// tests/vectors/claims.json and placed on the page by
// scripts/make-presets.mjs: a collapsible list that says which hold and
// which do not, and why.
//
//   appendClaims(container, presets, place) -> the list, or null when place has none
//   place: a section's name ('scaling') or 'preset:<id>' for a walkthrough example

import { builder } from './dom.js';

const tutorialName = (file) => `Tutorial ${String(file).slice(0, 3)}`;

// A tutorial's heading as plain text ("Why Scale by $\sqrt{d_k}$?" -> "Why Scale by √d_k?").
const plainHeading = (text) => String(text).replace(/\$\\sqrt\{([^}]*)\}\$/g, '\u221a$1');

// "Tutorial 002 (“Mathematical Intuition”): <claim>. Does not hold: <why>."
function claimItem(make, { id, tutorial, section, claim, holds, note }) {
  const item = make('li', `aw-claim ${holds ? 'aw-claim-holds' : 'aw-claim-fails'}`);
  item.dataset.claim = id;
  const source = make('span', 'aw-claim-source', `${tutorialName(tutorial)} (\u201c${plainHeading(section)}\u201d): `);
  const verdict = make('strong', 'aw-claim-verdict', holds ? 'Holds' : 'Does not hold');
  const sentence = (text) => text.replace(/\.?$/, '.');
  item.append(source, `${sentence(claim)} `, verdict, note ? `: ${sentence(note)}` : '.');
  return item;
}

export function appendClaims(container, presets, place) {
  const claims = (presets?.claims ?? []).filter((claim) => claim.shownIn === place);
  if (claims.length === 0) return null;
  const make = builder(container.ownerDocument);
  const failing = claims.filter((claim) => !claim.holds).length;
  const box = make('details', 'aw-claims');
  const summary = make('summary', '', `The tutorials\u2019 claims here, checked: ${claims.length - failing} of ${claims.length} hold`
    + (failing ? `, ${failing} ${failing === 1 ? 'does' : 'do'} not` : ''));
  const list = make('ul', 'aw-claims-items');
  list.append(...claims.map((claim) => claimItem(make, claim)));
  box.append(summary, list);
  container.append(box);
  return box;
}
