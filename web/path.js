// The page's chapters as one path. Two jobs:
//
// - A link to a chapter (the contents, the path bar, a "Next" link, an
//   address ending in #id) lands on its heading and stays there. The
//   sections above it grow from a placeholder to their full height as they
//   mount, which would push the heading down the page (WebKit has no scroll
//   anchoring to hold it, and Chrome's holds whatever it picks). So the
//   sections through the target are mounted at once, and every time a
//   section changes size the page scrolls the target back to its place,
//   until the reader scrolls for themselves.
// - The path bar marks the chapter being read (aria-current="true"): the
//   last one whose box reaches into the top 40% of the view.
// - The path bar gives way (slides below the view, html[data-path-away])
//   while a control it must not cover, the walkthrough's player, reaches
//   into its band at the bottom of the view: on a phone's first screen the
//   player's scrubber and step counter sit there.
//
//   followPath({ chapters, bar, mountThrough, clear }) -> { land(id) }
//   chapters: the <section>s, in order; bar: the path <nav>;
//   mountThrough(id): mounts every section down to id, resolves once they
//   are drawn (a section filled in by a worker grows after its mount);
//   clear: a selector of what the bar must not cover.
//
// html[data-landed="id"] says a landing is complete: the sections through
// it mounted and the heading in place (tests wait on it).

export function followPath({ chapters, bar, mountThrough, clear = '.aw-player' }) {
  const doc = chapters[0]?.ownerDocument ?? document;
  const view = doc.defaultView;
  const byId = new Map(chapters.map((section) => [section.id, section]));
  let pinned = null;
  // Where the page was last scrolled to hold the target: a scroll event that
  // finds the page elsewhere (and the target out of place) is the reader's;
  // until the landing is complete, only if the reader has done anything that
  // scrolls since it began; otherwise it is the browser's: WebKit, for one,
  // keeps scrolling to the address's #fragment as the page loads, to places
  // of its own reckoning.
  let heldAt = -1;
  let readerActed = false;
  let landed = false;
  let landing = 0;

  /** The scroll position that puts section's top at its scroll-margin-top (where headings go). */
  function placeOf(section) {
    const margin = Number.parseFloat(view.getComputedStyle(section).scrollMarginTop) || 0;
    const wanted = view.scrollY + section.getBoundingClientRect().top - margin;
    const most = doc.documentElement.scrollHeight - view.innerHeight;
    return Math.max(0, Math.min(most, wanted));
  }

  function hold() {
    if (!pinned) return;
    const place = placeOf(pinned);
    if (Math.abs(view.scrollY - place) >= 1) view.scrollTo({ top: place, behavior: 'instant' });
    heldAt = view.scrollY;
  }

  function release() {
    pinned = null;
    landing += 1;
    delete doc.documentElement.dataset.landed;
  }

  async function land(id) {
    const section = byId.get(id);
    if (!section) return;
    pinned = section;
    readerActed = false; // the click or key that followed the link is not a scroll
    landed = false;
    const mine = ++landing;
    delete doc.documentElement.dataset.landed;
    hold();
    await mountThrough(id);
    if (mine !== landing) return; // the reader moved on, or another link was followed
    hold();
    if (!(await inPlace(mine))) return;
    landed = true;
    doc.documentElement.dataset.landed = id;
  }

  // A section that changes size after mounting is put back a frame later:
  // the landing is complete at the first frame that finds nothing to put
  // back and no section resized since the frame before (WebKit laid a
  // section out once more after the mount, 5.8 px; a heatmap fits its
  // labels in a frame callback that may run after this one, 6 px), or
  // after a second of frames whatever moves. False if the reader moved on.
  async function inPlace(mine) {
    let resizedBefore = -1;
    for (let frames = 0; frames < 60; frames++) {
      await new Promise((resolve) => view.requestAnimationFrame(resolve));
      if (mine !== landing) return false;
      if (!holdDue && resized === resizedBefore && Math.abs(view.scrollY - placeOf(pinned)) < 1) return true;
      resizedBefore = resized;
      hold();
    }
    return true;
  }

  // A section that changed size is seen after layout (a ResizeObserver); the
  // target is put back in the next frame, before its layout. Not in the
  // observer's callback: a scroll there brings other content into view
  // (content-visibility: auto), which changes the sizes observed within the
  // same frame, a ResizeObserver loop the browser reports as an error.
  let frame = 0;
  let holdDue = false;
  const nextFrame = (andHold) => {
    holdDue ||= andHold;
    if (frame) return;
    frame = view.requestAnimationFrame(() => {
      frame = 0;
      if (holdDue) hold();
      holdDue = false;
      giveWay();
    });
  };
  let resized = 0; // the sections' size changes seen, for inPlace
  const resizes = new view.ResizeObserver(() => {
    resized += 1;
    nextFrame(true);
  });
  for (const section of chapters) resizes.observe(section);

  // The bar's band: the bottom of the view, as tall as the bar where it rests.
  function giveWay() {
    const top = view.innerHeight - bar.offsetHeight;
    const covered = [...doc.querySelectorAll(clear)].some((control) => {
      const box = control.getBoundingClientRect();
      return box.height > 0 && box.bottom > top && box.top < view.innerHeight;
    });
    if (covered) doc.documentElement.dataset.pathAway = '';
    else delete doc.documentElement.dataset.pathAway;
  }
  for (const type of ['scroll', 'resize']) view.addEventListener(type, () => nextFrame(false), { passive: true });

  view.addEventListener('scroll', () => {
    if (!pinned) return;
    const place = placeOf(pinned);
    if (Math.abs(view.scrollY - place) < 1) {
      heldAt = view.scrollY;
    } else if (Math.abs(view.scrollY - heldAt) < 1 || !(readerActed || landed)) {
      hold(); // the page moved under the held position, or the browser scrolled
    } else {
      release();
    }
  }, { passive: true });
  for (const type of ['wheel', 'touchstart', 'keydown', 'pointerdown']) {
    view.addEventListener(type, () => { readerActed = true; }, { capture: true, passive: true });
  }

  const chapterOfHash = (hash) => (byId.has(hash.slice(1)) ? hash.slice(1) : null);
  // A link to the chapter already in the address changes no hash: its click
  // is the one sign of it. The browser's own jump goes to the same place.
  doc.addEventListener('click', (event) => {
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey ||
        event.altKey) return;
    const link = event.target.closest?.('a[href^="#"]');
    const id = link && chapterOfHash(link.getAttribute('href'));
    if (id) land(id);
  });
  view.addEventListener('hashchange', () => {
    const id = chapterOfHash(view.location.hash);
    if (id && byId.get(id) !== pinned) land(id);
  });

  // Where the reader is: the sections in the top 40% of the view; the last of
  // them is the chapter being read (between two sections, and above the first,
  // the last one marked stays: index.html marks chapter 1 to begin with).
  const links = new Map([...bar.querySelectorAll('a[href^="#"]')].map((link) => [chapterOfHash(link.getAttribute('href')), link]));
  const inBand = new Set();
  const mark = () => {
    const current = chapters.findLast((section) => inBand.has(section));
    if (!current) return;
    for (const [id, link] of links) {
      if (id === current.id) link.setAttribute('aria-current', 'true');
      else link.removeAttribute('aria-current');
    }
  };
  const band = new view.IntersectionObserver((entries) => {
    for (const { target, isIntersecting } of entries) {
      if (isIntersecting) inBand.add(target);
      else inBand.delete(target);
    }
    mark();
  }, { rootMargin: '0px 0px -60% 0px' });
  for (const section of chapters) band.observe(section);

  const first = chapterOfHash(view.location.hash);
  if (first) land(first);
  return { land };
}
