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
#include <string.h>

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
 * where it is called, so the sums stay in registers. */
static inline __attribute__((always_inline)) void harness_slot_rows_n(const uint16_t *choice, ptrdiff_t count,
                                                                      const int8_t *table, const int slots,
                                                                      const double *const *x, const ptrdiff_t *stride,
                                                                      double *acc) {
    double a[HARNESS_MOST_SLOTS][HARNESS_WIDTH] = {{0}};
    for (ptrdiff_t q = 0; q < count; q++) {
        const int8_t *perm = table + (ptrdiff_t)choice[q] * slots;
        for (int i = 0; i < slots; i++) {
            const double *row = x[perm[i]] + q * stride[perm[i]];
            for (int c = 0; c < HARNESS_WIDTH; c++) a[i][c] += row[c];
        }
    }
    for (int i = 0; i < slots; i++)
        for (int c = 0; c < HARNESS_WIDTH; c++) acc[i * HARNESS_WIDTH + c] += a[i][c];
}

static void harness_slot_rows(const uint16_t *choice, ptrdiff_t count, const int8_t *table, int slots,
                              const double *const *x, const ptrdiff_t *stride, double *acc) {
    switch (slots) {
    case 1: harness_slot_rows_n(choice, count, table, 1, x, stride, acc); break;
    case 2: harness_slot_rows_n(choice, count, table, 2, x, stride, acc); break;
    case 3: harness_slot_rows_n(choice, count, table, 3, x, stride, acc); break;
    case 4: harness_slot_rows_n(choice, count, table, 4, x, stride, acc); break;
    default: harness_slot_rows_n(choice, count, table, 5, x, stride, acc); break;
    }
}

/* Three systems (6 permutations, 2 slots): two queries' draws name one of 36 rows of a table built for the pair,
 * each row both queries' values in both slots (16 columns), so a trial adds one row a pair where it added four. */

#define HARNESS_PAIR_ROWS 36

/* pairs[(p * 36 + a * 6 + b) * 16 + i * 8 + c] = x[table[a * 2 + i]][2p] + x[table[b * 2 + i]][2p + 1], column c,
 * for the count / 2 pairs of queries (x[j] + q * stride[j] as in harness_slot_rows_n). */
static void harness_pair_table(const int8_t *table, const double *const *x, const ptrdiff_t *stride, ptrdiff_t count,
                               double *pairs) {
    for (ptrdiff_t p = 0; p < count / 2; p++) {
        for (int a = 0; a < 6; a++) {
            for (int b = 0; b < 6; b++) {
                double *row = pairs + (p * HARNESS_PAIR_ROWS + a * 6 + b) * 2 * HARNESS_WIDTH;
                for (int i = 0; i < 2; i++) {
                    const int8_t ja = table[a * 2 + i], jb = table[b * 2 + i];
                    const double *first = x[ja] + 2 * p * stride[ja], *second = x[jb] + (2 * p + 1) * stride[jb];
                    for (int c = 0; c < HARNESS_WIDTH; c++) row[i * HARNESS_WIDTH + c] = first[c] + second[c];
                }
            }
        }
    }
}

/* acc[c] += the sum over the count / 2 pairs of their row named by the pair's draws (choice[2p] * 6 + choice[2p + 1]),
 * for c < 16: both slots' sums in registers, two columns to an addition where the compiler has vectors (the same
 * additions, column by column, as one at a time). */
#if defined(__GNUC__)
typedef double harness_pair_v2 __attribute__((vector_size(16)));

static void harness_add_pairs(const uint16_t *choice, ptrdiff_t count, const double *pairs, double *acc) {
    harness_pair_v2 a[HARNESS_WIDTH];
    for (int c = 0; c < HARNESS_WIDTH; c++) a[c] = (harness_pair_v2){0.0, 0.0};
    for (ptrdiff_t p = 0; p < count / 2; p++) {
        const double *row = pairs + (p * HARNESS_PAIR_ROWS + choice[2 * p] * 6 + choice[2 * p + 1]) * 2 * HARNESS_WIDTH;
        for (int c = 0; c < HARNESS_WIDTH; c++) {
            harness_pair_v2 v;
            memcpy(&v, row + 2 * c, sizeof v);
            a[c] += v;
        }
    }
    for (int c = 0; c < HARNESS_WIDTH; c++) {
        acc[2 * c] += a[c][0];
        acc[2 * c + 1] += a[c][1];
    }
}
#else
static void harness_add_pairs(const uint16_t *choice, ptrdiff_t count, const double *pairs, double *acc) {
    double a[2 * HARNESS_WIDTH] = {0};
    for (ptrdiff_t p = 0; p < count / 2; p++) {
        const double *row = pairs + (p * HARNESS_PAIR_ROWS + choice[2 * p] * 6 + choice[2 * p + 1]) * 2 * HARNESS_WIDTH;
        for (int c = 0; c < 2 * HARNESS_WIDTH; c++) a[c] += row[c];
    }
    for (int c = 0; c < 2 * HARNESS_WIDTH; c++) acc[c] += a[c];
}
#endif

#endif
