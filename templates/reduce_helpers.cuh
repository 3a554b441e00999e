/* ---- helpers shared by the whole-array and row reductions ---- */
#define WG_VEC ((int)(16 / sizeof(wg_elem))) /* elements a 16-byte vector */

/* A 16-byte vector seen as its elements. */
union wg_vec16 {
  uint4 raw;
  wg_elem e[WG_VEC];
};

/* The elements of one vector, the first of which has index `first`, mapped
 * and folded as a pairwise tree: short dependency chains, and a fixed
 * order. */
#ifndef WG_ELEMENTWISE /* the element kernels' wg_map takes more */
static __device__ __forceinline__ wg_acc wg_fold16(uint4 raw, long long first) {
  wg_vec16 v;
  v.raw = raw;
  wg_acc t[WG_VEC];
#pragma unroll
  for (int j = 0; j < WG_VEC; j++) t[j] = wg_map(v.e[j], first + j);
#pragma unroll
  for (int w = 1; w < WG_VEC; w *= 2)
#pragma unroll
    for (int j = 0; j + w < WG_VEC; j += 2 * w) t[j] = wg_combine(t[j], t[j + w]);
  return t[0];
}
#endif

/* Folds over logical warps of `width` lanes; lane 0 of each gets the value.
 * Every lane of the hardware warp takes part. */
template <int width>
static __device__ __forceinline__ wg_acc wg_group_fold(wg_acc v) {
#pragma unroll
  for (int offset = width / 2; offset > 0; offset /= 2)
    v = wg_combine(v, wg_shfl_down(v, offset, width));
  return v;
}

/* The block's values folded into thread 0's: warps, shared memory, one
 * warp. Ends with a barrier, so the shared array may be used again. */
static __device__ __forceinline__ wg_acc wg_block_fold(wg_acc v) {
  __shared__ wg_acc warp_values[WG_BLOCK / 32];
  const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
  v = wg_group_fold<32>(v);
  if (lane == 0) warp_values[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < WG_BLOCK / 32 ? warp_values[lane] : wg_identity();
    v = wg_group_fold<32>(v);
  }
  __syncthreads();
  return v;
}

/* The array kernels' result: the finalized output, or for a partial
 * reduction (wg_reduce_partial) the accumulator's raw bytes, which another
 * process's combine (wg_reduce_combine) folds with the other shards'. */
static __device__ __forceinline__ void wg_store_result(wg_out *out, wg_acc acc,
    unsigned long long n, const wg_params &params, int partial) {
  if (partial) *(wg_acc *)(void *)out = acc;
  else *out = wg_finalize(acc, n, params);
}

/* The combine entry point of the array kernels (wg_reduce_combine): k
 * accumulators folded left to right in index order by one thread, then
 * finalized with n, the count of every shard together. One thread and a
 * fixed order: the same bits on every run and every rank; k is the number
 * of shards, small. */
#define WG_COMBINE_KERNEL(name)                                              \
  extern "C" __global__ void name(const wg_acc *__restrict__ accs,          \
      unsigned long long k, unsigned long long n, wg_out *__restrict__ out,  \
      const wg_params params) {                                              \
    if (blockIdx.x != 0 || threadIdx.x != 0) return;                         \
    wg_acc acc = wg_identity();                                              \
    for (unsigned long long j = 0; j < k; j++) acc = wg_combine(acc, accs[j]); \
    *out = wg_finalize(acc, n, params);                                      \
  }

/* The whole grid's values into *out (the array kernels): each block folds
 * its own; one block alone finalizes; else every block's thread 0 stores
 * its partial in the workspace (tickets first, then partials) and the last
 * block to take the ticket (a fence, then an atomic) folds the partials in
 * block order and resets the ticket, so the next launch needs no memset. */
static __device__ __forceinline__ void wg_grid_finish(wg_acc acc, unsigned long long n,
    wg_out *__restrict__ out, const wg_params &params, unsigned char *workspace,
    int partial) {
  acc = wg_block_fold(acc);
  if (gridDim.x == 1) {
    if (threadIdx.x == 0) wg_store_result(out, acc, n, params, partial);
    return;
  }
  unsigned int *const wg_ticket = (unsigned int *)workspace;
  wg_acc *const wg_partials = (wg_acc *)(workspace + WG_TICKET_BYTES);
  __shared__ bool last_block;
  if (threadIdx.x == 0) {
    wg_partials[blockIdx.x] = acc;
    __threadfence(); /* the partial is visible before the ticket is taken */
    last_block = atomicAdd(wg_ticket, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last_block) return;
  __threadfence(); /* every other block's partial is visible from here on */
  /* Eight partials a thread are loaded before any is folded: one L2 round
   * trip for up to 8 * WG_BLOCK partials, not one a partial. */
  acc = wg_identity();
  for (unsigned b0 = 0; b0 < gridDim.x; b0 += 8 * WG_BLOCK) {
    wg_acc p[8];
#pragma unroll
    for (int j = 0; j < 8; j++) {
      const unsigned b = b0 + j * WG_BLOCK + threadIdx.x;
      p[j] = b < gridDim.x ? wg_ldcg(wg_partials + b) : wg_identity();
    }
#pragma unroll
    for (int j = 0; j < 8; j++) acc = wg_combine(acc, p[j]);
  }
  acc = wg_block_fold(acc);
  if (threadIdx.x == 0) {
    wg_store_result(out, acc, n, params, partial);
    *wg_ticket = 0; /* ready for the workspace's next launch */
  }
}

/* A span of elements as a scalar head up to its first 16-byte boundary,
 * whole 16-byte vectors, and a scalar tail. Count: the integer type of the
 * counts (32 bits where spans are short: fewer registers). */
template <class Count>
struct wg_parts {
  Count head;    /* scalars before the first vector */
  Count vectors; /* whole 16-byte vectors */
  Count tail;    /* the first scalar after the vectors */
  Count end;     /* the span's length */
};

template <class Count>
static __device__ __forceinline__ wg_parts<Count> wg_split(const wg_elem *p, Count n) {
  wg_parts<Count> r;
  r.head = (Count)(((16u - ((unsigned)(unsigned long long)p & 15u)) & 15u) /
                   sizeof(wg_elem));
  if (r.head > n) r.head = n;
  r.vectors = (n - r.head) / WG_VEC;
  r.tail = r.head + r.vectors * WG_VEC;
  r.end = n;
  return r;
}
