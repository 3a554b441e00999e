/*
 * compact.h - what stream compaction (fam_compact.c) offers the command
 * line and the tests beyond the public wg_compact: which elements a
 * compact spec keeps, decided on the host by the expression evaluator
 * (expr_eval.c), never by the generated source, so that the device can be
 * checked against it.
 */
#ifndef WG_COMPACT_H
#define WG_COMPACT_H

#include "internal.h"

/* keep[i] = 1 when a compact spec keeps element i of the n elements of
 * the host arrays inputs[0..spec->ninputs) (of their spec types), given
 * the spec's parameter values; else 0. Without a predicate: the non-zero
 * elements (on the bits: -0.0 is zero, NaN is not). WG_OK, or the error
 * of a spec that is not a valid compact spec. */
int wg_compact_keep_host(wg_context *ctx, const wg_spec *spec, const void *const *inputs,
                         uint64_t n, const wg_scalar *params, unsigned char *keep);

#endif /* WG_COMPACT_H */
