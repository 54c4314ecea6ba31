# it_failover_lib.sh — helpers of the failover tests (docs/scenarios.md), sourced after
# it_lib.sh. The end-of-test check every failover test runs:
#   it_final_check TOPIC PART [ACKED]
# waits until every replica is in the ISR and the HW reached the LEO (the
# load is over), then (1) reads the whole partition with `hiwater consume`
# and checks no record at or above the HW was served, (2) compares the
# replicas' segment bytes below the HW (it_logcheck.py replicas), and (3) if
# ACKED ("<offset> <value>" per acknowledged record) is given, checks each is
# present exactly once at its offset. `bench --verify` does (3) for the load
# generator's own records.
IT_CHECK="$(dirname "$0")/it_logcheck.py"


it_ms() { echo $(( $(date +%s%N) / 1000000 )); }

# it_replica_dirs T P: the log directories of the partition's replicas
it_replica_dirs() {
	local r
	for r in $(it_field "$1" "$2" Replicas | tr ',' ' '); do
		echo "$IT_DIR/c/node-$r/data/$1-$2"
	done
}

# it_settled T P: every replica in the ISR and the HW at the LEO (one describe)
it_settled() {
	{ hw topic describe "$1" --json 2>/dev/null || true; } |
		jq -e --arg t "$1" --argjson p "$2" '
			[.partitions[] | select(.topic == $t and .partition == $p)
			 | (.hw >= 0 and .hw == .leo and (.isr | sort) == (.replicas | sort))] | (length == 1 and .[0])' \
			>/dev/null 2>&1
}

# it_no_read_at T P OFFSET: a consumer starting at OFFSET (>= the HW) gets nothing
it_no_read_at() {
	local n
	n=$(hw consume --topic "$1" --partition "$2" --offset "$3" --print-offsets \
		--max-messages 1 --timeout 700 2>/dev/null | wc -c) || true
	[ "$n" = 0 ] || it_fail "a consumer read $1-$2 at offset $3, at or above the HW"
}

it_final_check() {
	local t=$1 p=$2 acked=${3:-} hwv out="$IT_DIR/consumed-$1-$2"
	it_wait 20 it_settled "$t" "$p" || it_fail "partition $t-$p did not settle: $(hw topic describe "$t")"
	hwv=$(it_field "$t" "$p" HW)
	hw consume --topic "$t" --partition "$p" --from-beginning --print-offsets \
		--max-messages "$hwv" --timeout 3000 >"$out" 2>"$IT_DIR/consume.err" ||
		{ cat "$IT_DIR/consume.err" >&2; it_fail "consume of $t-$p up to HW $hwv failed"; }
	python3 "$IT_CHECK" consumed "$hwv" "$out" || it_fail "consumer check"
	it_no_read_at "$t" "$p" "$hwv"
	# The followers' io_uring writes may trail their appends by a moment.
	# shellcheck disable=SC2046
	it_wait 5 python3 "$IT_CHECK" replicas "$hwv" $(it_replica_dirs "$t" "$p") ||
		it_fail "replica logs differ below the HW"
	if [ -n "$acked" ]; then
		python3 "$IT_CHECK" acked "$acked" "$out" || it_fail "acknowledged records lost"
	fi
}

# it_bench_check FILE.out FILE.err RC: the load generator's verdict
it_bench_check() {
	[ "$3" = 0 ] || { cat "$1" "$2" >&2; it_fail "bench exited $3"; }
	grep -q "verify          OK" "$1" || { cat "$1" >&2; it_fail "verify not OK"; }
	grep -E "^(throughput|records|verify)" "$1"
}
