// The element on a Reveal.js slide. Two jobs:
//
// - A presenter's keys. While the element's slide is the one shown, the keys
//   a clicker or a keyboard sends to move the deck (→ Space PageDown n
//   forward, ← Shift+Space PageUp p back) step the walkthrough while it has
//   steps left in that direction, and only then move the deck, as Reveal's
//   fragments do, whether or not the widget has focus. Coming back to the
//   slide from a later one shows its last step, as Reveal shows a slide's
//   fragments. Keys pressed inside the widget stay the widget's (the element
//   stops them); keys typed into the host's own fields are left alone.
// - The compact layout's height. It is 640 px, which a 1280 × 720 slide
//   holds under a heading; a slide of Reveal's default 960 × 700 does not:
//   there the element takes the room its slide leaves (--aw-compact-height),
//   and the deck lays the slide out again.
//
//   followDeck(element, { stepBy, keys }) -> stop()
//   stepBy(delta): moves the walkthrough delta steps (clamped at its ends),
//   true if it moved; keys: false leaves the keys to the deck.

const FORWARD = new Set(['ArrowRight', 'PageDown', 'n', 'N']);
const BACK = new Set(['ArrowLeft', 'PageUp', 'p', 'P']);

/** +1, -1, or 0 for a key that does not move a deck. */
function direction(event) {
  if (event.ctrlKey || event.altKey || event.metaKey) return 0;
  if (event.key === ' ') return event.shiftKey ? -1 : 1;
  if (FORWARD.has(event.key)) return 1;
  if (BACK.has(event.key)) return -1;
  return 0;
}

const typing = (target) => target instanceof Element
  && (target.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(target.tagName));

// The compact layout's height (style.css), and the least the element takes.
const COMPACT_HEIGHT = 640;
const LEAST_HEIGHT = 360;

export function followDeck(element, { stepBy, keys = true }) {
  const view = element.ownerDocument.defaultView;
  const deck = element.closest('.reveal');
  const slides = element.closest('.reveal .slides');
  const slide = element.closest('.reveal .slides section');
  if (!deck || !slides || !slide) return () => {};

  // Heights in the deck's own pixels: Reveal scales .slides with a transform,
  // which offsetHeight and scrollHeight do not see.
  let fitted = COMPACT_HEIGHT;
  const fit = () => {
    if (element.getAttribute('layout') !== 'compact' || !slide.classList.contains('present')) return;
    const rest = slide.scrollHeight - element.offsetHeight;
    const room = Math.max(LEAST_HEIGHT, Math.min(COMPACT_HEIGHT, Math.floor(slides.offsetHeight - rest)));
    if (room === fitted) return;
    fitted = room;
    element.style.setProperty('--aw-compact-height', `${room}px`);
    view.dispatchEvent(new view.Event('resize')); // Reveal centres the slide again
  };

  const onKey = (event) => {
    const delta = keys ? direction(event) : 0;
    if (delta === 0 || event.defaultPrevented || !slide.classList.contains('present')) return;
    if (event.composedPath().includes(element) || typing(event.target)) return;
    if (!stepBy(delta)) return; // at its end: the deck moves
    event.preventDefault();
    event.stopImmediatePropagation();
  };
  // Reveal dispatches ready and slidechanged on its .reveal element.
  const onSlide = (event) => {
    const { currentSlide, previousSlide } = event;
    if (currentSlide !== slide) return;
    fit();
    if (!keys || !previousSlide) return;
    if (slide.compareDocumentPosition(previousSlide) & view.Node.DOCUMENT_POSITION_FOLLOWING) stepBy(Infinity);
  };
  // Capturing at the window: before Reveal's own listener on the document.
  view.addEventListener('keydown', onKey, true);
  for (const type of ['ready', 'slidechanged']) deck.addEventListener(type, onSlide);
  fit();
  return () => {
    view.removeEventListener('keydown', onKey, true);
    for (const type of ['ready', 'slidechanged']) deck.removeEventListener(type, onSlide);
  };
}
