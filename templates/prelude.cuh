/* ---- element type and operator: ${type} ${op} ---- */
typedef ${ctype} wg_elem; /* an element as stored in memory */
typedef ${acc} wg_acc; /* what lanes combine */
typedef ${bits} wg_bits; /* an element's bits, as a shuffle carries them */
${conversions}
static __device__ __forceinline__ wg_acc wg_load(wg_elem x) { return ${load}; }
static __device__ __forceinline__ wg_elem wg_store(wg_acc v) { return ${store}; }
static __device__ __forceinline__ wg_bits wg_to_bits(wg_elem x) { return ${to_bits}; }
static __device__ __forceinline__ wg_elem wg_from_bits(wg_bits b) { return ${from_bits}; }
static __device__ __forceinline__ wg_acc wg_identity() { return (wg_acc)(${identity}); }
static __device__ __forceinline__ wg_acc wg_combine(wg_acc a, wg_acc b) { return ${combine}; }
