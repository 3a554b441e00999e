/*
 * cuda_support.h - the CUDA driver calls the GPU suites need beyond the
 * library's own (cuda_support.c): streams, graph capture and replay, and a
 * kernel that holds a stream busy, so that calls queued on several streams
 * start together. Only suites that run on a device use it; support.h keeps
 * CUDA out of the rest.
 */
#ifndef WG_TEST_CUDA_SUPPORT_H
#define WG_TEST_CUDA_SUPPORT_H

#include "driver.h"
#include "warpgen.h"

typedef struct test_cuda {
  const wg_driver_api *api;
  CUresult (*StreamCreate)(CUstream *stream, unsigned int flags);
  CUresult (*StreamDestroy)(CUstream stream);
  CUresult (*StreamBeginCapture)(CUstream stream, CUstreamCaptureMode mode);
  CUresult (*StreamEndCapture)(CUstream stream, CUgraph *graph);
  CUresult (*GraphInstantiate)(CUgraphExec *exec, CUgraph graph,
                               unsigned long long flags);
  CUresult (*GraphLaunch)(CUgraphExec exec, CUstream stream);
  CUresult (*GraphExecDestroy)(CUgraphExec exec);
  CUresult (*GraphDestroy)(CUgraph graph);
  CUfunction spin; /* spin(long long cycles): one thread, busy that long */
} test_cuda;

/* Fails the test unless a driver call returns CUDA_SUCCESS. */
#define CU(call)                                                            \
  do {                                                                      \
    CUresult r_ = (call);                                                   \
    ck_assert_msg(r_ == CUDA_SUCCESS, "%s: CUDA error %d", #call, (int)r_); \
  } while (0)

/* Sets up ctx's CUDA context, makes it current on this thread (so that the
 * streams made here belong to it), finds the calls above in libcuda and
 * compiles and loads the spin kernel. Fails the test on any error. */
void test_cuda_open(wg_context *ctx, test_cuda *cu);

/* Holds `stream` for about `ms` milliseconds (at up to 2 GHz). */
void test_cuda_hold_stream(test_cuda *cu, CUstream stream, double ms);

/* Queues job k (0 <= k < count) of a test on `stream`, failing the test on
 * any error; arg is the test's. */
typedef void (*test_cuda_job)(void *arg, int k, CUstream stream);

/* The two ways a streams test runs its `count` jobs, and then waits for
 * the whole context: graph 0, eagerly, job k on streams[k % nstreams],
 * each stream held busy for 5 ms first so that the jobs start together;
 * graph 1, the first half captured on streams[0] into a graph that is
 * replayed twice, each replay beside the second half queued eagerly on
 * streams[1] (nstreams >= 2). */
void test_cuda_run_jobs(test_cuda *cu, CUstream *streams, int nstreams, int count,
                        bool graph, test_cuda_job job, void *arg);

#endif /* WG_TEST_CUDA_SUPPORT_H */
