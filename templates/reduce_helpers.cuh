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
