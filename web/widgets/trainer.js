// "Watch attention learn": a tiny transformer trains on a task whose right
// attention pattern the learner can predict (reverse: the anti-diagonal;
// previous token: the diagonal below the main one; induction: the stripe),
// in a Web Worker (web/lib/trainer-worker.js), at a pace one can follow
// (the session's SPEEDS, up to full speed), and the section shows, live,
// the held-out loss and accuracy, every head's attention on a held-out
// example and the model's predictions turning right. The session records
// every step it measures; the timeline replays any of them (its weights,
// predictions and losses, and a marker on the curves) while training goes
// on or after it, so the moment a head forms can be found again. The
// learner can train the same model without the 1/√d_head scale side by
// side, and type a sequence of their own.
//
//   mount(element, { engine, state?, onChange?, openWalkthrough? })
//     -> { destroy(), getState(), setState(state), drawn }
//   state: { task, seed, layers, heads, learningRate, scale }
//   drawn: resolves once the session's first report (or its error) is on
//   screen: the section has its full height only then
//   openWalkthrough(state): shows a head's pass in the page's walkthrough;
//   without it, a link to the main page does.
//
// Every number comes from the engine's trainer (attn.createTrainer); this
// file draws what the session reports.

import { scalarEngineNote } from '../ui/engine-note.js';
import { createHeatmap } from '../ui/heatmap.js';
import { createLineChart } from '../ui/line-chart.js';
import { walkthroughLink } from '../ui/embed-button.js';
import { createTrainerSession, DEFAULT_SPEED, SHOWN_EXAMPLE, SPEEDS } from '../lib/trainer-session.js';
import { button, checkbox, choice, clampInt, scrollBox, sectionRoot, sectionState, slider } from './sections-common.js';

const TASKS = {
  reverse: 'Each position predicts the token at the mirrored position (the sequence reversed). Watch a head form the anti-diagonal.',
  previousToken: 'Each position predicts the token just before it, and a causal mask hides later tokens. Watch a head settle on the diagonal just below the main one.',
  induction: 'Eight distinct tokens, then the same eight again; each position predicts the next token. In the second copy a head of layer 2 learns to look just after where the current token appeared before: the induction stripe.',
  lookup: 'Four key\u2013value pairs, then one of the keys; the last position predicts that key\u2019s value. Layer 2 finds the key; layer 1 has made each value remember its key.',
  sort: 'Each position predicts the i-th smallest token: two layers with a feed-forward network.',
  copy: 'Each position predicts its own token. The residual connection alone carries it through: attention hardly matters.',
};
const TASK_LABELS = { reverse: 'Reverse', previousToken: 'Previous token', induction: 'Induction (repeat a sequence)', lookup: 'Key\u2013value lookup', sort: 'Sort', copy: 'Copy' };
const RATES = [0.001, 0.003, 0.01, 0.03];
const DEFAULT_STATE = { task: 'reverse', seed: 1, layers: 0, heads: 0, learningRate: 0, scale: true };
const UNSCALED = 'unscaled';
// The walkthrough's editor takes at most 12 tokens and 16 columns
// (walkthrough-problem.js): a head wider or a sequence longer has no link.
const WALKTHROUGH_TOKENS = 12;
const WALKTHROUGH_WIDTH = 16;
// A walkthrough example whose inputs are Q, K and V: the head's replace them.
const QKV_PRESET = 'cat-sat-mat';

// A loss falls through many decades as the model learns: three significant
// digits, and below 0.001 its exponent ("3.2e\u22125"), not 0.0000.
const formatLoss = (value) => (value >= 1e-3 ? String(Number(value.toPrecision(3))) : value.toExponential(1).replace('-', '\u2212'));

/** Starts a session in a Web Worker, or on the page if no worker can start. */
function startSession(engine, onReply) {
  let worker = null;
  let heard = false;
  let inPage = null;
  const sent = [];
  let messages = 0; // sent, to tell the session's reports to the latest from older ones
  const onPage = () => {
    worker?.terminate();
    worker = null;
    inPage = createTrainerSession(engine, onReply);
    for (const message of sent.splice(0)) inPage(message);
  };
  try {
    worker = new Worker(new URL('../lib/trainer-worker.js', import.meta.url), { type: 'module' });
    worker.addEventListener('message', (event) => { heard = true; onReply(event.data); });
    worker.addEventListener('error', () => {
      if (heard) onReply({ type: 'error', message: 'The training worker stopped.' });
      else onPage();
    });
  } catch {
    onPage();
  }
  return {
    inWorker: () => Boolean(worker),
    messages: () => messages,
    send(message) {
      messages += 1;
      if (inPage) return inPage(message);
      if (!heard) sent.push(message);
      worker.postMessage(message);
    },
    close() { worker?.terminate(); },
  };
}

/** The task, Train (or Pause), one batch, Reset and the speed. */
function createControls(doc, make, { onTask, onTrain, onStep, onReset, onSpeed }) {
  const element = make('div', 'aw-controls');
  const taskChoice = choice(doc, {
    label: 'Task', name: 'task', value: DEFAULT_STATE.task,
    options: Object.entries(TASK_LABELS).map(([value, label]) => ({ value, label })),
    onChange: onTask,
  });
  const trainButton = button(doc, { label: 'Train', className: 'aw-train', onClick: onTrain });
  const stepButton = button(doc, { label: 'Step one batch', className: 'aw-train-step', onClick: onStep });
  const resetButton = button(doc, { label: 'Reset', className: 'aw-train-reset', onClick: onReset });
  const speedChoice = choice(doc, {
    label: 'Speed', name: 'speed', value: DEFAULT_SPEED,
    options: Object.entries(SPEEDS).map(([value, { label }]) => ({ value, label })),
    onChange: onSpeed,
  });
  element.append(taskChoice.element, trainButton, stepButton, resetButton, speedChoice.element);
  return { element, taskChoice, trainButton, speedChoice };
}

/** The model and training settings, and the side-by-side run without scaling. */
function createSettings(doc, make, { update, onCompare }) {
  const element = make('details', 'aw-trainer-settings');
  element.append(make('summary', '', 'Model and training settings'));
  const box = make('div', 'aw-controls');
  const seedInput = make('input', 'aw-trainer-seed');
  seedInput.type = 'number';
  seedInput.min = '0';
  seedInput.step = '1';
  const seedLabel = make('label', 'aw-choice');
  seedLabel.append(doc.createTextNode('Seed '), seedInput);
  seedInput.addEventListener('change', () => update({ seed: clampInt(seedInput.value, 0, 2 ** 31, 1) }));
  const layersChoice = choice(doc, { label: 'Layers', name: 'layers', value: 1, options: [1, 2].map((v) => ({ value: v, label: String(v) })), onChange: (v) => update({ layers: Number(v) }) });
  const headsChoice = choice(doc, { label: 'Heads', name: 'heads', value: 2, options: [1, 2, 4].map((v) => ({ value: v, label: String(v) })), onChange: (v) => update({ heads: Number(v) }) });
  const rateChoice = choice(doc, { label: 'Learning rate', name: 'learningRate', value: 0.01, options: RATES.map((v) => ({ value: v, label: String(v) })), onChange: (v) => update({ learningRate: Number(v) }) });
  const scaleBox = checkbox(doc, { label: 'Scale scores by 1/\u221ad_head', name: 'scale', checked: true, onChange: (on) => update({ scale: on }) });
  const compareBox = checkbox(doc, { label: 'Also train the same model without scaling, side by side', name: 'compare', onChange: onCompare });
  box.append(seedLabel, layersChoice.element, headsChoice.element, rateChoice.element, scaleBox.element,
      compareBox.element);
  element.append(box);
  return {
    element,
    comparing: () => compareBox.input.checked,
    /** Shows a state; a 0 (the task's default) shows the model's own value once it is known. */
    sync(current, config) {
      seedInput.value = String(current.seed);
      layersChoice.select.value = String(current.layers || config?.layers || 1);
      headsChoice.select.value = String(current.heads || config?.heads || 2);
      rateChoice.select.value = String(current.learningRate || config?.learningRate || 0.01);
      scaleBox.input.checked = current.scale;
      compareBox.input.disabled = !current.scale;
    },
  };
}

/** Where the learner types a sequence of their own; onRun() to run it, onBack() for the held-out example. */
function createOwnBox(doc, make, { onRun, onBack }) {
  const element = make('div', 'aw-controls aw-trainer-own');
  const input = make('input', 'aw-trainer-own-input');
  input.type = 'text';
  const label = make('label', 'aw-choice');
  label.append(doc.createTextNode('Your own tokens '), input);
  const error = make('span', 'aw-field-error');
  error.setAttribute('role', 'alert');
  const run = button(doc, { label: 'Show what the model does', className: 'aw-trainer-own-run', onClick: onRun });
  const backButton = button(doc, { label: 'Back to the held-out example', className: 'aw-trainer-own-back', onClick: onBack });
  backButton.hidden = true;
  input.addEventListener('keydown', (event) => { if (event.key === 'Enter') onRun(); });
  element.append(label, run, backButton, error);
  return {
    element, input, backButton,
    /** The typed tokens, or null after showing why they are not a sequence this model takes. */
    read(config) {
      const parts = input.value.trim().split(/[\s,]+/).filter(Boolean);
      const tokens = parts.map(Number);
      const bad = parts.find((part, i) => !Number.isInteger(tokens[i]) || tokens[i] < 0 || tokens[i] >= config.vocab);
      if (parts.length === 0 || parts.length > config.seqLength || bad !== undefined) {
        error.textContent = bad !== undefined
          ? `\u201c${bad.slice(0, 12)}\u201d is not a token: tokens are whole numbers from 0 to ${config.vocab - 1}.`
          : `Type 1 to ${config.seqLength} tokens, separated by spaces.`;
        input.setAttribute('aria-invalid', 'true');
        return null;
      }
      error.textContent = '';
      input.removeAttribute('aria-invalid');
      return tokens;
    },
  };
}

const tokenLabels = (tokens) => tokens.map((token, i) => `${i + 1}:${token}`);

/** The walkthrough's state for a head's queries, keys and values. */
function walkthroughState({ tokens, q, k, v, causal, scale }) {
  const fields = { q, k, v };
  if (causal) fields.mask = 'causal';
  if (!scale) fields.scale = false;
  return { preset: QKV_PRESET, step: 0, backward: true, values: { mode: 'qkv', fields, tokens: tokenLabels(tokens) } };
}

/** One heatmap per head of every layer; draw(tokens, attention) fills them in. */
function createHeads(heatBox, heatDetail) {
  let heatmaps = [];
  return {
    build(config) {
      for (const heatmap of heatmaps) heatmap.destroy();
      heatmaps = [];
      // Up to four maps a row on a wide screen, so that a second layer's fit too.
      const columns = Math.min(4, config.layers * config.heads);
      heatBox.style.setProperty('--columns', String(columns));
      heatBox.classList.toggle('aw-trainer-heads-dense', columns > 2);
      for (let l = 0; l < config.layers; l++) {
        for (let h = 0; h < config.heads; h++) {
          heatmaps.push(createHeatmap(heatBox, {
            title: `Layer ${l + 1}, head ${h + 1}`, name: `layer ${l + 1} head ${h + 1} weight`,
            rowAxis: 'query position', colAxis: 'key position', detailElement: heatDetail,
          }));
        }
      }
    },
    draw(tokens, attention) {
      const labels = tokenLabels(tokens);
      attention.flat().forEach((weights, k) => {
        heatmaps[k].update({ values: weights, rowLabels: labels, colLabels: labels, domain: [0, 1] });
      });
    },
    destroy() {
      for (const heatmap of heatmaps) heatmap.destroy();
    },
  };
}

/**
 * A button per head that opens it in the walkthrough (onOpen(layer, head)),
 * or why the walkthrough cannot take this model's heads.
 */
function fillOpenBox(doc, { openBox, openNote }, config, onOpen) {
  const width = config.dModel / config.heads;
  const fits = config.seqLength <= WALKTHROUGH_TOKENS && width <= WALKTHROUGH_WIDTH;
  openBox.replaceChildren();
  openBox.hidden = !fits;
  openNote.textContent = fits
    ? 'Open a head in the walkthrough: its queries, keys and values on the example shown, at the latest step, step by step, forward and back.'
    : `The walkthrough takes at most ${WALKTHROUGH_TOKENS} tokens and ${WALKTHROUGH_WIDTH} columns; this model\u2019s heads `
      + `see ${config.seqLength} tokens of ${width} columns.`;
  if (!fits) return;
  for (let l = 0; l < config.layers; l++) {
    for (let h = 0; h < config.heads; h++) {
      openBox.append(button(doc, {
        label: `Open layer ${l + 1}, head ${h + 1} in the walkthrough`, className: 'aw-trainer-open-head',
        onClick: () => onOpen(l, h),
      }));
    }
  }
}

/**
 * The example's table: position, input, target (where counted) and the
 * model's prediction, marked right or wrong. The table is built when its
 * tokens change; each step fills in the model's row.
 */
function createPredictionTable(make, predictions) {
  let tableFor = '';
  let modelCells = [];
  return function show(tokens, targets, counted, predicted) {
    const key = JSON.stringify([tokens, targets, counted]);
    if (key !== tableFor) {
      tableFor = key;
      const table = make('table', 'aw-table aw-trainer-table');
      const rows = [['Position', tokens.map((_, i) => String(i + 1))], ['Input', tokens.map(String)]];
      if (targets) rows.push(['Target', targets.map((t, i) => (counted[i] ? String(t) : '\u00b7'))]);
      rows.push(['Model', tokens.map(() => '')]);
      table.append(...rows.map(([head, cells]) => {
        const tr = make('tr');
        const th = make('th', '', head);
        th.scope = 'row';
        tr.append(th, ...cells.map((text) => make('td', '', text)));
        return tr;
      }));
      table.lastChild.className = 'aw-trainer-predicted';
      modelCells = [...table.lastChild.querySelectorAll('td')];
      predictions.replaceChildren(table);
    }
    predicted.forEach((p, i) => {
      const td = modelCells[i];
      td.textContent = String(p);
      if (!targets || !counted[i]) return;
      const right = p === targets[i];
      td.className = right ? 'aw-right' : 'aw-wrong';
      td.setAttribute('aria-label', `${p}, ${right ? 'right' : `wrong (target ${targets[i]})`}`);
    });
  };
}

/** The charts, the example's predictions and the heads (one screen at 1440 × 900). */
function createStage(make) {
  const element = make('div', 'aw-trainer-stage');
  const learning = make('div', 'aw-trainer-learning');
  const charts = make('div', 'aw-trainer-charts');
  const accuracyChart = createLineChart(charts, { title: 'Held-out accuracy', domain: [0, 1], format: (v) => `${(100 * v).toFixed(1)}%` });
  const lossChart = createLineChart(charts, { title: 'Held-out loss (log scale)', log: true, format: formatLoss });
  const exampleHead = make('h4', 'aw-trainer-example-title');
  exampleHead.hidden = true; // until there is an example to show
  const predictions = scrollBox(make, 'aw-trainer-predictions', 'The example, its targets and the model\u2019s predictions');
  learning.append(charts, exampleHead, predictions);
  const headsBox = make('div', 'aw-trainer-heads-box');
  const headsTitle = make('h4', 'aw-trainer-heads-title', 'Where each head looks: a row per position, over the positions it reads');
  const heatBox = make('div', 'aw-trainer-heads');
  const heatDetail = make('p', 'aw-heatmap-detail');
  headsBox.append(headsTitle, heatBox, heatDetail);
  element.append(learning, headsBox);
  return {
    element, accuracyChart, lossChart, exampleHead,
    heads: createHeads(heatBox, heatDetail),
    showPredictions: createPredictionTable(make, predictions),
  };
}

/** The status line for a snapshot: the step (or the one replayed), the losses and the accuracy. */
function statusText(snapshot, { replaying, latest, config }) {
  const { accuracy, loss } = snapshot.heldOut;
  const where = replaying === null
    ? `Step ${snapshot.step} (budget ${config.steps})`
    : `Replaying step ${snapshot.step} (training is at step ${latest.step})`;
  return `${where}${snapshot.loss === null ? '' : ` \u00b7 batch loss ${formatLoss(snapshot.loss)}`}`
    + ` \u00b7 held-out loss ${formatLoss(loss)} \u00b7 held-out accuracy ${(100 * accuracy).toFixed(1)}%`;
}

/** Each session's held-out accuracy and loss, on one x range (a multiple of the budget). */
function drawCharts({ accuracyChart, lossChart }, curves, { scale, comparing, budget }) {
  const series = (name, label, dashed) => ({ label, dashed, points: curves[name] });
  const shown = [series('main', scale ? 'scaled by 1/\u221ad_head' : 'unscaled', false)];
  if (comparing) shown.push(series(UNSCALED, 'unscaled', true));
  const last = Math.max(0, ...shown.flatMap((s) => s.points.map((p) => p.step)));
  const xMax = Math.max(budget, Math.ceil(last / budget) * budget);
  accuracyChart.update(shown.map((s) => ({ ...s, points: s.points.map((p) => [p.step, p.heldOut.accuracy]) })), xMax);
  lossChart.update(shown.map((s) => ({ ...s, points: s.points.map((p) => [p.step, p.heldOut.loss]) })), xMax);
}

function normalise(next) {
  const task = Object.hasOwn(TASKS, next.task) ? next.task : DEFAULT_STATE.task;
  return {
    task,
    seed: clampInt(next.seed, 0, 2 ** 31, 1),
    layers: [0, 1, 2].includes(Number(next.layers)) ? Number(next.layers) : 0,
    heads: [0, 1, 2, 4].includes(Number(next.heads)) ? Number(next.heads) : 0,
    learningRate: [0, ...RATES].includes(Number(next.learningRate)) ? Number(next.learningRate) : 0,
    scale: next.scale !== false,
  };
}

/** The settings for the engine: 0 means the task's own default. */
function settingsOf(current, scale) {
  const chosen = { task: current.task, seed: current.seed, scale };
  for (const name of ['layers', 'heads', 'learningRate']) if (current[name]) chosen[name] = current[name];
  return chosen;
}

// Training pauses while the section is off screen and goes on when it
// comes back (as Distill's figures do). Returns the observer, or null.
function pauseOffscreen(root, { playing, pause, play }) {
  let resumeOnReturn = false;
  const view = root.ownerDocument.defaultView;
  const observer = 'IntersectionObserver' in view ? new view.IntersectionObserver(([entry]) => {
    if (!entry.isIntersecting && playing()) {
      resumeOnReturn = true;
      pause();
    } else if (entry.isIntersecting && resumeOnReturn) {
      resumeOnReturn = false;
      play();
    }
  }) : null;
  observer?.observe(root);
  return observer;
}

/**
 * The timeline: one position per step the main session recorded, its last
 * the latest. Moving it replays a step (asking the session for it) or, at
 * the end, follows training again; show() draws what it selects and
 * mark(step) marks the step replayed (null: none) on the curves.
 */
function createTimeline(doc, make, run, { show, mark }) {
  const element = make('div', 'aw-trainer-timeline');
  const scrubber = slider(doc, {
    label: 'Timeline', name: 'timeline', min: 0, max: 0, value: 0,
    format: (index) => {
      const point = run.curves.main[index];
      return point ? `step ${point.step} of ${run.curves.main.at(-1).step}` : 'step 0';
    },
    onInput: (index) => scrubTo(index),
  });
  const liveButton = button(doc, { label: 'Live', className: 'aw-trainer-live', onClick: () => follow() });
  liveButton.title = 'Show the latest step again, and follow training';
  element.append(scrubber.element, liveButton);

  /** The scrubber moved (keys, a drag, a click): its last position follows training, any other replays. */
  function scrubTo(index) {
    const points = run.curves.main;
    if (index >= points.length - 1) follow();
    else replay(points[index].step);
  }

  function replay(step) {
    run.replaying = step;
    run.replayed = null;
    run.own = null; // the timeline shows the held-out example as it was
    run.requests += 1;
    run.sessions.main.send({ type: 'replay', step, request: run.requests });
    sync();
  }

  /** Back to the latest step, following training. */
  function follow() {
    run.replaying = null;
    run.replayed = null;
    sync();
    show();
  }

  function sync() {
    const points = run.curves.main;
    scrubber.setRange(0, Math.max(0, points.length - 1));
    let index = points.length - 1;
    if (run.replaying !== null) {
      index = Math.max(0, points.findLastIndex((point) => point.step <= run.replaying));
      // The step replayed has been thinned out of the record: the one before it.
      if (points[index].step !== run.replaying) {
        replay(points[index].step);
        return;
      }
    }
    scrubber.set(Math.max(0, index));
    scrubber.input.disabled = points.length < 2;
    liveButton.setAttribute('aria-pressed', String(run.replaying === null));
    mark(run.replaying);
  }

  return { element, follow, sync };
}

/**
 * The section's elements below its title, and their drawing from `run`
 * (the training on screen): the controls, the timeline, the curves, the
 * example and the heads, the learner's own tokens, the heads' links to the
 * walkthrough and the settings. on: what the learner asks for, { task(task),
 * train(), step(), reset(), speed(speed), update(change), compare(),
 * predict(), back(), head(layer, head) }.
 */
function createView({ doc, make, root }, run, on) {
  const controls = createControls(doc, make, {
    onTask: on.task, onTrain: on.train, onStep: on.step, onReset: on.reset, onSpeed: on.speed,
  });
  const taskText = make('p', 'aw-trainer-task');
  const status = make('p', 'aw-trainer-status');
  // Read out where the learner stops, not several times a second while it
  // trains (a reader would still be reading long after Pause): the line
  // shown is not live, this copy of it is, and is written only then.
  const said = make('p', 'aw-visually-hidden aw-trainer-said');
  said.setAttribute('role', 'status');
  root.append(controls.element, taskText, status, said);
  const slowNote = scalarEngineNote(doc, 'Training');
  if (slowNote) root.append(slowNote);
  const timeline = createTimeline(doc, make, run, {
    show,
    mark: (step) => { stage.accuracyChart.mark(step); stage.lossChart.mark(step); },
  });
  root.append(timeline.element);
  const stage = createStage(make);
  root.append(stage.element);
  const ownBox = createOwnBox(doc, make, { onRun: on.predict, onBack: on.back });
  root.append(ownBox.element);
  const openBox = make('div', 'aw-controls aw-trainer-open');
  const openNote = make('p', 'aw-trainer-open-note');
  root.append(openBox, openNote);
  const settings = createSettings(doc, make, { update: on.update, onCompare: on.compare });
  root.append(settings.element);

  /** The status line, the example (or the learner's own tokens) and the heads, for the step shown. */
  function show() {
    const snapshot = run.replaying === null ? run.latest : run.replayed;
    const { own, example } = run;
    if (!snapshot || !example) return;
    status.textContent = statusText(snapshot, run);
    if (!run.playing) said.textContent = status.textContent;
    status.classList.toggle('aw-trainer-replaying', run.replaying !== null);
    stage.exampleHead.hidden = false;
    ownBox.backButton.hidden = !own;
    if (own) {
      stage.exampleHead.textContent = 'Your own tokens: what the model predicts';
      stage.showPredictions(own.tokens, null, null, own.predicted);
      stage.heads.draw(own.tokens, own.attention);
      return;
    }
    stage.exampleHead.textContent = `Held-out example ${SHOWN_EXAMPLE + 1} at step ${snapshot.step}: what the model predicts`;
    stage.showPredictions(example.tokens, example.targets, example.counted, snapshot.predicted);
    stage.heads.draw(example.tokens, snapshot.attention);
  }

  return {
    timeline,
    show,
    speed: () => controls.speedChoice.select.value,
    comparing: settings.comparing,
    readOwn: () => ownBox.read(run.config),
    /** A new model: its heads, its task and the links to the walkthrough. */
    created() {
      stage.heads.build(run.config);
      ownBox.input.placeholder = run.example.tokens.join(' ');
      taskText.textContent = TASKS[run.config.task];
      fillOpenBox(doc, { openBox, openNote }, run.config, on.head);
    },
    /** A head's pass: in the page's walkthrough (openWalkthrough), else a link to one. */
    openHead(reply, openWalkthrough) {
      const walkthrough = walkthroughState(reply);
      if (openWalkthrough) {
        openWalkthrough(walkthrough);
        return;
      }
      const link = make('a', 'aw-link aw-trainer-open-link', `Layer ${reply.layer + 1}, head ${reply.head + 1} in the walkthrough \u2197`);
      link.href = walkthroughLink(walkthrough);
      link.target = '_blank';
      link.rel = 'noopener';
      openNote.replaceChildren(link);
      link.focus();
    },
    drawCharts(scale) {
      drawCharts(stage, run.curves, { scale, comparing: Boolean(run.sessions[UNSCALED]),
          budget: run.config?.steps ?? 100 });
    },
    sync(current) {
      controls.taskChoice.select.value = current.task;
      settings.sync(current, run.config);
      controls.trainButton.textContent = run.playing ? 'Pause' : 'Train';
      if (!run.playing) said.textContent = status.textContent;
    },
    destroy() {
      stage.heads.destroy();
    },
  };
}

export function mount(element, { engine, state = {}, onChange = () => {}, openWalkthrough = null }) {
  const section = sectionRoot(element, {
    name: 'trainer',
    title: 'Watch attention learn',
    intro: [
      'Every other section shows attention with weights someone chose. Here a tiny transformer (token embeddings plus learned '
      + 'positions, one or two layers of multi-head attention, a softmax over the vocabulary) learns a task from random examples, '
      + 'trained with Adam by the same engine, exactly. Pick a task, press Train and watch its heads find the pattern; then drag '
      + 'the timeline back to find the step where a head formed.',
    ],
  });
  const { root, say } = section;
  root.dataset.runsIn = 'page';

  // The training on screen.
  const run = {
    config: null,
    example: null,
    latest: null,    // the main session's latest snapshot
    replaying: null, // the recorded step the timeline shows; null: the latest, following training
    replayed: null,  // that step's snapshot, once the session has sent it
    requests: 0,     // replay requests sent: only the answer to the last is shown
    own: null,       // the learner's own sequence and the model's answer
    playing: false,
    sessions: {},    // 'main' and, when comparing, 'unscaled'
    curves: { main: [], unscaled: [] }, // each session's timeline: { step, loss, heldOut }
  };
  let markDrawn;
  const drawn = new Promise((resolve) => { markDrawn = resolve; });

  const view = createView(section, run, {
    task: (task) => store.update({ task, layers: 0, heads: 0, learningRate: 0 }),
    // Train shows training as it goes, wherever the timeline was.
    train: () => {
      if (run.playing) return pause();
      view.timeline.follow();
      return play();
    },
    step: () => { view.timeline.follow(); sendAll({ type: 'step' }); },
    reset: () => restart(),
    speed: (speed) => sendAll({ type: 'speed', speed }),
    update: (change) => store.update(change),
    compare: () => restart(),
    predict: () => {
      if (!run.config) return;
      const tokens = view.readOwn();
      if (tokens) run.sessions.main.send({ type: 'predict', tokens });
    },
    back: () => { run.own = null; view.show(); },
    head: (layer, head) => {
      if (run.playing) pause();
      view.timeline.follow(); // the head's queries and keys are the latest step's
      run.sessions.main.send({ type: 'head', layer, head, tokens: run.own ? run.own.tokens : run.example.tokens });
    },
  });

  const store = sectionState({
    initial: normalise({ ...DEFAULT_STATE, ...state }),
    normalise,
    show: () => restart(),
    onChange,
  });

  function sendAll(message) {
    for (const session of Object.values(run.sessions)) session.send(message);
  }

  function restart() {
    for (const session of Object.values(run.sessions)) session.close();
    Object.assign(run, { playing: false, latest: null, own: null, replaying: null, replayed: null });
    run.curves.main = [];
    run.curves.unscaled = [];
    const current = store.current;
    run.sessions = { main: startSession(engine, (reply) => heard('main', reply)) };
    if (view.comparing() && current.scale) run.sessions[UNSCALED] = startSession(engine,
        (reply) => heard(UNSCALED, reply));
    run.sessions.main.send({ type: 'create', settings: settingsOf(current, current.scale) });
    run.sessions[UNSCALED]?.send({ type: 'create', settings: settingsOf(current, false) });
    sendAll({ type: 'speed', speed: view.speed() });
    view.sync(store.current);
    view.timeline.sync();
    view.drawCharts(store.current.scale);
  }

  function play() {
    run.playing = true;
    sendAll({ type: 'play' });
    view.sync(store.current);
  }

  function pause() {
    run.playing = false;
    sendAll({ type: 'pause' });
    view.sync(store.current);
  }

  function heard(name, reply) {
    if (!run.sessions[name]) return;
    root.dataset.runsIn = run.sessions.main.inWorker() ? 'worker' : 'page';
    if (reply.type === 'error') {
      say(`The trainer refused: ${reply.message}`);
      run.playing = false;
      view.sync(store.current);
      markDrawn();
      return;
    }
    say('');
    if (reply.type === 'created' && name === 'main') {
      run.config = reply.config;
      run.example = reply.example;
      view.created();
    } else if (reply.type === 'progress') {
      progressed(name, reply);
    } else if (reply.type === 'recorded') {
      if (reply.request !== run.requests || run.replaying === null) return; // an answer overtaken by a later move
      run.replayed = reply;
      view.show();
    } else if (reply.type === 'prediction') {
      run.own = reply;
      view.timeline.follow(); // the model as it is now answered
    } else if (reply.type === 'head') {
      view.openHead(reply, openWalkthrough);
    }
  }

  function progressed(name, reply) {
    run.curves[name] = reply.timeline;
    if (name === 'main') {
      run.latest = reply;
      // It paused at its step budget; a report sent before the page's
      // latest message (a Pause, then Train again) is no news.
      if (!reply.playing && run.playing && reply.handled === run.sessions.main.messages()) {
        run.playing = false;
        view.sync(store.current);
      }
      view.timeline.sync();
      view.show();
      markDrawn();
    }
    view.drawCharts(store.current.scale);
  }

  const observer = pauseOffscreen(root, { playing: () => run.playing, pause, play });

  restart();

  return {
    getState: store.getState,
    setState: store.setState,
    drawn,
    destroy() {
      observer?.disconnect();
      for (const session of Object.values(run.sessions)) session.close();
      view.destroy();
      root.remove();
    },
  };
}
