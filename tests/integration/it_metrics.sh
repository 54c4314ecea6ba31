#!/usr/bin/env bash
# it_metrics.sh TRANSPORT — apps/hiwaterd/README.md "Metrics": every node serves
# Prometheus text on a real HTTP listener, `hiwater metrics` prints it, and
# the gauges an operator alerts on move with the cluster: under-replicated
# 0 -> 1 on the leader when a follower's broker is fenced, the controller
# counts the fenced broker, ISR shrinks are counted, a dead node's endpoint
# makes `hiwater metrics` exit 3. Request latency (Kafka RequestMetrics) is
# exported as real Prometheus histograms: every bucket series is cumulative
# (counts never decrease as `le` grows), +Inf equals _count, and the
# leader's Produce _count grows by exactly the produce requests it counted
# (at least one per batch sent).
source "$(dirname "$0")/it_lib.sh"
transport=${1:?transport}

it_up "$transport" --config broker.session.timeout.ms=2000 --config broker.heartbeat.interval.ms=500
hw topic create t1 --partitions 1 --replication-factor 3 --config min.insync.replicas=2 -q \
	>/dev/null || it_fail "topic create"
seq 1 50 | hw produce --topic t1 --acks all -q >/dev/null 2>&1 || it_fail "produce"
leader=$(it_field t1 0 Leader)
follower=$(it_field t1 0 Replicas | tr ',' '\n' | grep -vx "$leader" | head -1)

# metric VALUE of NAME (exact series, labels included) on NODE
metric() { hw metrics "$1" 2>/dev/null | awk -v k="$2" '$1 == k { print $2; exit }'; }

all=$(hw metrics) || it_fail "hiwater metrics exited $?"
for name in hiwater_under_replicated_partitions hiwater_under_min_isr_partitions \
	hiwater_offline_partitions hiwater_isr_shrinks_total hiwater_isr_expands_total \
	hiwater_partition_follower_max_lag_offsets hiwater_reactor_busy_iterations_total \
	hiwater_reactor_idle_iterations_total \
	hiwater_produce_requests_total hiwater_follower_fetch_requests_total \
	hiwater_consumer_fetch_requests_total hiwater_failed_produce_requests_total \
	hiwater_bytes_in_total hiwater_follower_lag_offsets hiwater_follower_lag_seconds \
	hiwater_request_total_time_seconds_bucket hiwater_request_total_time_seconds_count \
	hiwater_request_total_time_quantile_seconds; do
	grep -q "^node=[0-9]* $name[ {]" <<<"$all" || it_fail "no $name in \`hiwater metrics\`"
done
# jemalloc's gauges exist where hiwaterd links jemalloc (not in sanitizer
# builds, whose allocator owns malloc).
if ldd "$HIWATER_BIN_DIR/hiwaterd" | grep -q libjemalloc; then
	grep -q "^node=1 hiwater_jemalloc_allocated_bytes [1-9]" <<<"$all" ||
		it_fail "hiwaterd links jemalloc but reports no allocated bytes"
fi
[ "$(metric "$leader" hiwater_under_replicated_partitions)" = 0 ] || it_fail "leader under-replicated before any failure"
[ "$(metric "$leader" hiwater_produce_requests_total)" -gt 0 ] || it_fail "leader counted no produce requests"
[ "$(metric 0 hiwater_offline_partitions)" = 0 ] || it_fail "controller reports offline partitions"

# ---- request latency histograms -------------------------------------------
families="hiwater_request_total_time_seconds hiwater_request_queue_time_seconds
	hiwater_request_local_time_seconds hiwater_request_remote_time_seconds
	hiwater_request_response_send_time_seconds"
# check_histograms TEXT: every family typed histogram; per series: le
# ascending, counts non-decreasing, +Inf = _count. Prints the series count.
check_histograms() {
	local fam
	for fam in $families; do
		grep -q "^# TYPE $fam histogram$" <<<"$1" || it_fail "no '# TYPE $fam histogram'"
	done
	awk '
	/^#/ { next }
	$1 ~ /_bucket\{/ {
		name = $1; sub(/\{.*/, "", name); sub(/_bucket$/, "", name)
		lbl = $1; sub(/^[^{]*\{/, "", lbl); sub(/\}$/, "", lbl)
		le = lbl; sub(/.*le="/, "", le); sub(/".*/, "", le)
		key = lbl; sub(/,?le="[^"]*"/, "", key); key = name "{" key "}"
		v = $2 + 0
		if (key in last && (le == "+Inf" ? 0 : (le + 0 <= lastle[key]))) { print "le not ascending: " $0; bad = 1 }
		if (key in last && v < last[key]) { print "bucket count decreases: " $0; bad = 1 }
		last[key] = v; lastle[key] = (le == "+Inf") ? 1e300 : le + 0
		if (le == "+Inf") inf[key] = v
		next
	}
	$1 ~ /_count(\{|$)/ {
		name = $1; sub(/\{.*/, "", name); sub(/_count$/, "", name)
		lbl = $1; if (lbl ~ /\{/) { sub(/^[^{]*\{/, "", lbl); sub(/\}$/, "", lbl) } else lbl = ""
		key = name "{" lbl "}"
		if (key in inf) { n++; if (inf[key] != $2 + 0) { print "+Inf " inf[key] " != _count " $2 " for " key; bad = 1 } }
	}
	END { if (bad) exit 1; print n + 0 }' <<<"$1"
}
# count of histogram FAMILY series LABELS on the node's text TEXT
hcount() { awk -v k="$2_count{$3}" '$1 == k { print $2; exit }' <<<"$1"; }

m1=$(hw metrics "$leader") || it_fail "metrics of leader $leader"
nseries=$(check_histograms "$m1") || it_fail "histogram check failed on leader $leader: $nseries"
# every histogram series passed the checks; the request ones: 5 families x
# (Produce acks 0/1/all, Fetch, FetchFollower) — other families (the Kafka
# listener's, ZooKeeper's) have series of their own
reqfams='hiwater_request_total_time_seconds|hiwater_request_queue_time_seconds|hiwater_request_local_time_seconds'
reqfams+='|hiwater_request_remote_time_seconds|hiwater_request_response_send_time_seconds'
nreq=$(grep -cE "^($reqfams)_count\\{" <<<"$m1" || true)
[ "$nreq" = 25 ] || it_fail "leader exports $nreq request histogram series, want 25 (of $nseries histogram series)"
[ "$nseries" -ge 25 ] || it_fail "leader exports only $nseries histogram series"
grep -q '^hiwater_request_total_time_seconds_bucket{request="Produce",acks="all",le="0.001"} ' <<<"$m1" ||
	it_fail "no Produce acks=all bucket at le=0.001"
grep -q '^hiwater_request_total_time_quantile_seconds{request="FetchFollower",quantile="0.99"} ' <<<"$m1" ||
	it_fail "no FetchFollower p99 gauge"
[ "$(hcount "$m1" hiwater_request_total_time_seconds 'request="FetchFollower"')" -gt 0 ] ||
	it_fail "leader timed no follower fetches"
prod0=$(awk '$1 == "hiwater_produce_requests_total" { print $2 }' <<<"$m1")
all0=$(hcount "$m1" hiwater_request_total_time_seconds 'request="Produce",acks="all"')
one0=$(hcount "$m1" hiwater_request_total_time_seconds 'request="Produce",acks="1"')
[ "$all0" -gt 0 ] || it_fail "the acks=all produce above was not timed"
# 40 batches of one record each with acks=all, then 10 with acks=1
seq 1 40 | hw produce --topic t1 --acks all --batch-size 1 -q >/dev/null 2>&1 || it_fail "produce acks=all"
seq 1 10 | hw produce --topic t1 --acks 1 --batch-size 1 -q >/dev/null 2>&1 || it_fail "produce acks=1"
m2=$(hw metrics "$leader") || it_fail "metrics of leader $leader"
check_histograms "$m2" >/dev/null || it_fail "histogram check failed after producing: $(check_histograms "$m2")"
prod1=$(awk '$1 == "hiwater_produce_requests_total" { print $2 }' <<<"$m2")
all1=$(hcount "$m2" hiwater_request_total_time_seconds 'request="Produce",acks="all"')
one1=$(hcount "$m2" hiwater_request_total_time_seconds 'request="Produce",acks="1"')
d_all=$((all1 - all0)) d_one=$((one1 - one0)) d_prod=$((prod1 - prod0))
[ "$d_all" -ge 40 ] || it_fail "Produce acks=all _count grew by $d_all for 40 batches"
[ "$d_one" -ge 10 ] || it_fail "Produce acks=1 _count grew by $d_one for 10 batches"
[ $((d_all + d_one)) = "$d_prod" ] ||
	it_fail "Produce histograms grew by $((d_all + d_one)), produce_requests_total by $d_prod"
# the quantile gauges are ordered p50 <= p99 <= p99.9 <= max in every series
awk '$1 ~ /^hiwater_request_total_time_quantile_seconds\{/ {
	k = $1; sub(/,quantile=.*/, "", k)
	if (k in last && $2 + 0 < last[k]) { print "quantile decreases: " $0; bad = 1 }
	last[k] = $2 + 0 } END { exit bad }' <<<"$m2" || it_fail "latency quantiles out of order"
# the quantiles are a summary of the same requests as the histogram
grep -q '^# TYPE hiwater_request_total_time_quantile_seconds summary$' <<<"$m2" || it_fail "quantiles not typed summary"
qall=$(hcount "$m2" hiwater_request_total_time_quantile_seconds 'request="Produce",acks="all"')
[ "$qall" = "$all1" ] || it_fail "summary _count $qall != histogram _count $all1 (acks=all)"
# acks=all waits for the followers: its remote time is recorded for every request
rall=$(hcount "$m2" hiwater_request_remote_time_seconds 'request="Produce",acks="all"')
[ "$rall" = "$all1" ] || it_fail "remote-time count $rall != total-time count $all1 (acks=all)"
rsum=$(awk '$1 == "hiwater_request_remote_time_seconds_sum{request=\"Produce\",acks=\"all\"}" { print $2 }' <<<"$m2")
awk -v s="$rsum" 'BEGIN { exit !(s > 0) }' || it_fail "acks=all produce spent no remote time ($rsum s)"
# consumer fetches are timed as request="Fetch"
hw consume --topic t1 --partition 0 --from-beginning --max-messages 10 --timeout 5000 >/dev/null 2>&1 ||
	it_fail "consume"
m3=$(hw metrics "$leader") || it_fail "metrics of leader $leader"
fetches=$(hcount "$m3" hiwater_request_total_time_seconds 'request="Fetch"')
[ "$fetches" -gt 0 ] || it_fail "leader timed no consumer fetches"
check_histograms "$m3" >/dev/null || it_fail "histogram check failed after consuming"
it_log "latency histograms: $nseries series, Produce acks=all +$d_all, acks=1 +$d_one (= produce requests +$d_prod)"

hw cluster kill "$follower" -q || it_fail "cluster kill"
it_wait 10 bash -c "[ \"\$($HIWATER metrics $leader --dir $IT_DIR/c 2>/dev/null | awk '\$1==\"hiwater_under_replicated_partitions\"{print \$2}')\" = 1 ]" ||
	it_fail "leader's UnderReplicatedPartitions did not become 1 after killing $follower"
[ "$(metric 0 'hiwater_controller_brokers{state="FENCED"}')" = 1 ] || it_fail "controller does not count the fenced broker"
set +e
hw metrics "$follower" >/dev/null 2>&1
rc=$?
set -e
[ "$rc" = 3 ] || it_fail "metrics of a dead node exited $rc, want 3"
it_log "metrics: under-replicated 0 -> 1 on leader $leader after killing $follower; dead node -> exit 3"
