/* ---- element type and operator: ${type} ${op} ---- */
typedef ${ctype} wg_elem; /* an element as stored in memory */
typedef ${bits} wg_bits; /* an element's bits, as a shuffle carries them */
${conversions}
static __device__ __forceinline__ ${num} wg_load(wg_elem x) { return ${load}; }
static __device__ __forceinline__ wg_elem wg_store(${num} v) { return ${store}; }
static __device__ __forceinline__ wg_bits wg_to_bits(wg_elem x) { return ${to_bits}; }
static __device__ __forceinline__ wg_elem wg_from_bits(wg_bits b) { return ${from_bits}; }
/* Is the element non-zero? Tested on its bits: -0.0 is zero, NaN is not. */
static __device__ __forceinline__ bool wg_nonzero(wg_elem x) { return ${nonzero}; }

/* The operator model: what lanes combine (wg_acc), its identity, the
 * combine, the map from an element and its index to an accumulator, and
 * the final step from the accumulator and the count to the output. */
${acc_decl}
typedef ${out_ctype} wg_out; /* the output as stored */
/* Parameters are a kernel argument: a new value compiles nothing. */
union wg_param { double f64; float f32; long long i64; unsigned long long u64; int i32; unsigned int u32; };
struct wg_params { wg_param p[${max_params}]; };
${defs}
static __device__ __forceinline__ wg_acc wg_identity() { return ${identity}; }
static __device__ __forceinline__ wg_acc wg_combine(wg_acc a, wg_acc b) { return ${combine}; }
static __device__ __forceinline__ wg_acc wg_map(wg_elem x, long long i${map_params}) {
  const ${value} v = ${map_value};
  (void)i;
  return ${map};
}
/* A lane's mapped values folded at once, where the operator has such a
 * fold (WG_FOLD_VALUES 1: the row kernels use it for whole passes). */
${fold}static __device__ __forceinline__ wg_out wg_finalize(wg_acc r, unsigned long long n,
    const wg_params &p) {
  (void)n; (void)p;
  const ${result} v = ${final};
  return ${out_store};
}
/* Shuffles and cache-global loads move the accumulator field by field. */
static __device__ __forceinline__ wg_acc wg_shfl_down(wg_acc v, int offset, int width) {
  wg_acc r;
${shfl}  return r;
}
static __device__ __forceinline__ wg_acc wg_ldcg(const wg_acc *p) {
  wg_acc r;
${ldcg}  return r;
}
