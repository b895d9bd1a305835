// Runs before the page is first painted (a classic script in index.html's
// <head>): the first screen drawn into index.html at build time
// (scripts/build-first-screen.mjs) is the default example's first step, so
// where the address asks for anything else (another example or step, edits,
// the backward pass, numbers to check) it is hidden (style.css) and the
// walkthrough shows when its scripts have drawn what was asked for.
{
  const params = new URLSearchParams(window.location.search);
  const other = [...params].some(([key, value]) => !(key === 'step' && value === '1') && key !== 'preset'
    && key !== 'trainer');
  // The default example's id, as the build drew it.
  const shown = document.currentScript?.dataset.preset;
  if (other || (params.has('preset') && params.get('preset') !== shown)) {
    document.documentElement.dataset.firstScreen = 'elsewhere';
  }
}
