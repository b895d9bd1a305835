// Number display for the page: three decimals on screen, the full double on
// hover (title) and for assistive technology. Formatting only; no arithmetic
// on attention values happens here.

const MINUS = '\u2212';
const SHOWN_DECIMALS = 3;

/** A computed value with three decimals; masked entries read −∞. */
export function formatNumber(value, decimals = SHOWN_DECIMALS) {
  if (value === -Infinity) return `${MINUS}\u221e`;
  if (value === Infinity) return '\u221e';
  if (typeof value !== 'number' || Number.isNaN(value)) return 'NaN';
  const text = value.toFixed(decimals);
  // -0.0004 rounds to "-0.000": a sign on zero only confuses.
  if (/^-0\.?0*$/.test(text)) return text.slice(1);
  return text.startsWith('-') ? MINUS + text.slice(1) : text;
}

/** An input as the learner would type it: at most three decimals, no padding zeros. */
export function formatInput(value) {
  if (typeof value !== 'number' || !Number.isFinite(value)) return formatNumber(value);
  const text = formatNumber(value).replace(/(\.\d*?)0+$/, '$1').replace(/\.$/, '');
  return text === `${MINUS}0` ? '0' : text;
}

/** The shortest text that reads back as exactly this double. */
export function fullPrecision(value) {
  if (value === -Infinity) return `${MINUS}\u221e`;
  if (value === Infinity) return '\u221e';
  const text = String(value);
  return text.startsWith('-') ? MINUS + text.slice(1) : text;
}

const SUPERSCRIPT = { '-': '\u207b', 0: '\u2070', 1: '\u00b9', 2: '\u00b2', 3: '\u00b3', 4: '\u2074', 5: '\u2075', 6: '\u2076', 7: '\u2077', 8: '\u2078', 9: '\u2079' };

/** 10 to an integer power as text: "10⁻³". */
export function powerOfTen(exponent) {
  return `10${String(exponent).split('').map((c) => SUPERSCRIPT[c]).join('')}`;
}

/** A value of any size with three significant digits: "1.23 × 10⁻⁹", "0.456", "0". */
export function formatScientific(value) {
  if (!Number.isFinite(value)) return formatNumber(value);
  if (value === 0 || (Math.abs(value) >= 0.01 && Math.abs(value) < 1000)) {
    return formatNumber(value, value === 0 ? 0 : 3);
  }
  const [mantissa, exponent] = value.toExponential(2).split('e');
  return `${formatNumber(Number(mantissa), 2)} \u00d7 ${powerOfTen(Number(exponent))}`;
}

/** Reads a typed number; accepts the typographic minus. Returns NaN if it is not one. */
export function parseNumber(text) {
  const value = writtenNumber(text);
  return Number.isFinite(value) ? value : NaN;
}

/** A number as written (with − for minus): NaN for any other text, ±Infinity
 * for one too large for a double (1e999), which parseNumber refuses. */
export function writtenNumber(text) {
  const cleaned = String(text).trim().replace(/\u2212/g, '-');
  return /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(cleaned) ? Number(cleaned) : NaN;
}

/**
 * A <span> showing the value with three decimals (or as typed, for inputs)
 * and its full precision in the title.
 */
export function numberElement(doc, value, { input = false, className = '' } = {}) {
  const span = doc.createElement('span');
  span.className = `aw-num${className ? ` ${className}` : ''}`;
  span.textContent = input ? formatInput(value) : formatNumber(value);
  span.title = fullPrecision(value);
  span.dataset.value = fullPrecision(value);
  return span;
}
