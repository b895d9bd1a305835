// The walkthrough's attention lines (ui/token-lines.js) beside its weights
// heatmap: a query's lines appear once the step that computes its weights
// has been reached, never before (no spoilers), and not at all for the
// softmax examples, whose rows and entries are not tokens.
//
//   const lines = mount(element) -> { show(model, steps, current) }
//   model, steps: walkthrough-steps.js's buildModel and buildSteps; current: the step index

import { mount as mountTokenLines } from '../ui/token-lines.js';

export function mount(element) {
  const lines = mountTokenLines(element, { title: 'Attention as lines' });
  return {
    show(model, steps, current) {
      const weights = model.mats.weights;
      if (!weights || model.mode === 'softmax') {
        lines.update([], null);
        return;
      }
      const computed = new Set();
      for (const step of steps.slice(0, current + 1)) {
        for (const { field, cells } of step.produces) if (field === 'weights') for (const [i, j] of cells) computed.add(`${i},${j}`);
      }
      // Weights given as inputs (the weighted-sum examples) are there from the start.
      const known = (i, j) => weights.input || computed.has(`${i},${j}`);
      lines.update(
        { queries: model.qTokens, keys: model.kTokens },
        weights.values.map((row, i) => row.map((weight, j) => (known(i, j) ? weight : null))),
      );
    },
  };
}
