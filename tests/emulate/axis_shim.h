/*
 * axis_shim.h - shim.h plus what a block-wide kernel (templates/
 * axis_reduce.cu) needs on the host: WG_BLOCK threads meeting at
 * __syncthreads, __shared__ variables shared by them (static storage: one
 * block runs at a time), atomics and fences. Blocks run one after another,
 * which the kernel must allow (no block waits for another).
 */
#ifndef WG_EMULATE_AXIS_SHIM_H
#define WG_EMULATE_AXIS_SHIM_H
#include "shim.h"
#include <atomic>
#undef __shared__
#define __shared__ static
#define __launch_bounds__(...)
static std::barrier<> *emu_block_bar;
static inline void __syncthreads() { emu_block_bar->arrive_and_wait(); }
static inline void __threadfence() { std::atomic_thread_fence(std::memory_order_seq_cst); }
static inline unsigned atomicAdd(unsigned *p, unsigned v) {
  return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST);
}
using std::sqrt; using std::exp; using std::log; using std::fabs;
#endif
