/* latex.c: text made safe for LaTeX (with amsmath): user text
 * escaped, and the walkthrough's Unicode notation (×, −∞, √2, Σ, ...)
 * turned into math, in text mode or in math mode. */
#include "walkthrough/latex.h"

#include <string.h>

/* The walkthrough's symbols, longest first where one starts another. */
static const struct latex_symbol {
    const char *symbol;
    const char *math;  /* in math mode */
    const char *prose; /* in text mode */
} latex_symbols[] = {
    {"−∞", "-\\infty", "\\ensuremath{-\\infty}"},
    {"−", "-", "\\ensuremath{-}"},
    {"∞", "\\infty", "\\ensuremath{\\infty}"},
    {"×", " \\times ", "\\ensuremath{\\times}"},
    {"÷", " \\div ", "\\ensuremath{\\div}"},
    {"·", "\\cdot", "\\ensuremath{\\cdot}"},
    {"≤", "\\leq", "\\ensuremath{\\leq}"},
    {"ᵀ", "^{\\top}", "\\ensuremath{^{\\top}}"},
    {"Σ", "\\Sigma", "\\ensuremath{\\Sigma}"},
    {"φ", "\\varphi", "\\ensuremath{\\varphi}"},
    {"…", "\\ldots", "\\ldots{}"},
};

static int is_letter(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static int is_alnum(char c)
{
    return is_letter(c) || (c >= '0' && c <= '9');
}

/* The text-mode spelling of c, or NULL when c stands for itself. */
static const char *escape_of(char c)
{
    switch (c) {
    case '\\': return "\\textbackslash{}";
    case '{': return "\\{";
    case '}': return "\\}";
    case '$': return "\\$";
    case '&': return "\\&";
    case '#': return "\\#";
    case '^': return "\\textasciicircum{}";
    case '_': return "\\_";
    case '%': return "\\%";
    case '~': return "\\textasciitilde{}";
    /* In LaTeX's default font encoding these print as other glyphs. */
    case '<': return "\\textless{}";
    case '>': return "\\textgreater{}";
    case '|': return "\\textbar{}";
    case '`': return "\\textasciigrave{}";
    default: return NULL;
    }
}

/* Whether s[i] and s[i + 1] would print as one ligature glyph: "--" and
 * "---" as dashes, "``" and "''" as double quotes, "!`" and "?`" as
 * inverted marks. */
static int starts_ligature(const char *s, size_t n, size_t i)
{
    return i + 1 < n && strchr("-`'!?", s[i]) != NULL &&
           strchr("-`'", s[i + 1]) != NULL;
}

/* The length of the control character at s[i] (a label's ESC, BEL or C1
 * CSI), written into escaped as text and Markdown write it (\x1b), or 0
 * when s[i] starts none. Never reads past s[n - 1]. */
static size_t control_in(const char *s, size_t n, size_t i,
                         char escaped[ATTN__ESCAPED_CAP])
{
    const char pair[3] = {s[i], i + 1 < n ? s[i + 1] : '\0', '\0'};
    return attn__control_at(pair, escaped);
}

static void put_escaped_range(attn__text *text, const char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        /* The bytes up to the next one to escape or keep apart, at once. */
        size_t run = 0;
        char escaped[ATTN__ESCAPED_CAP];
        while (i + run < n && escape_of(s[i + run]) == NULL &&
               !starts_ligature(s, n, i + run) &&
               control_in(s, n, i + run, escaped) == 0)
            run++;
        attn__text_append(text, s + i, run);
        i += run;
        if (i == n) break;
        /* Raw, a control character would reach the terminal of whoever
         * prints the file, and TeX refuses it: written visibly. */
        const size_t control = control_in(s, n, i, escaped);
        if (control > 0) {
            attn__text_puts(text, "\\textbackslash{}");
            attn__text_puts(text, escaped + 1);
            i += control;
            continue;
        }
        const char *escape = escape_of(s[i]);
        if (escape != NULL)
            attn__text_puts(text, escape);
        else
            attn__text_append(text, s + i, 1);
        if (starts_ligature(s, n, i))
            attn__text_puts(text, "{}"); /* typed characters stay apart */
        i++;
    }
}

/* How many bytes from s on print as themselves in prose: ASCII that needs
 * no escape and starts no subscript (every symbol, the root sign among
 * them, starts with a byte past ASCII). */
static size_t plain_run(const char *s, size_t n)
{
    size_t i = 0;
    while (i < n && (unsigned char)s[i] < 0x80 && s[i] != '_' &&
           escape_of(s[i]) == NULL)
        i++;
    return i;
}

void attn__latex_literal(attn__text *text, const char *string)
{
    put_escaped_range(text, string, strlen(string));
}

/* The symbol s[0..] starts with, or NULL. Every symbol is non-ASCII, so
 * an ASCII byte (most of any text) starts none: checked first, it saves a
 * search of the table for each byte. */
static const struct latex_symbol *symbol_at(const char *s, size_t n)
{
    if ((unsigned char)s[0] < 0x80) return NULL;
    for (size_t i = 0; i < sizeof latex_symbols / sizeof latex_symbols[0];
         i++) {
        const size_t length = strlen(latex_symbols[i].symbol);
        if (length <= n && memcmp(s, latex_symbols[i].symbol, length) == 0)
            return &latex_symbols[i];
    }
    return NULL;
}

static size_t alnum_run(const char *s, size_t n, int underscores)
{
    size_t i = 0;
    while (i < n && (is_alnum(s[i]) || (underscores && s[i] == '_'))) i++;
    return i;
}

static const char sqrt_sign[] = "√";

/* "√d_k" as \sqrt{d_k}: returns the bytes used, 0 if s is not a root. */
static size_t put_root(attn__text *text, const char *s, size_t n, int math)
{
    const size_t sign = sizeof sqrt_sign - 1;
    if (n < sign || memcmp(s, sqrt_sign, sign) != 0) return 0;
    const size_t radicand = alnum_run(s + sign, n - sign, 1);
    attn__text_puts(text, math ? "\\sqrt{" : "\\ensuremath{\\sqrt{");
    attn__text_append(text, s + sign, radicand);
    attn__text_puts(text, math ? "}" : "}}");
    return sign + radicand;
}

/* The exponent of "4.6e-05" as " \times 10^{-5}": returns the bytes
 * used, 0 if s (just after a digit) does not start one. */
static size_t put_exponent(attn__text *text, const char *s, size_t n)
{
    if (n < 3 || s[0] != 'e' || (s[1] != '-' && s[1] != '+')) return 0;
    const size_t digits = alnum_run(s + 2, n - 2, 0);
    if (digits == 0 || is_letter(s[2])) return 0;
    size_t zeros = 0;
    while (zeros + 1 < digits && s[2 + zeros] == '0') zeros++;
    attn__text_puts(text, s[1] == '-' ? " \\times 10^{-" : " \\times 10^{");
    attn__text_append(text, s + 2 + zeros, digits - zeros);
    attn__text_puts(text, "}");
    return 2 + digits;
}

static void put_math_range(attn__text *text, const char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        size_t used = put_root(text, s + i, n - i, 1);
        if (used == 0 && i > 0 && s[i - 1] >= '0' && s[i - 1] <= '9')
            used = put_exponent(text, s + i, n - i);
        const struct latex_symbol *symbol = symbol_at(s + i, n - i);
        if (used > 0) {
            i += used;
        } else if (symbol != NULL) {
            attn__text_puts(text, symbol->math);
            i += strlen(symbol->symbol);
            /* \leq i, not \leqi */
            if (i < n && is_letter(s[i]) &&
                is_letter(symbol->math[strlen(symbol->math) - 1]))
                attn__text_puts(text, " ");
        } else if (is_letter(s[i]) && i + 1 < n && is_letter(s[i + 1])) {
            /* A word, not a product of one-letter variables. */
            size_t word = 0;
            while (i + word < n && is_letter(s[i + word])) word++;
            if ((word == 3 && (memcmp(s + i, "exp", 3) == 0 ||
                               memcmp(s + i, "max", 3) == 0)) ||
                (word == 4 && memcmp(s + i, "tanh", 4) == 0)) {
                attn__text_puts(text, "\\");
                attn__text_append(text, s + i, word);
            } else {
                attn__text_puts(text, "\\text{");
                attn__text_append(text, s + i, word);
                attn__text_puts(text, "}");
            }
            i += word;
        } else if (escape_of(s[i]) != NULL) {
            attn__text_puts(text, "\\text{");
            put_escaped_range(text, s + i, 1);
            attn__text_puts(text, "}");
            i++;
        } else {
            attn__text_append(text, s + i, 1);
            /* A long row of numbers, [0.4327, 0.2164, ...], may break
             * after a comma, as prose would: TeX breaks inline math only
             * after a relation or an operator, and a sum of three such
             * rows ran past the margin. */
            if (s[i] == ',' && i + 1 < n && s[i + 1] == ' ')
                attn__text_puts(text, "\\allowbreak");
            i++;
        }
    }
}

void attn__latex_math(attn__text *text, const char *string)
{
    put_math_range(text, string, strlen(string));
}

/* "_j" and "_{j ≤ i}" as math subscripts, so that x_j reads as in print;
 * returns the bytes used, 0 for an underscore that stays one. */
static size_t put_subscript(attn__text *text, const char *s, size_t n)
{
    if (n >= 2 && s[1] == '{') {
        const char *close = memchr(s + 2, '}', n - 2);
        if (close == NULL) return 0;
        attn__text_puts(text, "\\ensuremath{_{");
        put_math_range(text, s + 2, (size_t)(close - (s + 2)));
        attn__text_puts(text, "}}");
        return (size_t)(close - s) + 1;
    }
    if (n >= 2 && is_alnum(s[1]) && (n == 2 || !is_alnum(s[2]))) {
        attn__text_puts(text, "\\ensuremath{_");
        attn__text_append(text, s + 1, 1);
        attn__text_puts(text, "}");
        return 2;
    }
    return 0;
}

void attn__latex_prose(attn__text *text, const char *string)
{
    const size_t n = strlen(string);
    size_t i = 0;
    while (i < n) {
        const char *s = string + i;
        size_t used = plain_run(s, n - i);
        if (used > 0) {
            attn__text_append(text, s, used);
            i += used;
            continue;
        }
        const struct latex_symbol *symbol = symbol_at(s, n - i);
        used = put_root(text, s, n - i, 0);
        if (used == 0 && s[0] == '_') used = put_subscript(text, s, n - i);
        if (used == 0 && symbol != NULL) {
            attn__text_puts(text, symbol->prose);
            used = strlen(symbol->symbol);
        }
        if (used == 0) {
            put_escaped_range(text, s, 1);
            used = 1;
        }
        i += used;
    }
}
