/*
 * cuda_support.c - streams, graphs and a stream-holding kernel for the GPU
 * suites (cuda_support.h says what each call does).
 */
#include "cuda_support.h"

#include "internal.h"
#include "support.h"

#include <check.h>
#include <dlfcn.h>
#include <string.h>

void test_cuda_open(wg_context *ctx, test_cuda *cu) {
  memset(cu, 0, sizeof *cu);
  wg_device_info info;
  WG_TEST_OK(ctx, wg_device_get_info(ctx, &info));
  WG_TEST_OK(ctx, wg_driver_load(ctx, &cu->api));
  CU(cu->api->CtxPushCurrent(ctx->device->cu_context));
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  ck_assert(lib);
  const struct {
    void *fn;
    const char *symbol;
  } syms[] = {
      {&cu->StreamCreate, "cuStreamCreate"},
      {&cu->StreamDestroy, "cuStreamDestroy_v2"},
      {&cu->StreamBeginCapture, "cuStreamBeginCapture_v2"},
      {&cu->StreamEndCapture, "cuStreamEndCapture"},
      {&cu->GraphInstantiate, "cuGraphInstantiateWithFlags"},
      {&cu->GraphLaunch, "cuGraphLaunch"},
      {&cu->GraphExecDestroy, "cuGraphExecDestroy"},
      {&cu->GraphDestroy, "cuGraphDestroy"},
  };
  for (size_t i = 0; i < WG_COUNT_OF(syms); i++) {
    *(void **)syms[i].fn = dlsym(lib, syms[i].symbol);
    ck_assert_msg(*(void **)syms[i].fn, "libcuda.so.1 lacks %s", syms[i].symbol);
  }
  static const char spin_source[] =
      "extern \"C\" __global__ void spin(long long cycles) {\n"
      "  const long long start = clock64();\n"
      "  while (clock64() - start < cycles) {}\n"
      "}\n";
  wg_binary bin;
  WG_TEST_OK(ctx, wg_compile(ctx, &bin, spin_source, "spin", info.arch));
  CUmodule module;
  CU(cu->api->ModuleLoadData(&module, bin.cubin));
  wg_binary_free(&bin);
  CU(cu->api->ModuleGetFunction(&cu->spin, module, "spin"));
}

void test_cuda_hold_stream(test_cuda *cu, CUstream stream, double ms) {
  long long cycles = (long long)(ms * 2e6);
  void *params[] = {&cycles};
  CU(cu->api->LaunchKernel(cu->spin, 1, 1, 1, 1, 1, 1, 0, stream, params, NULL));
}

void test_cuda_run_jobs(test_cuda *cu, CUstream *streams, int nstreams, int count,
                        bool graph, test_cuda_job job, void *arg) {
  if (!graph) {
    for (int k = 0; k < nstreams; k++) test_cuda_hold_stream(cu, streams[k], 5);
    for (int k = 0; k < count; k++) job(arg, k, streams[k % nstreams]);
  } else {
    ck_assert(nstreams >= 2);
    CUgraph g;
    CUgraphExec exec;
    CU(cu->StreamBeginCapture(streams[0], CU_STREAM_CAPTURE_MODE_GLOBAL));
    for (int k = 0; k < count / 2; k++) job(arg, k, streams[0]);
    CU(cu->StreamEndCapture(streams[0], &g));
    CU(cu->GraphInstantiate(&exec, g, 0));
    for (int replay = 0; replay < 2; replay++) {
      CU(cu->GraphLaunch(exec, streams[0]));
      for (int k = count / 2; k < count; k++) job(arg, k, streams[1]);
    }
    CU(cu->api->CtxSynchronize());
    CU(cu->GraphExecDestroy(exec));
    CU(cu->GraphDestroy(g));
  }
  CU(cu->api->CtxSynchronize());
}
