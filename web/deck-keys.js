// A presenter's keys on a Reveal.js slide. While the element's slide is the
// one shown, the keys a clicker or a keyboard sends to move the deck
// (→ Space PageDown n forward, ← Shift+Space PageUp p back) step the
// walkthrough while it has steps left in that direction, and only then move
// the deck, as Reveal's fragments do, whether or not the widget has focus.
// Coming back to the slide from a later one shows its last step, as Reveal
// shows a slide's fragments. Keys pressed inside the widget stay the
// widget's (the element stops them); keys typed into the host's own fields
// are left alone.
//
//   followDeckKeys(element, { stepBy }) -> stop()
//   stepBy(delta): moves the walkthrough delta steps (clamped at its ends),
//   true if it moved.

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

export function followDeckKeys(element, { stepBy }) {
  const view = element.ownerDocument.defaultView;
  const deck = element.closest('.reveal');
  const slide = element.closest('.reveal .slides section');
  if (!deck || !slide) return () => {};

  const onKey = (event) => {
    const delta = direction(event);
    if (delta === 0 || event.defaultPrevented || !slide.classList.contains('present')) return;
    if (event.composedPath().includes(element) || typing(event.target)) return;
    if (!stepBy(delta)) return; // at its end: the deck moves
    event.preventDefault();
    event.stopImmediatePropagation();
  };
  // Reveal dispatches slidechanged on its .reveal element.
  const onSlide = (event) => {
    const { currentSlide, previousSlide } = event;
    if (currentSlide !== slide || !previousSlide) return;
    if (slide.compareDocumentPosition(previousSlide) & view.Node.DOCUMENT_POSITION_FOLLOWING) stepBy(Infinity);
  };
  // Capturing at the window: before Reveal's own listener on the document.
  view.addEventListener('keydown', onKey, true);
  deck.addEventListener('slidechanged', onSlide);
  return () => {
    view.removeEventListener('keydown', onKey, true);
    deck.removeEventListener('slidechanged', onSlide);
  };
}
