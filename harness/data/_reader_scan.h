/* The tokeniser of harness's compiled TREC reader (_reader_kernels.pyx): whole lines of a plain file, split on spaces
 * and tabs, two id fields copied into Arrow's string layout and one number field parsed. The first id field may be
 * kept as blocks instead (a run's query ids: one id and one start row per run of equal ids).
 *
 * Each 64 bytes of input become a bit mask of the bytes that are not part of a field (anything outside printable
 * ASCII: separators, line breaks and the bytes that make a file not plain), 16 bytes at a time where SSE2 or NEON is
 * there; the fields are then the runs between consecutive set bits, visited with count-trailing-zeros. A line costs
 * a few steps per field instead of a test and a branch per byte.
 */
#ifndef HARNESS_READER_SCAN_H
#define HARNESS_READER_SCAN_H

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SSE2__) || defined(_M_X64) || (defined(_M_IX86_FP) && _M_IX86_FP >= 2)
#include <emmintrin.h>
#define HARNESS_SSE2 1
#elif defined(__aarch64__) || defined(_M_ARM64)
#include <arm_neon.h>
#define HARNESS_NEON 1
#endif
#if defined(_MSC_VER) && !defined(__clang__)
#include <intrin.h>
#endif

enum {
    SCAN_OK = 0,
    SCAN_NOT_OPENED = 1,
    SCAN_NOT_PLAIN = 2,
    SCAN_FIELD_COUNT = 3,
    SCAN_NOT_A_NUMBER = 4,
    SCAN_TOO_LONG = 5,
    SCAN_FULL = 6,
};

#define SCAN_PADDING 64 /* bytes past the lines that must be readable (their values do not matter) */
#define SCAN_LAST_MAX 1024 /* a longer id starts a block of its own on every line (still correct, only longer) */

typedef struct {
    int n_fields, field_a, field_b, field_number;
    int fill;  /* 0: only count rows and the id fields' bytes */
    int wide;  /* int64 offsets, else int32 */
    /* field a as blocks: one id and one start row per run of lines with equal ids (a run file's query column),
     * instead of one id per line */
    int blocks;
    void *a_offsets, *b_offsets;
    uint8_t *a_data, *b_data;
    double *numbers;
    int64_t *starts; /* blocks: the row each starts at */
    int64_t row, row_limit, a_at, a_limit, b_at, b_limit, block, block_limit;
    int64_t lines;
    int status;
    int last_length; /* blocks: the previous line's id (its length; -1 for none) */
    uint8_t last[SCAN_LAST_MAX];
} harness_scan;

static inline int harness_ctz64(uint64_t x) {
#if defined(_MSC_VER) && !defined(__clang__)
    unsigned long at;
    _BitScanForward64(&at, x);
    return (int)at;
#else
    return __builtin_ctzll(x);
#endif
}

/* Bit k set when p[k] is not printable ASCII (0x21-0x7E). */
static inline uint64_t harness_stop_mask(const uint8_t *p) {
    uint64_t mask = 0;
    int k;
#if defined(HARNESS_SSE2)
    const __m128i limit = _mm_set1_epi8(0x21), del = _mm_set1_epi8(0x7F);
    for (k = 0; k < 4; k++) {
        __m128i x = _mm_loadu_si128((const __m128i *)(p + 16 * k));
        /* signed: bytes 0x80-0xFF are negative, so below 0x21 too */
        __m128i stop = _mm_or_si128(_mm_cmplt_epi8(x, limit), _mm_cmpeq_epi8(x, del));
        mask |= (uint64_t)(uint16_t)_mm_movemask_epi8(stop) << (16 * k);
    }
#elif defined(HARNESS_NEON)
    static const uint8_t weights[16] = {1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128};
    const uint8x16_t bits = vld1q_u8(weights);
    for (k = 0; k < 4; k++) {
        uint8x16_t x = vld1q_u8(p + 16 * k);
        uint8x16_t stop = vorrq_u8(vcltq_u8(x, vdupq_n_u8(0x21)), vcgeq_u8(x, vdupq_n_u8(0x7F)));
        uint8x16_t picked = vandq_u8(stop, bits);
        uint64_t low = vaddv_u8(vget_low_u8(picked)), high = vaddv_u8(vget_high_u8(picked));
        mask |= (low | (high << 8)) << (16 * k);
    }
#else
    for (k = 0; k < 64; k++) mask |= (uint64_t)(p[k] < 0x21 || p[k] >= 0x7F) << k;
#endif
    return mask;
}

static const double harness_powers[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                          1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* The decimal p[0:n] ([+-]digits[.digits][(e|E)[+-]digits], at least one digit before the exponent), correctly
 * rounded, into *out; SCAN_NOT_A_NUMBER for anything else, an overflow or an underflow. Up to 19 digits and a power
 * of ten within 10^22 of them: one exact integer times or over one exact power (Clinger's fast path, one correctly
 * rounded operation); otherwise the C library's strtod on the field alone. One comparison a digit. */
static inline int harness_parse_number(const uint8_t *p, int64_t n, double *out) {
    const uint8_t *q = p, *end = p + n, *first;
    int64_t digits, fraction = 0, exponent = 0, scale;
    uint64_t mantissa = 0;
    unsigned d;
    int negative = 0, exponent_negative = 0, written = 0;
    double value;
    if (n > 64) return SCAN_NOT_A_NUMBER;
    if (*q == '+' || *q == '-') {
        negative = *q == '-';
        q++;
    }
    first = q;
    while (q < end && (d = (unsigned)(*q - '0')) < 10) {
        mantissa = mantissa * 10 + d; /* wraps past 19 digits: strtod reads those below */
        q++;
    }
    digits = q - first;
    if (q < end && *q == '.') {
        first = ++q;
        while (q < end && (d = (unsigned)(*q - '0')) < 10) {
            mantissa = mantissa * 10 + d;
            q++;
        }
        fraction = q - first;
        digits += fraction;
    }
    if (digits == 0) return SCAN_NOT_A_NUMBER;
    if (q < end && (*q == 'e' || *q == 'E')) {
        q++;
        if (q < end && (*q == '+' || *q == '-')) {
            exponent_negative = *q == '-';
            q++;
        }
        if (q == end) return SCAN_NOT_A_NUMBER;
        for (; q < end && (d = (unsigned)(*q - '0')) < 10; q++) {
            if (written < 8) {
                exponent = exponent * 10 + d;
                written += exponent != 0;
            }
        }
        if (written >= 8) return SCAN_NOT_A_NUMBER;
    }
    if (q != end) return SCAN_NOT_A_NUMBER;
    scale = (exponent_negative ? -exponent : exponent) - fraction;
    if (digits <= 19 && mantissa <= ((uint64_t)1 << 53) && scale >= -22 && scale <= 22) {
        value = (double)mantissa;
        if (mantissa == 0)
            value = 0.0;
        else if (scale >= 0)
            value = value * harness_powers[scale];
        else
            value = value / harness_powers[-scale];
        *out = negative ? -value : value;
        return SCAN_OK;
    } else {
        char text[72], *stop;
        memcpy(text, p, (size_t)n);
        text[n] = 0;
        errno = 0;
        value = strtod(text, &stop);
        /* the whole field read and in range (an underflow is left to the careful reader too) */
        if (stop != text + n || errno == ERANGE || !isfinite(value)) return SCAN_NOT_A_NUMBER;
        *out = value;
        return SCAN_OK;
    }
}

/* A short field copied 16 bytes at once when the column has 16 bytes of room left, else exactly. */
static inline void harness_copy(uint8_t *to, const uint8_t *from, int64_t n, int room) {
    if (room && n <= 16)
        memcpy(to, from, 16);
    else
        memcpy(to, from, (size_t)n);
}

/* An id field appended to its column (bytes at *at, room to limit) when filling, else only counted: 0 when full. */
static inline int harness_put(harness_scan *s, uint8_t *data, int64_t *at, int64_t limit, const uint8_t *p, int64_t n) {
    if (s->fill) {
        if (*at + n > limit) {
            s->status = SCAN_FULL;
            return 0;
        }
        harness_copy(data + *at, p, n, *at + 16 <= limit);
    }
    *at += n;
    return 1;
}

/* Field `index` of the current line, p[0:n] (n > 0): 0 when the scan stops (s->status says why). */
static inline int harness_field(harness_scan *s, const uint8_t *p, int64_t n, int index) {
    if (index >= s->n_fields) {
        s->status = SCAN_FIELD_COUNT;
        return 0;
    }
    if (index == 0 && p[0] == '#') { /* a comment: the careful reader skips it */
        s->status = SCAN_NOT_PLAIN;
        return 0;
    }
    if (index == s->field_a && s->blocks) {
        if (n == s->last_length && memcmp(p, s->last, (size_t)n) == 0) return 1; /* the same id: the same block */
        if (s->fill) {
            if (s->block >= s->block_limit) {
                s->status = SCAN_FULL;
                return 0;
            }
            s->starts[s->block] = s->row;
        }
        if (!harness_put(s, s->a_data, &s->a_at, s->a_limit, p, n)) return 0;
        s->block++;
        if (s->fill) {
            if (s->wide)
                ((int64_t *)s->a_offsets)[s->block] = s->a_at;
            else
                ((int32_t *)s->a_offsets)[s->block] = (int32_t)s->a_at;
        }
        s->last_length = n <= SCAN_LAST_MAX ? (int)n : -1;
        if (n <= SCAN_LAST_MAX) memcpy(s->last, p, (size_t)n);
    } else if (index == s->field_a || index == s->field_b) {
        if (!harness_put(s, index == s->field_a ? s->a_data : s->b_data, index == s->field_a ? &s->a_at : &s->b_at,
                         index == s->field_a ? s->a_limit : s->b_limit, p, n))
            return 0;
    } else if (index == s->field_number && s->fill) {
        if (s->row >= s->row_limit) {
            s->status = SCAN_FULL;
            return 0;
        }
        if (harness_parse_number(p, n, s->numbers + s->row) != SCAN_OK) {
            s->status = SCAN_NOT_A_NUMBER;
            return 0;
        }
    }
    return 1;
}

/* The end of a line of `fields` fields (> 0): 0 when the scan stops. */
static inline int harness_row(harness_scan *s, int fields) {
    if (fields != s->n_fields) {
        s->status = SCAN_FIELD_COUNT;
        return 0;
    }
    s->row++;
    if (s->fill) {
        if (s->wide) {
            if (!s->blocks) ((int64_t *)s->a_offsets)[s->row] = s->a_at;
            ((int64_t *)s->b_offsets)[s->row] = s->b_at;
        } else {
            if (!s->blocks) ((int32_t *)s->a_offsets)[s->row] = (int32_t)s->a_at;
            ((int32_t *)s->b_offsets)[s->row] = (int32_t)s->b_at;
        }
    }
    return 1;
}

/* The whole lines buf[0:n] (buf[n - 1] is a line break; SCAN_PADDING bytes past n readable) into s. */
static void harness_scan_lines(harness_scan *s, const uint8_t *buf, int64_t n) {
    int64_t base, at, field_start = 0;
    int fields = 0;
    uint8_t c;
    for (base = 0; base < n; base += 64) {
        uint64_t mask = harness_stop_mask(buf + base);
        if (n - base < 64) mask &= ((uint64_t)1 << (n - base)) - 1;
        while (mask) {
            at = base + harness_ctz64(mask);
            mask &= mask - 1;
            if (at > field_start) {
                if (!harness_field(s, buf + field_start, at - field_start, fields)) return;
                fields++;
            }
            field_start = at + 1;
            c = buf[at];
            if (c == ' ' || c == '\t' || (c == '\r' && buf[at + 1] == '\n')) continue;
            if (c != '\n') { /* a control character, DEL or a byte past ASCII */
                s->status = SCAN_NOT_PLAIN;
                return;
            }
            s->lines++;
            if (fields && !harness_row(s, fields)) return;
            fields = 0;
        }
    }
}

#endif
