
/* 16-bit floats travel as their bits and are widened to f32 to be combined;
 * the conversions are written out so the source needs no include path. */
static __device__ __forceinline__ float wg_f16_to_f32(unsigned short h) {
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
  return f;
}
static __device__ __forceinline__ unsigned short wg_f32_to_f16(float f) {
  unsigned short h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return h;
}
static __device__ __forceinline__ float wg_bf16_to_f32(unsigned short h) {
  return __uint_as_float((unsigned)h << 16);
}
static __device__ __forceinline__ unsigned short wg_f32_to_bf16(float f) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  /* One instruction from sm_80 on (two results pack into one F2FP), where
   * the rounding below costs five: the same bits, but for a NaN, which
   * comes out as the canonical quiet NaN. */
  unsigned short h;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return h;
#else
  unsigned u = __float_as_uint(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) /* NaN stays NaN, made quiet */
    return (unsigned short)((u >> 16) | 0x40u);
  u += 0x7fffu + ((u >> 16) & 1u); /* round to nearest, ties to even */
  return (unsigned short)(u >> 16);
#endif
}
