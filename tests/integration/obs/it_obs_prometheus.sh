#!/usr/bin/env bash
# it_obs_prometheus.sh TRANSPORT — docs/observability.md: a cluster with
# its Prometheus (`cluster up --prometheus`), watched through Prometheus's
# HTTP query API and through `hiwater top` in a terminal (tmux) while a
# follower dies and comes back under acks=all load.
#  - the generated config and rules pass `promtool check config`; every node
#    (controller and brokers) is a target that is up; `cluster status`
#    prints the server's URL;
#  - during the bench: a finite, non-zero acks=all p99 from the histogram
#    (histogram_quantile over the buckets, and the per-broker recording
#    rule); every panel query of every dashboard in docs/dashboards/ uses
#    documented metrics and returns data;
#  - SIGKILL of a follower that leads nothing: the under-replicated
#    partitions rule rises to the topic's partition count (each has a
#    replica there), `top` shows the follower's broker down and missing
#    from each partition's ISR; after its restart the rule returns to 0
#    and `top` shows it back in every ISR; the bench's --verify is OK;
#  - `cluster down` stops the Prometheus process.
source "$(dirname "$0")/../it_lib.sh"
transport=${1:?transport}
OBS=$(cd "$(dirname "$0")" && pwd)
command -v prometheus >/dev/null || it_fail "prometheus not installed (Debian package prometheus; ci/bootstrap)"
command -v tmux >/dev/null || it_fail "tmux not installed (ci/bootstrap)"
PARTS=2

it_up "$transport" --prometheus --config replica.lag.time.max.ms=1500
PROM="http://127.0.0.1:$((IT_PORT + 800))"
D="$IT_DIR/c"
promtool check config "$D/prometheus/prometheus.yml" >"$IT_DIR/promtool.out" 2>&1 ||
	it_fail "promtool check config: $(cat "$IT_DIR/promtool.out")"
hw cluster status | grep -qx "prometheus=$PROM state=RUNNING pid=[0-9]* config=$D/prometheus/prometheus.yml log=.*" ||
	it_fail "cluster status has no prometheus line: $(hw cluster status)"

# q EXPR: the samples of an instant query, "value labels..." per line
q() { "$OBS/prom_query.py" "$PROM" "$1"; }
# q_is EXPR VALUE: the query has exactly one sample, equal to VALUE
q_is() { [ "$(q "$1" | awk '{ print $1 }')" = "$2" ]; }
it_wait 15 q_is 'count(up{job="hiwater"} == 1)' 4 ||
	it_fail "not every node is an up target: $(q 'up')"
q_is 'count(up{role="controller"} == 1)' 1 || it_fail "the controller is not scraped: $(q 'up')"

hw topic create tp --partitions $PARTS --replication-factor 3 --config min.insync.replicas=2 -q \
	>/dev/null || it_fail "topic create"
leaders=$(for p in $(seq 0 $((PARTS - 1))); do it_field tp "$p" Leader; done)
victim=$(for b in 1 2 3; do grep -qx "$b" <<<"$leaders" || echo "$b"; done | head -1)
[ -n "$victim" ] || it_fail "every broker leads a partition of tp: $(hw topic describe tp)"
it_log "leaders $(echo $leaders); follower $victim leads nothing"

# `hiwater top` in a terminal of its own: a private tmux server (-L), so no
# user session is touched; it_cleanup runs on-exit, which kills it.
TMUX_SOCK="hwp-top-$$"
printf '#!/bin/sh\ntmux -L %s kill-server 2>/dev/null\nexit 0\n' "$TMUX_SOCK" >"$IT_DIR/on-exit"
chmod +x "$IT_DIR/on-exit"
tmux -L "$TMUX_SOCK" -f /dev/null new-session -d -s top -x 200 -y 40 \
	"$HIWATER top --dir $D --interval 500ms" || it_fail "tmux new-session"
screen() { tmux -L "$TMUX_SOCK" capture-pane -p -t top; }
# top_row P: "ISR STATUS" of partition P of tp on the screen now
top_row() { screen | awk -v p="$1" '$1 == "tp" && $2 == p { print $5, $NF }'; }
# top_isr_lacks NODE / top_isr_has NODE: on every tp row of the screen
top_isr_lacks() {
	local p row
	for p in $(seq 0 $((PARTS - 1))); do
		row=$(top_row "$p")
		[ -n "$row" ] && [[ ",${row% *}," != *",$1,"* ]] && [ "${row#* }" = UNDER-REPLICATED ] || return 1
	done
}
top_isr_has() {
	local p row
	for p in $(seq 0 $((PARTS - 1))); do
		row=$(top_row "$p")
		[[ ",${row% *}," == *",$1,"* ]] && [ "${row#* }" = ok ] || return 1
	done
}
top_node_up() { screen | awk -v n="$1" -v u="$2" '$1 == n && ($2 == "broker" || $2 == "controller") && $3 == u { f = 1 } END { exit !f }'; }
it_wait 10 top_isr_has "$victim" || it_fail "top does not show tp with a full ISR:
$(screen)"

hw bench --topic tp --acks all --rate 1000 --record-size 200 --batch-size 16 --duration 16s \
	--warmup 0 --verify --no-progress --timeout 300ms >"$IT_DIR/bench.out" 2>"$IT_DIR/bench.err" &
IT_PIDS+=($!)
bench=$!
sleep 4

# acks=all p99 from the histogram, straight and through the recording rule
p99=$(q 'histogram_quantile(0.99, sum by (le) (rate(hiwater_request_total_time_seconds_bucket{request="Produce",acks="all"}[30s])))' | awk '{ print $1 }')
awk -v v="$p99" 'BEGIN { exit !(v + 0 > 0 && v + 0 < 10) }' || it_fail "acks=all p99 from the histogram: '$p99'"
rule=$(q 'node:hiwater_request_total_time_seconds:p99_produce_acks_all > 0' | wc -l)
[ "$rule" -ge 1 ] || it_fail "node:hiwater_request_total_time_seconds:p99_produce_acks_all has no positive sample: $(q 'node:hiwater_request_total_time_seconds:p99_produce_acks_all')"
it_log "acks=all p99 ${p99}s over the cluster; $rule leader(s) with a per-broker p99"

# every dashboard panel query: documented metrics, data now
"$OBS/obs_dashboards.py" --metrics-doc "$HW_SRCDIR/docs/metrics.md" --obs-doc "$HW_SRCDIR/docs/observability.md" \
	--rules "$D/prometheus/hiwater.rules.yml" --prometheus "$PROM" "$HW_SRCDIR"/docs/dashboards/*.json \
	>"$IT_DIR/dash.out" 2>&1 || it_fail "dashboard queries: $(cat "$IT_DIR/dash.out")"
it_log "$(tail -1 "$IT_DIR/dash.out")"

q_is 'cluster:hiwater_under_replicated_partitions:sum' 0 ||
	it_fail "under-replicated partitions before the kill: $(q 'cluster:hiwater_under_replicated_partitions:sum')"
hw cluster kill "$victim" -q || it_fail "cluster kill $victim"
t_kill=$(date +%s)
it_wait 15 q_is 'cluster:hiwater_under_replicated_partitions:sum' $PARTS ||
	it_fail "under-replicated partitions after killing $victim: $(q 'cluster:hiwater_under_replicated_partitions:sum')"
it_log "under-replicated partitions $PARTS after $(( $(date +%s) - t_kill )) s"
it_wait 10 top_isr_lacks "$victim" || it_fail "top does not show $victim leaving the ISR:
$(screen)"
it_wait 5 top_node_up "$victim" NO || it_fail "top does not show broker $victim down:
$(screen)"
it_log "top: broker $victim down, out of every ISR"
screen >"$IT_DIR/top-killed.txt"

hw cluster start "$victim" -q || it_fail "cluster start $victim"
it_wait 25 q_is 'cluster:hiwater_under_replicated_partitions:sum' 0 ||
	it_fail "under-replicated partitions after the restart: $(q 'cluster:hiwater_under_replicated_partitions:sum')"
it_wait 10 top_isr_has "$victim" || it_fail "top does not show $victim back in the ISR:
$(screen)"
it_log "restarted: under-replicated partitions 0, top shows $victim in every ISR"

brc=0; wait "$bench" || brc=$?
[ $brc = 0 ] || { cat "$IT_DIR/bench.out" "$IT_DIR/bench.err" >&2; it_fail "bench exited $brc"; }
grep -q "verify          OK" "$IT_DIR/bench.out" || { cat "$IT_DIR/bench.out" >&2; it_fail "verify not OK"; }
cat "$IT_DIR/top-killed.txt"

# `cluster down` stops Prometheus with the nodes
ppid=$(awk '{ print $1 }' "$D/prometheus/pid")
hw cluster down -q || it_fail "cluster down"
! kill -0 "$ppid" 2>/dev/null || it_fail "prometheus (pid $ppid) still runs after cluster down"
! curl -s -o /dev/null "$PROM/-/ready" || it_fail "$PROM still answers after cluster down"
it_log "PASS"
