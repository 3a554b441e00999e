#!/usr/bin/env bash
# test_exports.sh - the shared library exports the public wg_ API and
# nothing else, and every function the header declares is exported.
# usage: test_exports.sh LIBWARPGEN.so HEADER
set -u
lib=${1:?} header=${2:?}
exported=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[TDBR]$/ {print $3}' | sort)
stray=$(grep -v '^wg_' <<<"$exported" || true)
declared=$(grep -oE '^WG_API [^(]*\b(wg_[a-z0-9_]+)\(' "$header" | grep -oE 'wg_[a-z0-9_]+\($' | tr -d '(' | sort -u)
missing=$(comm -23 <(echo "$declared") <(echo "$exported"))
failed=0
if [ -n "$stray" ]; then echo "FAIL: exported but not wg_: $stray"; failed=$((failed + 1)); fi
if [ -n "$missing" ]; then echo "FAIL: declared but not exported: $missing"; failed=$((failed + 1)); fi
echo "exports: $(wc -l <<<"$exported") symbols, $(wc -l <<<"$declared") declared"
echo "exports: $((2 - failed)) passed, $failed failed"
[ "$failed" -eq 0 ]
