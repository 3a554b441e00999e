// expr_shim.h - the CUDA conversions an expression's helpers
// (wg_expr_helpers) call, for the host harnesses: shim.h (warp kernels) and
// model_shim.h (the reductions' preludes).
#ifndef WG_EXPR_SHIM_H
#define WG_EXPR_SHIM_H
#include <cmath>
// Float -> integer conversions of expression casts: the helpers already
// send NaN to 0 and saturate; these only truncate.
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
// The float overloads, as CUDA has them (exp of a float is expf).
using std::sqrt; using std::exp; using std::log; using std::fabs; using std::fmin; using std::fmax;
#endif
