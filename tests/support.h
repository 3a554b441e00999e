/*
 * support.h - helpers the Check suites share (support.c): fresh random
 * seeds that failures print, temporary folders, a GPU probe that keeps CUDA
 * out of the process Check forks from, and multi-threaded filling and
 * checking for inputs of billions of elements.
 */
#ifndef WG_TEST_SUPPORT_H
#define WG_TEST_SUPPORT_H

#include "oracle.h"
#include "warpgen.h"

#include <check.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Runs fn(arg, w, n) for w = 0..n-1 on n threads, n = the cores online
 * (at most `most` and 32); worker 0 on the calling thread, and any whose
 * thread cannot start there too, after it. Returns n when all are done. fn
 * must not call ck_assert (Check reports from the thread it forked). */
int wg_test_on_cores(int most, void (*fn)(void *arg, int worker, int workers), void *arg);
/* Worker w of n's share of [0, total): [*begin, *end), contiguous, the
 * shares in order and of equal size but the last. */
void wg_test_share(uint64_t total, int worker, int workers, uint64_t *begin, uint64_t *end);

/* A context with default options; fails the test if none can be made. */
wg_context *wg_test_context(void);

/* Fails the test unless `call` returns WG_OK, quoting the call, the status
 * and the context's message. */
#define WG_TEST_OK(ctx, call)                                               \
  do {                                                                      \
    int wg_test_rc_ = (call);                                               \
    ck_assert_msg(wg_test_rc_ == WG_OK, "%s: %s: %s", #call,                \
                  wg_strerror(wg_test_rc_), wg_errmsg(ctx));                \
  } while (0)

/* This process's base seed: WARPGEN_TEST_SEED when set (to replay a
 * failure), else fresh. The same value on every call. */
uint64_t wg_test_seed(void);

/* Whether a CUDA driver and a device are present. The probe runs in a child
 * process, so the caller never initialises CUDA (Check forks after this,
 * and a forked child cannot use a parent's CUDA state). On false, why holds
 * the reason. *arch (may be NULL) gets the device's architecture. */
bool wg_test_has_gpu(char *why, size_t why_size, int *arch);

/* The start of a GPU suite's main. With a GPU (wg_test_has_gpu), prints
 * "NAME: device sm_ARCH, base seed S (WARPGEN_TEST_SEED=S replays this
 * run)" and returns true, *arch (may be NULL) set; without, prints "NAME:
 * skipped: why" and returns false, and main returns 77, meson's skip. */
bool wg_test_gpu_begin(const char *name, int *arch);

/* Runs suite s (Check's CK_ENV: CK_VERBOSITY=verbose prints a line a
 * test) and frees it; main's status: 0 when every test passed, else 1. */
int wg_test_run_suite(Suite *s);

/* A new empty folder under $TMPDIR (else /tmp), malloc'd path; removes it
 * and everything in it. */
char *wg_test_tmpdir(void);
void wg_test_rmtree(const char *path);

/* Seconds on a monotonic clock. */
double wg_test_now(void);

/* The part of a spec list an nvrtc suite compiles: the items i with
 * i % every == offset. every is WARPGEN_NVRTC_EVERY (default 1: all);
 * offset is WARPGEN_NVRTC_OFFSET, else the day number, so that daily runs
 * cover the whole list; both reduced so that offset < every. */
void wg_test_nvrtc_sample(unsigned *every, unsigned *offset);

/* wg_oracle_warp_fill and wg_oracle_warp_check over the whole array, on every core when the
 * array is large. */
void wg_test_fill(const wg_spec *spec, void *in, uint64_t n, uint64_t seed);
void wg_test_check(wg_oracle_report *report, const wg_spec *spec, const void *in,
                   uint64_t n, const void *out);

/* Whether the cases past 2^31 elements run: not with WARPGEN_GPU_LARGE=0. */
bool wg_test_large_enabled(void);

/* Whether ctx's device has `bytes` of memory and 2 GiB to spare; when not,
 * prints that `what` is skipped and why. */
bool wg_test_device_holds(wg_context *ctx, uint64_t bytes, const char *what);

/* The f16 bits of -1, 0 or 1 for element i, drawn from a hash of i and
 * seed (no period a 32-bit offset could land back on), and the value of
 * such bits: for the cases past 2^31 elements, whose sums and prefixes
 * stay small integers, exact in f16, so the check is a plain loop. */
uint16_t wg_test_f16_sign(uint64_t i, uint64_t seed);
static inline int wg_test_f16_sign_value(uint16_t bits) {
  return (bits == 0x3c00) - (bits == 0xbc00);
}

/* Compiles every spec (or finds it in the disk cache) on every core, one
 * context a thread, so that a later wg_kernel_get of each only loads it.
 * It compiles in a child process, so it may be called before Check forks:
 * nothing it touches (the driver included) starts in the caller. */
void wg_test_precompile(const wg_spec *specs, size_t count);

#endif /* WG_TEST_SUPPORT_H */
