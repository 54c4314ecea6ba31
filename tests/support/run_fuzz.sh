#!/bin/sh
# run_fuzz.sh FUZZER CORPUS [libFuzzer args...]
# Runs a libFuzzer target on the committed seed corpus without writing into
# the source tree: new inputs go to a scratch directory (libFuzzer writes to
# its first corpus argument), which is removed afterwards. Crash artifacts
# land in the current directory (the build dir under meson test).
set -eu
fuzzer=$1
corpus=$2
shift 2
scratch=$(mktemp -d "${TMPDIR:-/tmp}/hw-fuzz.XXXXXX")
trap 'rm -rf "$scratch"' EXIT INT TERM
# -error_exitcode=1: a crash must fail the test (libFuzzer exits 77 by
# default, which meson counts as SKIP)
"$fuzzer" -error_exitcode=1 "$@" "$scratch" "$corpus"
