// Put first in every page the cross-engine tests serve (tests/engines/drivers.mjs):
// a record of what a page must not do, read back by the tests. WebKit's
// classic WebDriver has no console log and no way to run a script before the
// page's own, so the page keeps the record itself, the same way in each engine.
const problems = [];
Object.defineProperty(window, '__awProblems', { value: problems });
const consoleError = console.error.bind(console);
console.error = (...args) => {
  problems.push(`console error: ${args.map(String).join(' ')}`);
  consoleError(...args);
};
// Capturing: a failed <script>, <link> or <img> fires 'error' on the element, not on window.
// "ResizeObserver loop completed with undelivered notifications" is one of
// them: no ResizeObserver of the page changes what it observes.
window.addEventListener('error', (event) => {
  const target = event.target;
  if (target === window) problems.push(`uncaught: ${event.message}`);
  else problems.push(`failed to load: ${target.src || target.href || target.tagName}`);
}, true);
window.addEventListener('unhandledrejection', (event) => problems.push(`unhandled rejection: ${event.reason}`));
document.addEventListener('securitypolicyviolation', (event) => {
  problems.push(`blocked by the page's policy (${event.violatedDirective}): ${event.blockedURI}`);
});
