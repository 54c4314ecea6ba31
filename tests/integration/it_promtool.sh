#!/usr/bin/env bash
# it_promtool.sh TRANSPORT REACTORS — every node's /metrics passes
# Prometheus's own linter. A controller and 3 brokers (`cluster up
# --reactors REACTORS`), a topic of 4 partitions (RF 3, min ISR 2) so every
# reactor leads and follows partitions, acks=all and acks=1 records and a
# consumer so the request histograms and summaries have samples; then each
# node's endpoint is scraped and `promtool check metrics` (Debian's
# `prometheus` package) must print nothing and exit 0: HELP and TYPE on
# every family, counters ending in _total, base units, no _count suffix on
# gauges, no quantile label outside summaries; also on a broker that has no
# partition yet. Every family scraped is also
# listed in docs/metrics.md (the table `hiwaterd --print-metrics-table`
# prints from the tables that define the families), and every
# table family of a broker or controller is on some node's endpoint. No
# series is served twice.
source "$(dirname "$0")/it_lib.sh"
transport=${1:?transport}
reactors=${2:?reactors}
command -v promtool >/dev/null || it_fail "promtool not installed (Debian package prometheus; ci/bootstrap)"

# lint_node NODE FILE: scrape NODE into FILE; promtool must print nothing, exit 0
lint_node() {
	local lint rc
	hw metrics "$1" >"$2" || it_fail "hiwater metrics $1 exited $?"
	set +e
	lint=$(promtool check metrics <"$2" 2>&1)
	rc=$?
	set -e
	[ "$rc" = 0 ] && [ -z "$lint" ] ||
		it_fail "promtool check metrics on node $1 (exit $rc): $(head -c 3000 <<<"$lint")"
}

it_up "$transport" --reactors "$reactors"
# a broker before any partition exists: families with no samples yet
lint_node 1 "$IT_DIR/metrics-empty.txt"
hw topic create tp --partitions 4 --replication-factor 3 --config min.insync.replicas=2 -q \
	>/dev/null || it_fail "topic create"
for p in 0 1 2 3; do
	seq 1 200 | hw produce --topic tp --partition "$p" --acks all --batch-size 10 -q >/dev/null ||
		it_fail "acks=all produce to partition $p exited $?"
done
seq 1 50 | hw produce --topic tp --partition 0 --acks 1 --batch-size 10 -q >/dev/null ||
	it_fail "acks=1 produce exited $?"
hw consume --topic tp --partition 0 --from-beginning --max-messages 100 -q >/dev/null ||
	it_fail "consume exited $?"

table=$("$HIWATER_BIN_DIR/hiwaterd" --print-metrics-table) || it_fail "hiwaterd --print-metrics-table exited $?"
# documented families: the first column of the table's rows, `name`
documented=$(awk -F'|' '/^\| `hiwater_/ { f = $2; gsub(/[ `]/, "", f); print f }' <<<"$table" | sort -u)
[ "$(wc -l <<<"$documented")" -gt 50 ] || it_fail "the metrics table lists $(wc -l <<<"$documented") families"

seen=""
for node in 0 1 2 3; do
	out="$IT_DIR/metrics-$node.txt"
	lint_node "$node" "$out"
	dup=$(awk '!/^#/ && NF { if (seen[$1]++) print $1 }' "$out" | head -5)
	[ -z "$dup" ] || it_fail "node $node serves a series twice: $(echo $dup)"
	fams=$(awk '$1 == "#" && $2 == "TYPE" { print $3 }' "$out" | sort -u)
	undoc=$(comm -23 <(echo "$fams") <(echo "$documented"))
	[ -z "$undoc" ] || it_fail "node $node exports families not in the metrics table: $(echo $undoc)"
	seen=$(printf '%s\n%s\n' "$seen" "$fams")
	it_log "node $node: $(wc -l <"$out") lines, $(wc -l <<<"$fams") families, promtool clean"
done

# The request histograms have samples (acks=all on some broker), and every
# documented family of this transport and reactor count is on some node.
grep -hq '^hiwater_request_total_time_seconds_count{request="Produce",acks="all"} [1-9]' "$IT_DIR"/metrics-[0-9].txt ||
	it_fail "no broker timed an acks=all produce"
missing=$(comm -13 <(sort -u <<<"$seen") <(awk -F'|' -v t="$transport" -v r="$reactors" '
	/^\| `hiwater_/ {
		f = $2; gsub(/[ `]/, "", f); w = $6
		if (w ~ /jemalloc/ && !jem) next
		if (w ~ /dpdk/ && t != "dpdk") next
		if (w ~ /memif/ && t != "dpdk") next
		if (w ~ /reactors/ && r < 2) next
		if (w ~ /zookeeper/) next   # ZooKeeper mode only: tests/integration/zk/it_zk_zombie.sh lints those
		print f
	}' jem="$(ldd "$HIWATER_BIN_DIR/hiwaterd" | grep -c libjemalloc || true)" <<<"$table" | sort -u))
[ -z "$missing" ] || it_fail "documented families on no node ($transport, $reactors reactors): $(echo $missing)"
it_log "every node promtool-clean over $transport with $reactors reactor(s); every family documented"
