/*
 * tables.c - element types, operators, primitives and variants as data.
 *
 * Adding a type or an operator is adding a row here; codegen and the spec
 * validator read these rows and never switch on a particular type.
 */
#include "internal.h"

#define INF_F "__int_as_float(0x7f800000)"
#define INF_D "__longlong_as_double(0x7ff0000000000000LL)"

/* name, ctype, acc, uacc, load, store, lowest, highest, bits, to_bits,
 * from_bits, size, is_float, is_signed */
const wg_type_info wg_types[WG_TYPE_COUNT] = {
  [WG_F16] = {"f16", "unsigned short", "float", NULL, "wg_f16_to_f32(x)",
              "wg_f32_to_f16(v)", "-" INF_F, INF_F, "unsigned int",
              "(unsigned int)x", "(unsigned short)b", 2, true, true},
  [WG_BF16] = {"bf16", "unsigned short", "float", NULL, "wg_bf16_to_f32(x)",
               "wg_f32_to_bf16(v)", "-" INF_F, INF_F, "unsigned int",
               "(unsigned int)x", "(unsigned short)b", 2, true, true},
  [WG_F32] = {"f32", "float", "float", NULL, "x", "v", "-" INF_F, INF_F,
              "unsigned int", "__float_as_uint(x)", "__uint_as_float(b)", 4,
              true, true},
  [WG_F64] = {"f64", "double", "double", NULL, "x", "v", "-" INF_D, INF_D,
              "unsigned long long",
              "(unsigned long long)__double_as_longlong(x)",
              "__longlong_as_double((long long)b)", 8, true, true},
  [WG_I32] = {"i32", "int", "int", "unsigned int", "x", "v",
              "(-2147483647 - 1)", "2147483647", "unsigned int",
              "(unsigned int)x", "(int)b", 4, false, true},
  [WG_U32] = {"u32", "unsigned int", "unsigned int", "unsigned int", "x", "v",
              "0u", "0xffffffffu", "unsigned int", "x", "b", 4, false, false},
  [WG_I64] = {"i64", "long long", "long long", "unsigned long long", "x", "v",
              "(-9223372036854775807LL - 1)", "9223372036854775807LL",
              "unsigned long long", "(unsigned long long)x", "(long long)b", 8,
              false, true},
  [WG_U64] = {"u64", "unsigned long long", "unsigned long long",
              "unsigned long long", "x", "v", "0ull", "0xffffffffffffffffull",
              "unsigned long long", "x", "b", 8, false, false},
};

/* Integer sums and products go through the unsigned twin: they wrap, as
 * the header promises, instead of being undefined on overflow. */
const wg_operator_info wg_operators[WG_OPERATOR_COUNT] = {
  [WG_OP_NONE] = {"none", "a", NULL, "0", NULL, false},
  [WG_OP_SUM] = {"sum", "(wg_acc)((${uacc})a + (${uacc})b)", "a + b", "0",
                 "__reduce_add_sync", false},
  [WG_OP_PROD] = {"prod", "(wg_acc)((${uacc})a * (${uacc})b)", "a * b", "1",
                  NULL, false},
  [WG_OP_MIN] = {"min", "(b < a ? b : a)", "fmin(a, b)", "${highest}",
                 "__reduce_min_sync", false},
  [WG_OP_MAX] = {"max", "(a < b ? b : a)", "fmax(a, b)", "${lowest}",
                 "__reduce_max_sync", false},
  [WG_OP_AND] = {"and", "a & b", NULL, "~(wg_acc)0", "__reduce_and_sync", true},
  [WG_OP_OR] = {"or", "a | b", NULL, "0", "__reduce_or_sync", true},
  [WG_OP_XOR] = {"xor", "a ^ b", NULL, "0", "__reduce_xor_sync", true},
};

#define V(x) (1u << WG_VARIANT_##x)

const wg_primitive_info wg_primitives[WG_PRIMITIVE_COUNT] = {
  [WG_REDUCE] = {"reduce", true, false, true,
                 V(AUTO) | V(DOWN) | V(XOR) | V(IDX) | V(REDUX) | V(SMEM)},
  [WG_ALLREDUCE] = {"allreduce", true, false, true,
                    V(AUTO) | V(DOWN) | V(XOR) | V(IDX) | V(REDUX) | V(SMEM)},
  [WG_SCAN] = {"scan", true, false, true, V(AUTO) | V(UP) | V(IDX) | V(SMEM)},
  [WG_EXSCAN] = {"exscan", true, false, true,
                 V(AUTO) | V(UP) | V(IDX) | V(SMEM)},
  [WG_BROADCAST] = {"broadcast", false, false, true,
                    V(AUTO) | V(IDX) | V(SMEM)},
  [WG_BALLOT] = {"ballot", false, true, true, V(AUTO) | V(VOTE)},
  [WG_ANY] = {"any", false, true, true, V(AUTO) | V(VOTE)},
  [WG_ALL] = {"all", false, true, true, V(AUTO) | V(VOTE)},
  [WG_MATCH] = {"match", false, true, true, V(AUTO) | V(VOTE)},
  [WG_REDUCE_ARRAY] = {"reduce-array", true, false, false, V(AUTO)},
  [WG_REDUCE_ROWS] = {"reduce-rows", true, false, false, V(AUTO)},
};

const char *const wg_variant_names[WG_VARIANT_COUNT] = {
  "auto", "down", "xor", "up", "idx", "redux", "smem", "vote",
};

const char *const wg_layout_names[WG_LAYOUT_COUNT] = {"vec", "lane"};

const char *wg_primitive_name(wg_primitive p) {
  return (unsigned)p < WG_PRIMITIVE_COUNT ? wg_primitives[p].name : NULL;
}
const char *wg_type_name(wg_type t) {
  return (unsigned)t < WG_TYPE_COUNT ? wg_types[t].name : NULL;
}
const char *wg_operator_name(wg_operator op) {
  return (unsigned)op < WG_OPERATOR_COUNT ? wg_operators[op].name : NULL;
}
const char *wg_variant_name(wg_variant v) {
  return (unsigned)v < WG_VARIANT_COUNT ? wg_variant_names[v] : NULL;
}
const char *wg_layout_name(wg_layout l) {
  return (unsigned)l < WG_LAYOUT_COUNT ? wg_layout_names[l] : NULL;
}
size_t wg_type_size(wg_type t) {
  return (unsigned)t < WG_TYPE_COUNT ? wg_types[t].size : 0;
}
