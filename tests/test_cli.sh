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
expect 0 "source with a map" -- "$wg" source 'reduce-array f32 sum map="x*x"'
has "$tmp/out" 'reduce-array f32 sum map="x \* x"' "source header has the canonical map"
has "$tmp/out" "wg_user_map" "source renders the map"
expect 0 "source with two inputs" -- "$wg" source 'reduce-rows f32 max map="abs(x-y)" inputs=f32,f32'
has "$tmp/out" "wg_load_y" "two inputs: the element kernel"
expect 0 "map on a warp reduce" -- "$wg" source 'reduce f32 argmax map="abs(x)" width=8'
has "$tmp/out" "wg_user_map" "warp reduce renders the map"
expect 2 "map on broadcast" -- "$wg" source 'broadcast f32 map="x*x"'
expect 0 "compact source" -- "$wg" source 'compact f32 pred="x>p0&&x==x" params=f32'
has "$tmp/out" 'compact f32 pred="x > p0 && x == x" params=f32' "compact header has the canonical predicate"
has "$tmp/out" 'wg_compact_f32_e' "compact kernel name"
expect 2 "pred on a reduction" -- "$wg" source 'reduce-array f32 sum pred="x > 0"'
expect 2 "map on compact" -- "$wg" source 'compact f32 map="x > 0"'
expect 2 "compact run with --block" -- "$wg" run 'compact f32' --block 64

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
# 14 operators (sum prod min max, argmin on) x (down, xor, idx in both
# layouts + smem, which is lane only)
if [ "$(wc -l <"$tmp/out")" -eq 98 ] && ! grep -qv "^reduce f32 .*width=16" "$tmp/out"; then ok
else bad "filtered list: $(wc -l <"$tmp/out") lines"; fi
has "$tmp/out" "^reduce f32 sum width=16 variant=xor layout=lane$" "list has the lane layout"
expect 0 "list for sm_75" -- "$wg" list --arch sm_75 redux
if [ ! -s "$tmp/out" ]; then ok; else bad "sm_75 lists redux"; fi
expect 2 "list bad option" -- "$wg" list --bogus

expect 0 "info" -- "$wg" info
has "$tmp/out" "NVRTC" "info shows NVRTC"
has "$tmp/out" "sm_90" "info lists sm_90"
has "$tmp/out" "cache" "info shows the cache"
has "$tmp/out" "nvrtc id  libnvrtc" "info shows what of NVRTC keys the cache"

# NVRTC is loaded only to compile: a warm-cache process never maps it (the
# loader's own log says what it opened), and a miss without NVRTC is a
# clear failure.
spec="reduce u32 max width=8 variant=xor arch=sm_90"
expect 0 "cubin, cold" -- "$wg" cubin "$spec" -o "$tmp/k1.cubin"
LD_DEBUG=files "$wg" cubin "$spec" -o "$tmp/k2.cubin" >"$tmp/out" 2>"$tmp/err"
if [ $? -eq 0 ] && cmp -s "$tmp/k1.cubin" "$tmp/k2.cubin"; then ok; else bad "warm cubin differs"; fi
has "$tmp/err" "file=libc.so" "LD_DEBUG shows what the loader opened"
if ! grep -q libnvrtc "$tmp/err"; then ok; else bad "a warm-cache cubin loaded NVRTC"; fi
LD_DEBUG=files "$wg" cubin "reduce u32 max width=8 variant=xor arch=sm_80" -o "$tmp/k3.cubin" >/dev/null 2>"$tmp/err"
has "$tmp/err" "libnvrtc" "a cold cubin loads NVRTC"
expect 1 "cubin, no NVRTC" -- env WARPGEN_NVRTC=/nonexistent "$wg" cubin "$spec" -o "$tmp/k4.cubin"
has "$tmp/err" "WARPGEN_NVRTC=/nonexistent is not libnvrtc.so" "missing NVRTC named"
expect 0 "source without NVRTC" -- env WARPGEN_NVRTC=/nonexistent "$wg" source "$spec"
expect 2 "arch NVRTC lacks" -- "$wg" cubin "reduce f32 sum arch=sm_52" -o "$tmp/k5.cubin"
has "$tmp/err" "arch: sm_52 is not supported by this NVRTC" "unsupported arch named at compile"

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

# --- holes found by fuzzing (issue 10) ---------------------------------------

# Output that never reached its file is a failure, with a message.
for args in "source|reduce f32 sum" "ptx|reduce f32 sum arch=sm_90" "list|" "info|" \
            "show|" "cache|path" "--help|"; do
  cmd=${args%%|*} rest=${args#*|}
  if [ -n "$rest" ]; then "$wg" $cmd "$rest" >/dev/full 2>"$tmp/err"; else "$wg" $cmd >/dev/full 2>"$tmp/err"; fi
  code=$?
  if [ $code -eq 1 ]; then ok; else bad "$cmd > /dev/full: exit $code, wanted 1"; fi
  has "$tmp/err" "writing standard output failed" "$cmd > /dev/full says why"
done

# Every number is parsed strictly: the whole text, no sign, no overflow.
expect 2 "list --arch sm_abc" -- "$wg" list --arch sm_abc
has "$tmp/err" "'abc' is not a number" "list --arch names the bad value"
expect 2 "list --arch sm_90x" -- "$wg" list --arch sm_90x
expect 2 "list --arch sm_" -- "$wg" list --arch sm_
expect 0 "list --arch 90" -- "$wg" list --arch 90 reduce i32 sum width=32 variant=redux
has "$tmp/out" "arch=sm_90" "list --arch without sm_ still works"
for n in " -1" "-1" "+5" "1 " "" "18446744073709551616" "2^64" "2^63+9223372036854775808" \
         "3^4" "2^" "2^3+" "010" "0x" "1e6" "0x1g"; do
  expect 2 "run --n '$n'" -- "$wg" run --n "$n" "reduce f32 sum"
  has "$tmp/err" "is not a number from 0 to 18446744073709551615" "run --n '$n' explained"
done
for opt in "--reps|0" "--reps|100001" "--block|1025" "--grid|0x80000000" "--seed|-1" \
           "--block|-0"; do
  expect 2 "run ${opt%%|*} ${opt#*|}" -- "$wg" run "${opt%%|*}" "${opt#*|}" "reduce f32 sum"
done
expect 2 "run --n without a value" -- "$wg" run "reduce f32 sum" --n
# Good forms reach the GPU: exit 0 there, 4 here.
for n in 0 1 2^24+3 0x10 2^0 18446744073709551615; do
  "$wg" run --n "$n" --seed 7 "reduce f32 sum" >"$tmp/out" 2>"$tmp/err"
  code=$?
  if [ $code -eq 0 ] || [ $code -eq 4 ] || { [ $code -eq 1 ] && [ "$n" = 18446744073709551615 ]; }; then ok
  else bad "run --n $n: exit $code: $(head -c 300 "$tmp/err")"; fi
done

# The whole-array and row reductions: their shape options are checked
# before the GPU is asked for (exit 2 here and there), good forms reach it.
for cmd in run bench; do
  expect 2 "$cmd reduce-rows without cols" -- "$wg" $cmd "reduce-rows f32 sum"
  has "$tmp/err" "reduce-rows needs --cols" "$cmd: missing cols explained"
  expect 2 "$cmd --cols against cols=" -- "$wg" $cmd "reduce-rows f32 sum cols=10" --cols 11
  has "$tmp/err" "differs from the spec's cols=" "$cmd: cols mismatch explained"
  expect 2 "$cmd --rows with --n" -- "$wg" $cmd "reduce-rows f32 sum" --cols 4 --rows 2 --n 8
  expect 2 "$cmd --cols 0 without --rows" -- "$wg" $cmd "reduce-rows f32 max" --cols 0
  expect 2 "$cmd --rows x --cols past 2^64" -- "$wg" $cmd "reduce-rows f32 sum" --cols 2^40 --rows 2^40
  expect 2 "$cmd reduce-array --rows" -- "$wg" $cmd "reduce-array f32 sum" --rows 3
  expect 2 "$cmd reduce-array --block" -- "$wg" $cmd "reduce-array f32 sum" --block 64
  expect 2 "$cmd warp --cols" -- "$wg" $cmd "reduce f32 sum" --cols 3
  expect 2 "$cmd warp --param" -- "$wg" $cmd "reduce f32 sum" --param 1
  for p in nan inf 1x "" " 1" 1e999; do
    expect 2 "$cmd --param '$p'" -- "$wg" $cmd "reduce-array f32 var" --param "$p"
  done
  expect 2 "$cmd nine --param" -- "$wg" $cmd "reduce-array f32 var" --param 1 --param 1 \
    --param 1 --param 1 --param 1 --param 1 --param 1 --param 1 --param 1
  expect 2 "$cmd mean of i32" -- "$wg" $cmd "reduce-array i32 mean"
  for good in "reduce-array f32 sum --n 0" "reduce-array f64 var --param 0 --n 2^20+3" \
              "reduce-array i64 argmax --n 0" "reduce-array bf16 logsumexp --n 1" \
              "reduce-rows f16 norm2 cols=33 --n 1000" "reduce-rows u32 count_nonzero --cols 7" \
              "reduce-rows i32 xor --cols 0 --rows 5" "reduce-rows f32 std --rows 3 --cols 1 --param 2"; do
    # shellcheck disable=SC2086
    "$wg" $cmd $good >"$tmp/out" 2>"$tmp/err"
    code=$?
    if [ $code -eq 0 ] || [ $code -eq 4 ]; then ok
    else bad "$cmd $good: exit $code: $(head -c 300 "$tmp/err")"; fi
  done
done
if grep -q "reduce-rows f32 std cols=1" "$tmp/out" "$tmp/err"; then ok
else bad "bench did not name the cols it ran with"; fi

# --specs reads bounded lines from regular files and pipes only.
expect 2 "run --specs /dev/zero" -- timeout 20 "$wg" run --specs /dev/zero
has "$tmp/err" "not a regular file, a pipe or a terminal" "/dev/zero refused"
head -c 100000 /dev/zero | timeout 20 "$wg" run --specs - >"$tmp/out" 2>"$tmp/err"
code=$?
if [ $code -eq 2 ]; then ok; else bad "NUL bytes on a pipe: exit $code"; fi
has "$tmp/err" "line 1: a NUL byte" "NUL byte named"
head -c 5000 /dev/zero | tr '\0' 'x' | timeout 20 "$wg" run --specs - >"$tmp/out" 2>"$tmp/err"
code=$?
if [ $code -eq 2 ]; then ok; else bad "a long line: exit $code"; fi
has "$tmp/err" "line 1: longer than 1023 bytes" "long line named"
yes '#' | head -c 5000000 | timeout 20 "$wg" run --specs - >"$tmp/out" 2>"$tmp/err"
code=$?
if [ $code -eq 2 ]; then ok; else bad "a 5 MB file: exit $code"; fi
has "$tmp/err" "longer than 4 MiB" "file cap named"
printf '# comment\n\nreduce f32 plus\n' >"$tmp/specs"
expect 2 "run --specs with a bad spec" -- "$wg" run --specs "$tmp/specs"
has "$tmp/err" "operator: unknown 'plus'" "bad spec in a file explained"
expect 2 "run --specs missing file" -- "$wg" run --specs "$tmp/nonexistent"

# Past a file-size limit the PTX is still printed and the cache store
# fails cleanly (the tool ignores SIGXFSZ).
mkdir -p "$tmp/fsz"
WARPGEN_CACHE_DIR="$tmp/fsz/cache" bash -c 'ulimit -f 1; exec "$0" ptx "reduce f64 max width=8 arch=sm_90"' "$wg" \
  2>"$tmp/err" | cat >"$tmp/out"
code=${PIPESTATUS[0]}
if [ "$code" -eq 0 ]; then ok; else bad "ptx under ulimit -f 1: exit $code: $(head -c 300 "$tmp/err")"; fi
has "$tmp/out" ".entry" "ptx under ulimit -f 1 printed the PTX"
if [ -z "$(find "$tmp/fsz" -name '*.wgc' 2>/dev/null)" ]; then ok; else bad "an entry was stored past the limit"; fi

# No byte of user input reaches the terminal raw.
esc=$'\e'
no_raw_escape() { # FILE DESCRIPTION
  if grep -q "$esc" "$1"; then bad "$2: raw ESC in $(basename "$1")"; else ok; fi
  has "$1" '\\x1b' "$2: ESC shown as \\x1b"
}
expect 2 "ESC in a spec" -- "$wg" source "reduce f32 sum ${esc}[31mred"
no_raw_escape "$tmp/err" "spec with ESC"
expect 2 "ESC in an operator" -- "$wg" ptx "reduce f32 s${esc}[2Jum"
no_raw_escape "$tmp/err" "operator with ESC"
expect 2 "ESC as a command" -- "$wg" "${esc}[2Jfoo"
no_raw_escape "$tmp/err" "command with ESC"
expect 2 "ESC as an option" -- "$wg" ptx "--${esc}x" "reduce f32 sum"
no_raw_escape "$tmp/err" "option with ESC"
expect 2 "ESC in a number" -- "$wg" run --n "1${esc}" "reduce f32 sum"
no_raw_escape "$tmp/err" "number with ESC"
expect 2 "ESC in --arch" -- "$wg" list --arch "sm_${esc}"
no_raw_escape "$tmp/err" "--arch with ESC"
expect 2 "ESC in a cache action" -- "$wg" cache "${esc}[2J"
no_raw_escape "$tmp/err" "cache action with ESC"
printf 'reduce f32 sum \033[31m\n' >"$tmp/specs"
expect 2 "ESC in a specs file" -- "$wg" run --specs "$tmp/specs"
no_raw_escape "$tmp/err" "specs file with ESC"

# A cache folder somebody else owns is not used; stats say why. Only root
# can hand a folder to another user.
if [ "$(id -u)" -eq 0 ]; then
  mkdir -p "$tmp/theirs"
  WARPGEN_CACHE_DIR="$tmp/theirs" "$wg" ptx "reduce f32 sum arch=sm_90" >/dev/null 2>&1
  chown -R 65534 "$tmp/theirs" && chmod 755 "$tmp/theirs"
  WARPGEN_CACHE_DIR="$tmp/theirs" expect 0 "cache stats on a foreign folder" -- "$wg" cache stats
  has "$tmp/out" "enabled:     no" "foreign folder disabled"
  has "$tmp/out" "owned by another user" "foreign folder: reason shown"
  chown -R 0 "$tmp/theirs" && chmod 775 "$tmp/theirs"
  WARPGEN_CACHE_DIR="$tmp/theirs" expect 0 "cache stats on a group-writable folder" -- "$wg" cache stats
  has "$tmp/out" "writable by its group" "group-writable folder: reason shown"
else
  echo "cli: foreign-owner case skipped (needs root)"
fi

echo "cli: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
