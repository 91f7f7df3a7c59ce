/* The inner loop of harness's keyed resampling sums (_keyed_compiled.pyx): table rows added up, replicate by replicate.
 *
 * A table holds the sums of 8 queries' values over each of their 256 subsets (8 columns a row); a replicate's draws
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

#endif
