/*
 * shortest.c: attn__format_shortest, the shortest decimal that reads back
 * as the same double, by Ulf Adams's Ryu ("Ryū: fast float-to-string
 * conversion", PLDI 2018): the interval of decimals that round to x is
 * found with one 128-bit multiplication per bound, then digits are
 * dropped while the interval still holds a number. No printf, no strtod:
 * the walkthroughs and the results' JSON write millions of numbers.
 *
 * The digits below (d2d) are Ryu's ryu/d2s.c, Copyright 2018 Ulf Adams,
 * used under the Boost Software License, Version 1.0
 * (https://www.boost.org/LICENSE_1_0.txt), cut to the 128-bit path.
 */
#include "attention.h"
#include "text/shortest_table.h"
#include "text/textbuf.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

enum {
    MANTISSA_BITS = 52,
    EXPONENT_BITS = 11,
    BIAS = 1023,
    PLAIN_DIGITS = 15 /* %.15g's precision, the form below 16 digits */
};

__extension__ typedef unsigned __int128 u128;

/* ⌊log10(2^e)⌋ for 0 <= e <= 1650. */
static uint32_t log10_pow2(int32_t e)
{
    return ((uint32_t)e * 78913) >> 18;
}

/* ⌊log10(5^e)⌋ for 0 <= e <= 2620. */
static uint32_t log10_pow5(int32_t e)
{
    return ((uint32_t)e * 732923) >> 20;
}

/* ⌈log2(5^e)⌉ (1 for e = 0) for 0 <= e <= 3528. */
static int32_t pow5_bits(int32_t e)
{
    return (int32_t)((((uint32_t)e * 1217359) >> 19) + 1);
}

static uint32_t pow5_factor(uint64_t value)
{
    const uint64_t inverse_of_5 = 14757395258967641293u;  /* mod 2^64 */
    const uint64_t multiples_of_5 = 3689348814741910323u; /* 2^64 / 5 */
    uint32_t count = 0;
    for (;;) {
        value *= inverse_of_5;
        if (value > multiples_of_5) break;
        ++count;
    }
    return count;
}

static int multiple_of_pow5(uint64_t value, uint32_t p)
{
    return pow5_factor(value) >= p;
}

static int multiple_of_pow2(uint64_t value, uint32_t p)
{
    return (value & ((1ull << p) - 1)) == 0;
}

static uint64_t mul_shift(uint64_t m, const uint64_t *mul, int32_t j)
{
    const u128 low = (u128)m * mul[0];
    const u128 high = (u128)m * mul[1];
    return (uint64_t)(((low >> 64) + high) >> (j - 64));
}

/* x's shortest decimal digits and the power of ten after them:
 * digits × 10^exponent. */
static void shortest_digits(uint64_t ieee_mantissa, uint32_t ieee_exponent,
                            uint64_t *digits, int32_t *exponent)
{
    int32_t e2;
    uint64_t m2;
    if (ieee_exponent == 0) { /* 2 more bits for the bounds */
        e2 = 1 - BIAS - MANTISSA_BITS - 2;
        m2 = ieee_mantissa;
    } else {
        e2 = (int32_t)ieee_exponent - BIAS - MANTISSA_BITS - 2;
        m2 = (1ull << MANTISSA_BITS) | ieee_mantissa;
    }
    const int accept_bounds = (m2 & 1) == 0; /* round half to even */
    const uint64_t mv = 4 * m2;
    const uint32_t mm_shift = ieee_mantissa != 0 || ieee_exponent <= 1;

    /* The value and the bounds of its interval, in a power of ten. */
    uint64_t vr, vp, vm;
    int32_t e10;
    int vm_trailing_zeros = 0, vr_trailing_zeros = 0;
    if (e2 >= 0) {
        const uint32_t q = log10_pow2(e2) - (e2 > 3);
        e10 = (int32_t)q;
        const int32_t k = DOUBLE_POW5_INV_BITCOUNT + pow5_bits((int32_t)q) - 1;
        const int32_t i = -e2 + (int32_t)q + k;
        vr = mul_shift(4 * m2, DOUBLE_POW5_INV_SPLIT[q], i);
        vp = mul_shift(4 * m2 + 2, DOUBLE_POW5_INV_SPLIT[q], i);
        vm = mul_shift(4 * m2 - 1 - mm_shift, DOUBLE_POW5_INV_SPLIT[q], i);
        if (q <= 21) {
            /* Only one of mp, mv and mm can be a multiple of 5, if any. */
            if (mv % 5 == 0)
                vr_trailing_zeros = multiple_of_pow5(mv, q);
            else if (accept_bounds)
                vm_trailing_zeros = multiple_of_pow5(mv - 1 - mm_shift, q);
            else
                vp -= (uint64_t)multiple_of_pow5(mv + 2, q);
        }
    } else {
        const uint32_t q = log10_pow5(-e2) - (-e2 > 1);
        e10 = (int32_t)q + e2;
        const int32_t i = -e2 - (int32_t)q;
        const int32_t k = pow5_bits(i) - DOUBLE_POW5_BITCOUNT;
        const int32_t j = (int32_t)q - k;
        vr = mul_shift(4 * m2, DOUBLE_POW5_SPLIT[i], j);
        vp = mul_shift(4 * m2 + 2, DOUBLE_POW5_SPLIT[i], j);
        vm = mul_shift(4 * m2 - 1 - mm_shift, DOUBLE_POW5_SPLIT[i], j);
        if (q <= 1) {
            /* mv = 4 m2 has at least two trailing zero bits. */
            vr_trailing_zeros = 1;
            if (accept_bounds)
                vm_trailing_zeros = mm_shift == 1;
            else
                --vp;
        } else if (q < 63) {
            vr_trailing_zeros = multiple_of_pow2(mv, q);
        }
    }

    /* Drop digits while the interval still holds a shorter number. */
    int32_t removed = 0;
    uint64_t output;
    if (vm_trailing_zeros || vr_trailing_zeros) { /* rare: ~0.7% */
        unsigned last_removed = 0;
        while (vp / 10 > vm / 10) {
            vm_trailing_zeros &= vm % 10 == 0;
            vr_trailing_zeros &= last_removed == 0;
            last_removed = (unsigned)(vr % 10);
            vr /= 10;
            vp /= 10;
            vm /= 10;
            ++removed;
        }
        if (vm_trailing_zeros) {
            while (vm % 10 == 0) {
                vr_trailing_zeros &= last_removed == 0;
                last_removed = (unsigned)(vr % 10);
                vr /= 10;
                vp /= 10;
                vm /= 10;
                ++removed;
            }
        }
        if (vr_trailing_zeros && last_removed == 5 && vr % 2 == 0)
            last_removed = 4; /* exactly .5: round to even */
        output = vr + ((vr == vm && (!accept_bounds || !vm_trailing_zeros)) ||
                       last_removed >= 5);
    } else {
        int round_up = 0;
        if (vp / 100 > vm / 100) { /* two digits at once, most often */
            round_up = vr % 100 >= 50;
            vr /= 100;
            vp /= 100;
            vm /= 100;
            removed += 2;
        }
        while (vp / 10 > vm / 10) {
            round_up = vr % 10 >= 5;
            vr /= 10;
            vp /= 10;
            vm /= 10;
            ++removed;
        }
        output = vr + (vr == vm || round_up);
    }
    *digits = output;
    *exponent = e10 + removed;
}

/* The digits in %g's layout at precision max(their count, 15), as the
 * shortest of %.15g, %.16g and %.17g was written: fixed point when the
 * decimal exponent is from -4 to below that precision, else d.ddde±XX. */
static void write_decimal(char *out, int negative, uint64_t digits,
                          int32_t exponent)
{
    char text[20];
    int count = 0;
    for (uint64_t rest = digits; rest > 0 || count == 0; rest /= 10)
        text[count++] = (char)('0' + rest % 10);
    for (int i = 0; i < count / 2; i++) { /* most significant first */
        const char swap = text[i];
        text[i] = text[count - 1 - i];
        text[count - 1 - i] = swap;
    }
    const int scientific = exponent + count - 1; /* of the first digit */
    const int precision = count > PLAIN_DIGITS ? count : PLAIN_DIGITS;
    char *at = out;
    if (negative) *at++ = '-';
    if (scientific < -4 || scientific >= precision) {
        *at++ = text[0];
        if (count > 1) {
            *at++ = '.';
            memcpy(at, text + 1, (size_t)count - 1);
            at += count - 1;
        }
        const int magnitude = scientific < 0 ? -scientific : scientific;
        *at++ = 'e';
        *at++ = scientific < 0 ? '-' : '+';
        if (magnitude >= 100) *at++ = (char)('0' + magnitude / 100);
        *at++ = (char)('0' + magnitude / 10 % 10);
        *at++ = (char)('0' + magnitude % 10);
    } else if (scientific < 0) { /* 0.000ddd */
        memcpy(at, "0.", 2);
        at += 2;
        for (int i = -1; i > scientific; i--) *at++ = '0';
        memcpy(at, text, (size_t)count);
        at += count;
    } else if (exponent >= 0) { /* ddd000 */
        memcpy(at, text, (size_t)count);
        at += count;
        for (int i = 0; i < exponent; i++) *at++ = '0';
    } else { /* ddd.ddd */
        const int whole = scientific + 1;
        memcpy(at, text, (size_t)whole);
        at += whole;
        *at++ = '.';
        memcpy(at, text + whole, (size_t)(count - whole));
        at += count - whole;
    }
    *at = '\0';
}

void attn__format_shortest(char out[ATTN__NUMBER_CAP], double x)
{
    if (!isfinite(x)) { /* callers write these their own way */
        snprintf(out, ATTN__NUMBER_CAP, "%g", x);
        return;
    }
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    const int negative = (int)(bits >> (MANTISSA_BITS + EXPONENT_BITS));
    const uint64_t mantissa = bits & ((1ull << MANTISSA_BITS) - 1);
    const uint32_t exponent = (uint32_t)((bits >> MANTISSA_BITS) &
                                         ((1u << EXPONENT_BITS) - 1));
    if (mantissa == 0 && exponent == 0) {
        strcpy(out, negative ? "-0" : "0");
        return;
    }
    uint64_t digits;
    int32_t power;
    shortest_digits(mantissa, exponent, &digits, &power);
    write_decimal(out, negative, digits, power);
}

void attn_number_text(double x, char out[ATTN_NUMBER_CAP])
{
    attn__format_shortest(out, x);
}
