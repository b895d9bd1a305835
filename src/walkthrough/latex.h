/*
 * latex.h: text made safe for LaTeX (with amsmath), for the LaTeX
 * renderer of walkthroughs.
 */
#ifndef ATTN_LATEX_H
#define ATTN_LATEX_H

#include "text/textbuf.h"

/* User text for text mode: \ { } $ & # ^ _ % ~ < > | escaped. */
void attn__latex_literal(attn__text *text, const char *string);
/* Walkthrough prose for text mode: as attn__latex_literal, but its
 * notation (×, −∞, √2, ᵀ, Σ, φ, ≤, x_j, Σ_{j ≤ i}) becomes \ensuremath
 * math. */
void attn__latex_prose(attn__text *text, const char *string);
/* A formula for math mode: the same notation as math, words as \text{}
 * (exp, max and tanh as \exp, \max and \tanh), other special characters
 * escaped. */
void attn__latex_math(attn__text *text, const char *string);

#endif /* ATTN_LATEX_H */
