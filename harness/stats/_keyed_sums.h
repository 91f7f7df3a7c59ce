/* The inner loops of harness's keyed resampling sums (_keyed_compiled.pyx): rows added up, replicate by replicate.
 *
 * The sign-flip test's: a table holds the sums of 8 queries' values over each of their 256 subsets (8 columns a row); a replicate's draws
 * name one row of each table, and its sums are those rows added together. Every value is an integer below 2^53 and
 * so is every partial sum (the caller's limbs see to it), so the additions are exact and their order changes nothing:
 * two running sums side by side let one addition start before the previous one ends.
 */
#ifndef HARNESS_KEYED_SUMS_H
#define HARNESS_KEYED_SUMS_H

#include <stddef.h>
#include <stdint.h>

#define HARNESS_WIDTH 8 /* columns a table row holds */
#define HARNESS_ROWS 256 /* rows of a table: the subsets of 8 queries */

/* out[r * stride + c] += sum over g < groups of tables[g][subsets[r * groups + g]][c], for r < count, c < 8 */
static void harness_add_rows(const double *tables, const uint8_t *subsets, ptrdiff_t groups, ptrdiff_t count,
                             double *out, ptrdiff_t stride) {
    for (ptrdiff_t r = 0; r < count; r++) {
        const uint8_t *named = subsets + groups * r;
        double a0[HARNESS_WIDTH] = {0}, a1[HARNESS_WIDTH] = {0};
        ptrdiff_t g = 0;
        for (; g + 2 <= groups; g += 2) {
            const double *r0 = tables + (g * HARNESS_ROWS + named[g]) * HARNESS_WIDTH;
            const double *r1 = tables + ((g + 1) * HARNESS_ROWS + named[g + 1]) * HARNESS_WIDTH;
            for (int c = 0; c < HARNESS_WIDTH; c++) {
                a0[c] += r0[c];
                a1[c] += r1[c];
            }
        }
        if (g < groups) {
            const double *r0 = tables + (g * HARNESS_ROWS + named[g]) * HARNESS_WIDTH;
            for (int c = 0; c < HARNESS_WIDTH; c++) a0[c] += r0[c];
        }
        for (int c = 0; c < HARNESS_WIDTH; c++) out[r * stride + c] += a0[c] + a1[c];
    }
}

/* The randomised Tukey HSD's: in a trial, each query's drawn permutation sends system perm[i] to slot i. */

#define HARNESS_MOST_SLOTS 5 /* slots summed here: the first m - 1 of m <= 6 systems */

/* acc[i * 8 + c] += sum over q < count of x[table[choice[q] * SLOTS + i]][q * stride[j] + c], for i < SLOTS, c < 8: x[j]
 * points at the tile's first query of system j (a stride of 0 for a system that adds zeros). SLOTS is a constant
 * where it is called, so the sums stay in registers; with PAIRS, two of them a slot (even and odd queries'), so that
 * one query's additions need not wait for the last one's, where the registers hold them (one or two slots). */
static inline __attribute__((always_inline)) void harness_slot_rows_n(const uint16_t *choice, ptrdiff_t count,
                                                                      const int8_t *table, const int slots,
                                                                      const int pairs, const double *const *x,
                                                                      const ptrdiff_t *stride, double *acc) {
    double a[HARNESS_MOST_SLOTS][HARNESS_WIDTH] = {{0}}, b[HARNESS_MOST_SLOTS][HARNESS_WIDTH] = {{0}};
    ptrdiff_t q = 0;
    if (pairs) {
        for (; q + 2 <= count; q += 2) {
            const int8_t *even = table + (ptrdiff_t)choice[q] * slots, *odd = table + (ptrdiff_t)choice[q + 1] * slots;
            for (int i = 0; i < slots; i++) {
                const double *r0 = x[even[i]] + q * stride[even[i]], *r1 = x[odd[i]] + (q + 1) * stride[odd[i]];
                for (int c = 0; c < HARNESS_WIDTH; c++) {
                    a[i][c] += r0[c];
                    b[i][c] += r1[c];
                }
            }
        }
    }
    for (; q < count; q++) {
        const int8_t *perm = table + (ptrdiff_t)choice[q] * slots;
        for (int i = 0; i < slots; i++) {
            const double *row = x[perm[i]] + q * stride[perm[i]];
            for (int c = 0; c < HARNESS_WIDTH; c++) a[i][c] += row[c];
        }
    }
    for (int i = 0; i < slots; i++)
        for (int c = 0; c < HARNESS_WIDTH; c++) acc[i * HARNESS_WIDTH + c] += a[i][c] + b[i][c];
}

static void harness_slot_rows(const uint16_t *choice, ptrdiff_t count, const int8_t *table, int slots,
                              const double *const *x, const ptrdiff_t *stride, double *acc) {
    switch (slots) {
    case 1: harness_slot_rows_n(choice, count, table, 1, 1, x, stride, acc); break;
    case 2: harness_slot_rows_n(choice, count, table, 2, 1, x, stride, acc); break;
    case 3: harness_slot_rows_n(choice, count, table, 3, 0, x, stride, acc); break;
    case 4: harness_slot_rows_n(choice, count, table, 4, 0, x, stride, acc); break;
    default: harness_slot_rows_n(choice, count, table, 5, 0, x, stride, acc); break;
    }
}

#endif
