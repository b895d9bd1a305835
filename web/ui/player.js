// Step player: play, pause, step back and forward, restart, a scrubber and a
// speed choice. It only counts steps; what a step shows is up to onStep.
// Playing moves on once the step has stood BASE_INTERVAL_MS and what it
// shows has stopped moving (settled()) and stood HOLD_MS still, both over
// the speed: a step's last frame is its result, never a half-built one.
// Playback pauses while the player is off screen and resumes when it is
// back; with prefers-reduced-motion the page drops transitions (style.css),
// so every step appears at once.

import { builder } from './dom.js';

const BASE_INTERVAL_MS = 1800;
const HOLD_MS = 800;
const SVG = 'http://www.w3.org/2000/svg';
// Icons as paths (a 16×16 box): symbol fonts are not on every machine.
const ICONS = {
  restart: 'M2 2h2v12H2zM14 2v12L5 8z',
  back: 'M12 2v12L3 8z',
  forward: 'M4 2v12l9-6z',
  play: 'M4 2v12l10-6z',
  pause: 'M3 2h4v12H3zM9 2h4v12H9z',
};
const SPEEDS = [0.5, 1, 2, 4];

/**
 * How long Play at 1× stands on a step whose movement lasts movementMs:
 * the movement, then HOLD_MS still, and BASE_INTERVAL_MS at least (what
 * schedule() waits, at any speed over that speed).
 */
export function standingMs(movementMs) {
  return Math.max(BASE_INTERVAL_MS, movementMs + HOLD_MS);
}

/** A button's content: its icon, then its text if any. */
function setContent(b, icon, text) {
  const doc = b.ownerDocument;
  const svg = doc.createElementNS(SVG, 'svg');
  svg.setAttribute('viewBox', '0 0 16 16');
  svg.setAttribute('width', '16');
  svg.setAttribute('height', '16');
  svg.setAttribute('aria-hidden', 'true');
  svg.setAttribute('focusable', 'false');
  const path = doc.createElementNS(SVG, 'path');
  path.setAttribute('d', ICONS[icon]);
  path.setAttribute('fill', 'currentColor');
  svg.append(path);
  b.replaceChildren(svg);
  if (text) b.append(doc.createTextNode(` ${text}`));
}

/** The speed choice, 1× to start with; onChange(speed) on a new one. */
function speedMenu(make, onChange) {
  const label = make('label', 'aw-speed');
  label.append(label.ownerDocument.createTextNode('Speed '));
  const select = make('select');
  for (const value of SPEEDS) {
    const option = make('option', '', `${value}\u00d7`);
    option.value = String(value);
    select.append(option);
  }
  select.value = '1';
  select.addEventListener('change', () => onChange(Number(select.value)));
  label.append(select);
  return label;
}

/** Calls onChange(visible) as any of elements comes on screen or the last
 * leaves it; the observer, or null without one. */
function whileShown(elements, onChange) {
  const view = elements[0].ownerDocument.defaultView;
  if (!('IntersectionObserver' in view)) return null;
  const shown = new Set();
  const observer = new view.IntersectionObserver((entries) => {
    for (const entry of entries) {
      if (entry.isIntersecting) shown.add(entry.target);
      else shown.delete(entry.target);
    }
    onChange(shown.size > 0);
  });
  for (const element of elements) observer.observe(element);
  return observer;
}

/**
 * createPlayer(root, { count, onStep(index, reason), describeStep?, watch?, settled?, onSpeed?, onPlay? })
 * watch: an element whose animation the player drives; playback pauses
 * while neither it nor the player's bar is on screen. settled() -> a
 * promise that resolves once the step on screen has stopped moving;
 * onSpeed(rate) hears the chosen speed (at once, then on every change), so
 * that the movement plays at it too. onPlay() hears the learner start
 * playing (the Play button), and onStep's reason is 'play' for every step
 * playing shows.
 */
export function createPlayer(root, {
  count, onStep, describeStep = (i) => `Step ${i + 1}`, watch = null,
  settled = () => Promise.resolve(), onSpeed = () => {}, onPlay = () => {},
}) {
  const doc = root.ownerDocument;
  const view = doc.defaultView;
  let total = Math.max(1, count);
  let current = 0;
  let playing = false;
  let speed = 1;
  let timer = null;
  // Bumped whenever a wait for the movement is no longer wanted (pause, a new step).
  let ticket = 0;
  let hiddenWhilePlaying = false;

  const make = builder(doc);
  const bar = make('div', 'aw-player');
  bar.setAttribute('role', 'group');
  bar.setAttribute('aria-label', 'Walkthrough controls');

  const button = (label, icon, action, extraClass) => {
    const b = make('button', `aw-btn ${extraClass}`);
    b.type = 'button';
    setContent(b, icon);
    b.setAttribute('aria-label', label);
    b.title = label;
    b.addEventListener('click', action);
    bar.append(b);
    return b;
  };

  button('Restart', 'restart', () => { pause(); go(0, 'restart'); }, 'aw-restart');
  const backButton = button('Step back', 'back', () => { pause(); go(current - 1, 'back'); }, 'aw-back');
  const playButton = button('Play', 'play', () => {
    if (playing) pause();
    else {
      play();
      onPlay();
    }
  }, 'aw-play');
  const forwardButton = button('Step forward', 'forward', () => { pause(); go(current + 1, 'forward'); }, 'aw-forward');

  const scrubberLabel = make('label', 'aw-scrub');
  const scrubber = make('input', 'aw-scrubber');
  scrubber.type = 'range';
  scrubber.min = '0';
  scrubber.step = '1';
  // The value first: pause() renders, which writes the current step back.
  scrubber.addEventListener('input', () => {
    const step = Number(scrubber.value);
    pause();
    go(step, 'scrub');
  });
  scrubberLabel.append(make('span', 'aw-visually-hidden', 'Step'), scrubber);
  bar.append(scrubberLabel);

  const counter = make('span', 'aw-counter');
  counter.setAttribute('aria-hidden', 'true'); // the scrubber's value text says the same
  bar.append(counter);

  bar.append(speedMenu(make, (chosen) => {
    speed = chosen;
    onSpeed(speed);
    if (playing) schedule();
  }));
  root.append(bar);

  function render() {
    scrubber.max = String(total - 1);
    scrubber.value = String(current);
    scrubber.setAttribute('aria-valuetext', `${describeStep(current)} (${current + 1} of ${total})`);
    counter.textContent = `${current + 1} / ${total}`;
    // aria-disabled rather than disabled: a disabled button drops keyboard
    // focus to the page, and the learner loses their place.
    backButton.setAttribute('aria-disabled', String(current === 0));
    forwardButton.setAttribute('aria-disabled', String(current === total - 1));
    setContent(playButton, playing ? 'pause' : 'play', playing ? 'Pause' : 'Play');
    playButton.setAttribute('aria-label', playing ? 'Pause' : 'Play');
    // Its name says what it does; not also a toggle ("Pause, pressed").
    playButton.title = playing ? 'Pause' : 'Play';
  }

  function go(step, reason) {
    const next = Math.min(Math.max(0, step), total - 1);
    const changed = next !== current;
    current = next;
    render();
    if (changed || reason === 'restart') onStep(current, reason);
  }

  function schedule() {
    view.clearTimeout(timer);
    const mine = ++ticket;
    const shownAt = view.performance.now();
    Promise.resolve(settled()).then(() => {
      if (mine !== ticket || !playing) return;
      const stood = view.performance.now() - shownAt;
      timer = view.setTimeout(tick, Math.max(HOLD_MS / speed, BASE_INTERVAL_MS / speed - stood));
    });
  }

  function tick() {
    if (!playing) return;
    if (current >= total - 1) { pause(); return; }
    go(current + 1, 'play');
    if (current >= total - 1) pause(); else schedule();
  }

  function play() {
    if (current >= total - 1) go(0, 'restart');
    playing = true;
    render();
    schedule();
  }

  function pause() {
    playing = false;
    hiddenWhilePlaying = false;
    ticket++;
    view.clearTimeout(timer);
    render();
  }

  // The player and what it animates: playing pauses once neither shows.
  const observer = whileShown([bar, watch].filter(Boolean), (visible) => {
    if (!visible && playing) {
      playing = false;
      ticket++;
      view.clearTimeout(timer);
      hiddenWhilePlaying = true;
      render();
    } else if (visible && hiddenWhilePlaying) {
      hiddenWhilePlaying = false;
      play();
    }
  });

  render();
  onSpeed(speed);

  return {
    element: bar,
    /** Moves to step without calling onStep (the caller shows it itself). */
    setStep(step) {
      current = Math.min(Math.max(0, step), total - 1);
      render();
      return current;
    },
    setCount(n) {
      total = Math.max(1, n);
      if (current > total - 1) current = total - 1;
      render();
      return current;
    },
    /**
     * The movement of step `index` lasts movementMs at 1× (0: it does not
     * move): the bar says how long Play at 1× stands on that step
     * (data-standing-step, data-standing-ms), a measure that needs no clock.
     */
    measured(index, movementMs) {
      bar.dataset.standingStep = String(index);
      bar.dataset.standingMs = String(standingMs(movementMs));
    },
    /** Steps delta steps (clamped at either end) as the step buttons do; true if it moved. */
    stepBy(delta) {
      pause();
      const before = current;
      go(current + delta, Math.abs(delta) > 1 ? 'scrub' : delta > 0 ? 'forward' : 'back');
      return current !== before;
    },
    play,
    pause,
    destroy() {
      pause();
      observer?.disconnect();
      bar.remove();
    },
  };
}
