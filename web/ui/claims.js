// The tutorials' claims that are not worked examples ("each row sums to 1",
// a memory estimate, "values often exceed ±24"), as checked in
// tests/vectors/claims.json and placed on the page by
// scripts/make-presets.mjs: a collapsible list that says which hold and
// which do not, and why.
//
//   appendClaims(container, presets, place) -> the list, or null when place has none
//   place: a section's name ('scaling') or 'preset:<id>' for a walkthrough example

const tutorialName = (file) => `Tutorial ${String(file).slice(0, 3)}`;

// A tutorial's heading as plain text ("Why Scale by $\sqrt{d_k}$?" -> "Why Scale by √d_k?").
const plainHeading = (text) => String(text).replace(/\$\\sqrt\{([^}]*)\}\$/g, '\u221a$1');

// "Tutorial 002 (“Mathematical Intuition”): <claim>. Does not hold: <why>."
function claimItem(doc, { id, tutorial, section, claim, holds, note }) {
  const item = doc.createElement('li');
  item.className = `aw-claim ${holds ? 'aw-claim-holds' : 'aw-claim-fails'}`;
  item.dataset.claim = id;
  const source = doc.createElement('span');
  source.className = 'aw-claim-source';
  source.textContent = `${tutorialName(tutorial)} (\u201c${plainHeading(section)}\u201d): `;
  const verdict = doc.createElement('strong');
  verdict.className = 'aw-claim-verdict';
  verdict.textContent = holds ? 'Holds' : 'Does not hold';
  const sentence = (text) => text.replace(/\.?$/, '.');
  item.append(source, `${sentence(claim)} `, verdict, note ? `: ${sentence(note)}` : '.');
  return item;
}

export function appendClaims(container, presets, place) {
  const claims = (presets?.claims ?? []).filter((claim) => claim.shownIn === place);
  if (claims.length === 0) return null;
  const doc = container.ownerDocument;
  const failing = claims.filter((claim) => !claim.holds).length;
  const box = doc.createElement('details');
  box.className = 'aw-claims';
  const summary = doc.createElement('summary');
  summary.textContent = `The tutorials\u2019 claims here, checked: ${claims.length - failing} of ${claims.length} hold`
    + (failing ? `, ${failing} ${failing === 1 ? 'does' : 'do'} not` : '');
  const list = doc.createElement('ul');
  list.className = 'aw-claims-items';
  list.append(...claims.map((claim) => claimItem(doc, claim)));
  box.append(summary, list);
  container.append(box);
  return box;
}
