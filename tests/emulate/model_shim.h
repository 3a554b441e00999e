// model_shim.h - the few CUDA names a reduction's prelude (model.inc) uses,
// for the host harnesses of check_model.sh: one thread, no shuffles.
#ifndef WG_MODEL_SHIM_H
#define WG_MODEL_SHIM_H
#include <cmath>
#include <cstring>
#define __device__
#define __forceinline__ inline
static float __int_as_float(int x){float f;memcpy(&f,&x,4);return f;}
static unsigned __float_as_uint(float x){unsigned u;memcpy(&u,&x,4);return u;}
static float __uint_as_float(unsigned x){float f;memcpy(&f,&x,4);return f;}
static double __longlong_as_double(long long x){double f;memcpy(&f,&x,8);return f;}
static long long __double_as_longlong(double x){long long f;memcpy(&f,&x,8);return f;}
template<class T> T __shfl_down_sync(unsigned, T v, int, int){return v;}
template<class T> T __ldcg(const T*p){return *p;}
// Float -> integer conversions of expression casts (wg_expr_helpers): the
// helpers already send NaN to 0 and saturate; these only truncate.
template <class T> static T emu_trunc_to(double d) { return (T)std::trunc(d); }
#define __float2int_rz emu_trunc_to<int>
#define __double2int_rz emu_trunc_to<int>
#define __float2uint_rz emu_trunc_to<unsigned>
#define __double2uint_rz emu_trunc_to<unsigned>
#define __float2ll_rz emu_trunc_to<long long>
#define __double2ll_rz emu_trunc_to<long long>
#define __float2ull_rz emu_trunc_to<unsigned long long>
#define __double2ull_rz emu_trunc_to<unsigned long long>
// The device's fast division and exp (a few ulp there); exact here.
static inline float emu_expf(float x) { return std::exp(x); }
#define __expf emu_expf // glibc declares a __expf of its own
static inline float __fdividef(float a, float b) { return a / b; }
using std::sqrt; using std::exp; using std::log; using std::fabs; using std::fmin; using std::fmax;
#endif
