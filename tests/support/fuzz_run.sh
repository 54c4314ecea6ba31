#!/bin/sh
# fuzz_run.sh FUZZER SECONDS CORPUS — run a libFuzzer target time-bounded on
# a temporary copy of the committed seed corpus (the tree stays clean).
set -eu
fuzzer=$(realpath "$1"); secs=$2; corpus=$(realpath "$3")
work=$(mktemp -d "${TMPDIR:-/tmp}/hw-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir "$work/corpus"
cp "$corpus"/* "$work/corpus/"
cd "$work"
# a crash must fail the test: libFuzzer exits 77 by default, which meson
# counts as SKIP
# (not exec: the EXIT trap must still remove $work)
"$fuzzer" -max_total_time="$secs" -error_exitcode=1 -print_final_stats=1 -artifact_prefix="$work/" "$work/corpus"
