/*
 * reference.h - the CPU reference of every warp primitive (reference.c),
 * with the random inputs and the output checks that the command line
 * (`warpgen run`) and the GPU test suite share.
 *
 * Integers are computed exactly, wrapping modulo 2^bits as the kernels do.
 * Floats are computed in double and compared with a bound that follows from
 * the type and the group size; min, max, broadcast and the votes are exact.
 */
#ifndef WG_REFERENCE_H
#define WG_REFERENCE_H

#include "warpgen.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Fills elements [begin, end) of `in` (an array of spec->type) with random
 * values suited to the spec: zeros mixed in for the votes, repeated values
 * for match, values near 1 for float products, mostly-set bits for `and`.
 * Element i depends only on (seed, i), so ranges may be filled in parallel
 * and give the same array. */
void wg_ref_fill(const wg_spec *spec, void *in, uint64_t begin, uint64_t end,
                 uint64_t seed);

/* A seed that differs from run to run (time, process id, a counter). */
uint64_t wg_ref_fresh_seed(void);

/* The byte to fill an output buffer with before a launch: a NaN for float
 * outputs (never within any bound), an unlikely pattern for the others. */
unsigned char wg_ref_poison_byte(const wg_spec *spec);

/* The groups of `width` elements that n elements form (the last partial). */
uint64_t wg_ref_group_count(const wg_spec *spec, uint64_t n);

/* The outcome of comparing GPU outputs with the reference. */
typedef struct wg_ref_report {
  uint64_t checked;     /* outputs compared */
  uint64_t mismatches;  /* outputs outside their bound */
  uint64_t first_index; /* the lowest mismatching output */
  char first[320];      /* what was wrong with it */
  double worst_ratio;   /* largest |got - want| / bound over float outputs */
} wg_ref_report;

void wg_ref_report_init(wg_ref_report *report);
/* Adds `part` (e.g. from another thread's range) into `into`. */
void wg_ref_report_merge(wg_ref_report *into, const wg_ref_report *part);

/* Compares every output that groups [group_begin, group_end) produce for
 * the n inputs `in` with the reference and adds the result to *report.
 * `out` is the whole output array (wg_output_shape gives its length). */
void wg_ref_check(wg_ref_report *report, const wg_spec *spec, const void *in,
                  uint64_t n, const void *out, uint64_t group_begin,
                  uint64_t group_end);

/* Host-side conversions of the half types, rounding to nearest even. */
uint16_t wg_ref_f16_from_double(double x);
double wg_ref_f16_to_double(uint16_t bits);
uint16_t wg_ref_bf16_from_double(double x);
double wg_ref_bf16_to_double(uint16_t bits);

#endif /* WG_REFERENCE_H */
