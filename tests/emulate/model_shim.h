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
#include "expr_shim.h"
#endif
