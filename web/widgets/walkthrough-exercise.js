// "Your turn": the walkthrough asks the learner for a value before the step
// that computes it shows it. The box sits in the step's figure, where the
// value will appear: an <input data-exercise data-matrix data-row data-col>
// (rows and columns from 0), Enter submits. The engine grades the typed
// text (attn.answer: the check's rule, at the precision typed) and says what
// a wrong value is, with a hint; the second wrong try, or "Show me", shows
// the value. Nothing here judges a number: every verdict, hint and value is
// the engine's.
//
//   exercisesFor(model, chosen?) -> [{ matrix, row, col }]: the cells asked
//     for (chosen, an author's, keeping those the model has; else a score, a
//     weight and an output of the first query)
//   mount(element, { grade }) -> { element, ask(exercise, { label, onSolved(outcome) }),
//     show(exercise, { label }), hide(), restore(exercise, outcome), solved(exercise), reset() }
//   grade(exercise, typed) -> attn.answer's verdict ({ right, readable,
//     verdict, hint, rounded, cause }); it throws the engine's error.

import { builder } from '../ui/dom.js';

const keyOf = ({ matrix, row, col }) => `${matrix},${row},${col}`;

/** The exercises of a model: those chosen that name a cell of it, else one per kind of result. */
export function exercisesFor(model, chosen = null) {
  const has = ({ matrix, row, col }) => {
    const mat = model.mats[matrix];
    return Boolean(mat) && !mat.input && row < mat.values.length && col < mat.values[row].length;
  };
  if (model.vector) return [];
  if (chosen) return chosen.filter(has);
  const scores = ['scores', 'scaled'].find((matrix) => has({ matrix, row: 0, col: 0 }));
  return [scores, 'weights', 'output'].filter(Boolean).map((matrix) => ({ matrix, row: 0, col: 0 }))
    .filter(has);
}

/**
 * "weights:0:1,output:0:0" (an embed's option, an author's list) as
 * exercises; null when the text names none. A part that does not read is
 * reported by name.
 */
export function parseExercises(text) {
  const parts = text.split(',').map((part) => part.trim()).filter(Boolean);
  return parts.map((part) => {
    const match = /^([A-Za-z]+):(\d+):(\d+)$/.exec(part);
    if (!match) throw new Error(`"${part}" is not an exercise: write result:row:column, as weights:0:1`);
    return { matrix: match[1], row: Number(match[2]), col: Number(match[3]) };
  });
}

export function mount(element, { grade }) {
  const make = builder(element.ownerDocument);
  const box = make('div', 'aw-exercise');
  box.hidden = true;
  box.setAttribute('role', 'group');
  const question = make('p', 'aw-exercise-question');
  const form = make('form', 'aw-exercise-form');
  const input = make('input', 'aw-exercise-input');
  input.type = 'text';
  input.inputMode = 'decimal';
  input.autocomplete = 'off';
  input.spellcheck = false;
  input.dataset.exercise = '';
  const check = make('button', 'aw-btn aw-exercise-check', 'Check');
  check.type = 'submit';
  const showMe = make('button', 'aw-btn aw-exercise-show', 'Show me');
  showMe.type = 'button';
  form.append(input, check, showMe);
  const verdict = make('p', 'aw-exercise-verdict');
  verdict.setAttribute('role', 'status');
  const hint = make('p', 'aw-exercise-hint');
  box.append(question, form, verdict, hint);
  element.prepend(box);

  // Per cell: { tries, state: 'asked' | 'right' | 'shown', verdict, hint, typed }.
  const answers = new Map();
  let current = null; // { exercise, onSolved }

  function render(exercise, label) {
    const answer = answers.get(keyOf(exercise));
    box.hidden = false;
    box.dataset.state = answer.state;
    box.setAttribute('aria-label', `Your turn: ${label}`);
    question.textContent = answer.state === 'asked'
      ? `Your turn: what is ${label}? Type it to 2 or 3 decimals and press Enter.`
      : `Your turn: ${label}`;
    Object.assign(input.dataset, { matrix: exercise.matrix, row: String(exercise.row), col: String(exercise.col) });
    input.setAttribute('aria-label', label);
    input.value = answer.typed;
    const done = answer.state !== 'asked';
    input.readOnly = done;
    input.setAttribute('aria-invalid', String(answer.tries > 0 && answer.state !== 'right'));
    check.hidden = done;
    showMe.hidden = done;
    verdict.textContent = answer.verdict;
    hint.textContent = answer.hint;
    hint.hidden = !answer.hint;
  }

  // Answered right, or shown: the box as it stays, and the outcome handed on.
  function settle(state, { verdict: graded, text, shown = input.value }) {
    const { exercise, onSolved } = current;
    const answer = answers.get(keyOf(exercise));
    const response = input.value;
    Object.assign(answer, { state, typed: shown, hint: '', verdict: text });
    render(exercise, current.label);
    current = null;
    onSolved({ state, response, verdict: graded });
  }

  function submit(typed) {
    if (!current) return;
    const answer = answers.get(keyOf(current.exercise));
    let graded;
    try {
      graded = grade(current.exercise, typed);
    } catch (error) {
      Object.assign(answer, { typed, verdict: `The engine could not grade this: ${error.message}`, hint: '' });
      render(current.exercise, current.label);
      return;
    }
    if (graded.right) {
      settle('right', { verdict: graded, text: graded.verdict });
      return;
    }
    if (graded.readable) answer.tries += 1;
    if (answer.tries >= 2) {
      settle('shown', { verdict: graded, text: `${graded.verdict} It is ${graded.rounded}.` });
      return;
    }
    Object.assign(answer, { typed, verdict: graded.verdict, hint: graded.hint });
    render(current.exercise, current.label);
    input.select();
  }

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    submit(input.value);
  });
  showMe.addEventListener('click', () => {
    if (!current) return;
    // The value the engine rounds to the decimals asked for: its verdict on an empty answer carries it.
    let rounded = '';
    try {
      rounded = grade(current.exercise, '').rounded;
    } catch (error) {
      verdict.textContent = `The engine could not show this: ${error.message}`;
      return;
    }
    settle('shown', { verdict: null, text: `It is ${rounded}.`, shown: rounded });
  });

  return {
    element: box,
    /**
     * Asks for the exercise's value; onSolved({ state: 'right' | 'shown',
     * response: the text last typed, verdict: the engine's, null for Show me })
     * once it is right or shown.
     */
    ask(exercise, { label, onSolved }) {
      const key = keyOf(exercise);
      if (!answers.has(key)) answers.set(key, { tries: 0, state: 'asked', verdict: '', hint: '', typed: '' });
      current = { exercise, onSolved, label };
      render(exercise, label);
    },
    /** An exercise already answered, as it was left. */
    show(exercise, { label }) {
      current = null;
      render(exercise, label);
    },
    hide() {
      current = null;
      box.hidden = true;
    },
    /**
     * An answer given before (H5P's saved state), as it was left: the
     * engine's verdict on the response again, or the value shown.
     */
    restore(exercise, { state, response }) {
      const graded = grade(exercise, state === 'right' ? response : '');
      answers.set(keyOf(exercise), {
        tries: state === 'right' ? 0 : 2, state, hint: '',
        typed: state === 'right' ? response : graded.rounded,
        verdict: state === 'right' ? graded.verdict : `It is ${graded.rounded}.`,
      });
    },
    /** Whether the exercise has been answered right or shown. */
    solved: (exercise) => (answers.get(keyOf(exercise))?.state ?? 'asked') !== 'asked',
    /** Forgets every answer (another problem on screen). */
    reset() {
      answers.clear();
      current = null;
      box.hidden = true;
    },
  };
}
