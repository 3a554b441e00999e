#!/usr/bin/env bash
# test_cli.sh - the `cli` suite: each subcommand of the warpgen tool, with
# good and bad input, checking output and exit codes.
# usage: test_cli.sh PATH/TO/warpgen
set -u
wg=${1:?usage: test_cli.sh WARPGEN}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export WARPGEN_CACHE_DIR="$tmp/cache"
passed=0 failed=0

ok() { passed=$((passed + 1)); }
bad() { failed=$((failed + 1)); echo "FAIL: $*" >&2; }

# expect CODE DESCRIPTION -- COMMAND...: the exit code must be CODE; output
# goes to $tmp/out and $tmp/err for the checks that follow.
expect() {
  local want=$1 what=$2; shift 3
  "$@" >"$tmp/out" 2>"$tmp/err"
  local got=$?
  if [ "$got" -eq "$want" ]; then ok; else bad "$what: exit $got, wanted $want; stderr: $(head -c 400 "$tmp/err")"; fi
}
has() { # has FILE PATTERN DESCRIPTION
  if grep -q -- "$2" "$1"; then ok; else bad "$3: no '$2' in $(basename "$1")"; fi
}

expect 0 "help" -- "$wg" --help
has "$tmp/out" "commands:" "help lists commands"
expect 2 "no command" -- "$wg"
expect 2 "unknown command" -- "$wg" frobnicate
has "$tmp/err" "unknown command 'frobnicate'" "unknown command named"
expect 0 "version" -- "$wg" --version
has "$tmp/out" "warpgen 0" "version printed"

for cmd in show source ptx cubin sass list info run bench cache; do
  expect 0 "$cmd --help" -- "$wg" $cmd --help
  has "$tmp/out" "usage: warpgen $cmd" "$cmd --help shows usage"
done

expect 0 "source" -- "$wg" source "reduce f32 sum width=16 variant=xor arch=sm_90"
has "$tmp/out" "reduce f32 sum width=16 variant=xor arch=sm_90" "source header names the spec"
has "$tmp/out" "__shfl_xor_sync" "source uses the xor shuffle"
expect 0 "source from separate words" -- "$wg" source scan i32 max width=8
has "$tmp/out" "__shfl_up_sync" "auto scan uses shfl up"

expect 0 "ptx" -- "$wg" ptx "allreduce u32 and width=8 variant=redux arch=sm_80"
has "$tmp/out" "redux.sync" "ptx has redux"
has "$tmp/out" ".target sm_80" "ptx targets sm_80"

expect 0 "cubin" -- "$wg" cubin "reduce f64 max variant=down" -o "$tmp/k.cubin"
if [ "$(head -c 4 "$tmp/k.cubin" | od -An -c | tr -d ' ')" = '177ELF' ]; then ok; else bad "cubin is not ELF"; fi
expect 2 "cubin without -o" -- "$wg" cubin "reduce f64 max"
has "$tmp/err" "-o FILE is needed" "cubin says -o is needed"
expect 1 "cubin to unwritable path" -- "$wg" cubin "reduce f64 max" -o /nonexistent/dir/k.cubin

# Bad specs: exit 2 and a message that names the field.
expect 2 "bad type" -- "$wg" source "reduce f31 sum"
has "$tmp/err" "type: unknown 'f31'" "bad type named"
expect 2 "xor on f32" -- "$wg" ptx "reduce f32 xor"
has "$tmp/err" "operator: 'xor' is bitwise" "bitwise op on float explained"
expect 2 "redux on f64" -- "$wg" cubin "reduce f64 sum variant=redux" -o "$tmp/x"
has "$tmp/err" "variant: 'redux' works on 32-bit integers" "redux type explained"
expect 2 "redux on sm_75" -- "$wg" sass "reduce i32 sum variant=redux arch=sm_75"
has "$tmp/err" "sm_80 or newer" "redux arch explained"
expect 2 "width 12" -- "$wg" source "reduce f32 sum width=12"
has "$tmp/err" "width: 12 is not allowed" "width explained"
expect 2 "up for broadcast" -- "$wg" source "broadcast f32 variant=up"
has "$tmp/err" "variant: 'up' is not available for 'broadcast'" "variant explained"
expect 2 "no spec" -- "$wg" source
expect 2 "unknown option" -- "$wg" ptx --fast "reduce f32 sum"

expect 0 "list" -- "$wg" list
lines=$(wc -l <"$tmp/out")
if [ "$lines" -gt 3000 ]; then ok; else bad "list printed only $lines specs"; fi
has "$tmp/out" "^reduce i32 sum width=32 variant=redux$" "list has redux"
expect 0 "list filtered" -- "$wg" list reduce f32 width=16
# 4 operators x (down, xor, idx in both layouts + smem, which is lane only)
if [ "$(wc -l <"$tmp/out")" -eq 28 ] && ! grep -qv "^reduce f32 .*width=16" "$tmp/out"; then ok
else bad "filtered list: $(wc -l <"$tmp/out") lines"; fi
has "$tmp/out" "^reduce f32 sum width=16 variant=xor layout=lane$" "list has the lane layout"
expect 0 "list for sm_75" -- "$wg" list --arch sm_75 redux
if [ ! -s "$tmp/out" ]; then ok; else bad "sm_75 lists redux"; fi
expect 2 "list bad option" -- "$wg" list --bogus

expect 0 "info" -- "$wg" info
has "$tmp/out" "NVRTC" "info shows NVRTC"
has "$tmp/out" "sm_90" "info lists sm_90"
has "$tmp/out" "cache" "info shows the cache"

# sass: works where a disassembler exists, else exit 3 with advice.
"$wg" sass "reduce f32 sum variant=down" >"$tmp/out" 2>"$tmp/err"
code=$?
if [ $code -eq 0 ]; then
  if grep -q "SHFL.DOWN" "$tmp/out"; then ok; else bad "sass lacks SHFL.DOWN"; fi
  "$wg" sass "allreduce f32 sum width=8 variant=xor" >"$tmp/out" 2>&1
  has "$tmp/out" "SHFL.BFLY" "sass shows SHFL.BFLY"
  echo "sass checked with $(grep '^sass' <("$wg" info) | head -1)"
elif [ $code -eq 3 ]; then
  has "$tmp/err" "pip install nvidia-cuda-nvdisasm" "sass says how to get a disassembler"
  if [ -n "${WARPGEN_REQUIRE_SASS:-}" ]; then bad "sass required but no disassembler"; fi
  echo "sass: no disassembler here (exit 3 checked)"
else
  bad "sass exit $code: $(cat "$tmp/err")"
fi

# show: the default kernel end to end.
expect 0 "show" -- "$wg" show
has "$tmp/out" "==== CUDA source ====" "show prints the source"
has "$tmp/out" "==== PTX ====" "show prints the PTX"
has "$tmp/out" "reduce f32 sum width=32 variant=auto" "show names the default spec"

echo "cli: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
