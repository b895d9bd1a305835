// The self- versus cross-attention section: an English sentence (the
// encoder side) and its French translation (the decoder side), each
// attending to itself, and the decoder's queries attending to the
// encoder's keys and values. The token vectors are hand-made so that
// matching words share a feature (chat and cat, assis and sat, tapis and
// mat); the learner can edit them.
//
//   mount(element, { engine, presets?, state?, onChange? }) -> { destroy(), getState(), setState(state) }
//   presets: presets.json, for the tutorials' claims this section shows (none without it)
//   onChange(state) after each change the learner makes
//   state: { encoder: [[number]], decoder: [[number]], causal }
//
// Every weight comes from the engine's scaledDotProduct.

import { appendClaims } from '../ui/claims.js';
import { createHeatmap } from '../ui/heatmap.js';
import { createMatrixEditor } from '../ui/matrix-editor.js';
import { formatNumber, numberElement } from '../ui/format.js';
import { mathElement } from '../ui/math.js';
import { attempt, button, checkbox, scrollBox, sectionRoot, sectionState } from './sections-common.js';

export const ENCODER_TOKENS = ['The', 'cat', 'sat', 'on', 'the', 'mat'];
export const DECODER_TOKENS = ['Le', 'chat', 's\u2019est', 'assis', 'sur', 'le', 'tapis'];
const FEATURES = ['article', 'cat', 'sitting', 'on', 'mat', 'early', 'late'];

// Content features of size 3, and two position features (early, late) that
// tell "The" at the start from "the" near the end.
export const ENCODER_VECTORS = [
  [3, 0, 0, 0, 0, 2, 0],
  [0, 3, 0, 0, 0, 1.6, 0.4],
  [0, 0, 3, 0, 0, 1.2, 0.8],
  [0, 0, 0, 3, 0, 0.8, 1.2],
  [3, 0, 0, 0, 0, 0.4, 1.6],
  [0, 0, 0, 0, 3, 0, 2],
];
export const DECODER_VECTORS = [
  [3, 0, 0, 0, 0, 2, 0],
  [0, 3, 0, 0, 0, 1.7, 0.3],
  [0, 0, 1.5, 0, 0, 1.3, 0.7],
  [0, 0, 3, 0, 0, 1, 1],
  [0, 0, 0, 3, 0, 0.7, 1.3],
  [3, 0, 0, 0, 0, 0.3, 1.7],
  [0, 0, 0, 0, 3, 0, 2],
];

const copy = (matrix) => matrix.map((row) => row.slice());
const shapedLike = (value, model) => Array.isArray(value) && value.length === model.length
  && value.every((row, i) => Array.isArray(row) && row.length === model[i].length && row.every(Number.isFinite));

function normalise(next) {
  return {
    encoder: shapedLike(next.encoder, ENCODER_VECTORS) ? copy(next.encoder) : copy(ENCODER_VECTORS),
    decoder: shapedLike(next.decoder, DECODER_VECTORS) ? copy(next.decoder) : copy(DECODER_VECTORS),
    causal: next.causal === undefined ? true : Boolean(next.causal),
  };
}

// A change typed into a grid of vectors (sectionState's how).
const TYPED = 'typed';

export function mount(element, { engine, presets = null, state = {}, onChange = () => {} }) {
  const { doc, make, root, say } = sectionRoot(element, {
    name: 'cross',
    title: 'Self-attention and cross-attention',
    intro: [
      'In self-attention the queries, keys and values all come from one sequence: each word looks at the words of its own sentence. '
      + 'In the cross-attention of a translation model the queries come from the sentence being written (the decoder) and the keys '
      + 'and values from the sentence being translated (the encoder), so each French word can look back at the English words.',
      'To keep every number readable, each token is a hand-made 7-number vector (features: article, cat, sitting, on, mat, early, late) '
      + 'used directly as its query, key and value.',
    ],
  });

  const store = sectionState({
    initial: { encoder: copy(ENCODER_VECTORS), decoder: copy(DECODER_VECTORS), causal: true },
    normalise,
    show,
    onChange,
    copy: (state) => ({ ...state, encoder: copy(state.encoder), decoder: copy(state.decoder) }),
  });

  const controls = make('div', 'aw-controls');
  const causalBox = checkbox(doc, {
    label: 'Causal mask on the decoder\u2019s self-attention (a word being written cannot see the words after it)',
    name: 'causal', checked: store.current.causal, onChange: (on) => store.update({ causal: on }),
  });
  controls.append(causalBox.element,
    button(doc, { label: 'Restore the hand-made vectors', onClick: () => store.update({ encoder: copy(ENCODER_VECTORS), decoder: copy(DECODER_VECTORS) }) }));
  root.append(controls);

  const formulas = scrollBox(make, 'aw-formula-lines', 'How each score was computed');
  formulas.append(
    mathElement(doc, '\\text{self: } \\operatorname{softmax}\\!\\Big(\\tfrac{X X^{\\mathsf T}}{\\sqrt{d}}\\Big) X'
      + '\\qquad \\text{cross: } \\operatorname{softmax}\\!\\Big(\\tfrac{Y_{\\text{dec}}\\, X_{\\text{enc}}^{\\mathsf T}}{\\sqrt{d}}\\Big) X_{\\text{enc}}', { display: true }),
  );
  root.append(formulas);

  const heatBox = make('div', 'aw-cross-heatmaps');
  const heatDetail = make('p', 'aw-heatmap-detail');
  root.append(heatBox, heatDetail);
  const heatEncoder = createHeatmap(heatBox, { title: 'Encoder self-attention (English \u2192 English)', name: 'encoder self-attention weight', detailElement: heatDetail });
  const heatDecoder = createHeatmap(heatBox, { title: 'Decoder self-attention (French \u2192 French)', name: 'decoder self-attention weight', detailElement: heatDetail });
  const heatCross = createHeatmap(heatBox, { title: 'Cross-attention (French queries \u2192 English keys)', name: 'cross-attention weight', rowAxis: 'decoder query', colAxis: 'encoder key', detailElement: heatDetail });

  const pairsPanel = make('section', 'aw-panel');
  pairsPanel.append(make('h4', '', 'Where each French word looks most'));
  const pairs = make('ul', 'aw-pairs');
  pairsPanel.append(pairs);
  root.append(pairsPanel);

  const details = make('details');
  details.append(make('summary', '', 'Edit the token vectors'));
  const editors = make('div', 'aw-editors');
  details.append(editors);
  root.append(details);
  const encoderEditor = createMatrixEditor(editors, {
    title: 'English (encoder) vectors', name: 'encoder vector', onChange: (values) => store.update({ encoder: values }, TYPED),
  });
  const decoderEditor = createMatrixEditor(editors, {
    title: 'French (decoder) vectors', name: 'decoder vector', onChange: (values) => store.update({ decoder: values }, TYPED),
  });

  function describe(result, queries, keys) {
    return (i, j) => `score of ${queries[i]} against ${keys[j]} ${formatNumber(result.scores[i][j])}, scaled `
      + `${formatNumber(result.scaled[i][j])}, then the softmax over the row`;
  }

  function draw(current) {
    const { encoder, decoder } = current;
    const runs = attempt(say, () => ({
      encoder: engine.scaledDotProduct({ q: encoder, k: encoder, v: encoder }),
      decoder: engine.scaledDotProduct({ q: decoder, k: decoder, v: decoder, mask: current.causal ? 'causal' : 'none' }),
      cross: engine.scaledDotProduct({ q: decoder, k: encoder, v: encoder }),
    }));
    if (!runs) return;
    heatEncoder.update({ values: runs.encoder.weights, rowLabels: ENCODER_TOKENS, colLabels: ENCODER_TOKENS,
        domain: [0, 1],
      describe: describe(runs.encoder, ENCODER_TOKENS, ENCODER_TOKENS) });
    heatDecoder.update({ values: runs.decoder.weights, rowLabels: DECODER_TOKENS, colLabels: DECODER_TOKENS,
        domain: [0, 1],
      describe: describe(runs.decoder, DECODER_TOKENS, DECODER_TOKENS) });
    heatCross.update({ values: runs.cross.weights, rowLabels: DECODER_TOKENS, colLabels: ENCODER_TOKENS, domain: [0, 1],
      describe: describe(runs.cross, DECODER_TOKENS, ENCODER_TOKENS) });
    pairs.replaceChildren(...runs.cross.weights.map((row, i) => {
      const best = row.indexOf(Math.max(...row));
      const li = make('li');
      li.dataset.query = String(i);
      li.append(make('span', 'aw-token', DECODER_TOKENS[i]), doc.createTextNode(' \u2192 '),
        make('span', 'aw-token', ENCODER_TOKENS[best]), doc.createTextNode(' '), numberElement(doc, row[best]));
      return li;
    }));
  }

  // Edits typed into the grids keep the grids as they are (focus stays put).
  function show(current, previous, how) {
    causalBox.input.checked = current.causal;
    if (how !== TYPED) {
      encoderEditor.setValues(current.encoder, ENCODER_TOKENS, FEATURES);
      decoderEditor.setValues(current.decoder, DECODER_TOKENS, FEATURES);
    }
    draw(current);
  }

  store.setState(state);

  appendClaims(root, presets, 'cross-attention');
  return {
    getState: store.getState,
    setState: (next = {}) => store.setState(next),
    destroy() {
      heatEncoder.destroy();
      heatDecoder.destroy();
      heatCross.destroy();
      encoderEditor.destroy();
      decoderEditor.destroy();
      root.remove();
    },
  };
}
