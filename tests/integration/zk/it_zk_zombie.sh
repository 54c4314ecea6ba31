#!/usr/bin/env bash
# it_zk_zombie.sh — docs/controller-ha.md "A zombie controller": SIGSTOP the
# active controller past its ZooKeeper session (2 s here; the brokers'
# session is 6 s, so the zombie has nobody to fence when it wakes) under
# acks=all --verify load. A standby takes over with a higher epoch. On
# SIGCONT the zombie may still believe it is active for a moment: any
# partition-state re-push it sends then carries the old epoch and every
# broker drops it (hiwater_broker_stale_controller_messages_total
# {message="PartitionState"}). Whether it sends one is a race between its
# reactor's overdue resync and its ZooKeeper thread learning of the expiry;
# both orders are correct, and the test asserts what each must show: no
# broker follows the zombie (controller switches unchanged, epochs stay the
# new one), and either the brokers dropped its pushes or it stepped down
# first. A topic creation it is asked for is refused (its writes need the
# session it lost), it steps down and stands by; exactly one controller is
# active.
source "$(dirname "$0")/../it_lib.sh"
source "$(dirname "$0")/../it_failover_lib.sh"
source "$(dirname "$0")/zk_lib.sh"

ZK_SESSION_MS=2000 ZK_BROKER_SESSION_MS=6000 zk_up --config hiwater.controller.resync.interval.ms=300
it_wait 10 zk_other_active || it_fail "no active controller: $(hw cluster status)"
z=$(zk_active); ep0=$(zk_epoch)
hw topic create t1 --partitions 1 --replication-factor 3 --config min.insync.replicas=2 -q >/dev/null ||
	it_fail "topic create"
it_wait 5 zk_ack_one warmup || it_fail "no acks=all before the pause"
stale0=$(zk_broker_sum 'hiwater_broker_stale_controller_messages_total{message="PartitionState"}')
zport=$(hw cluster status | awk -v n="$z" '$1 == n { split($5, a, ":"); print a[2] }')
it_log "active controller $z (epoch $ep0, control port $zport); stale pushes dropped so far: $stale0"

zk_bench 16
it_load_flowing t1 0
hw cluster pause "$z" -q || it_fail "pause $z"
it_wait 10 zk_other_active "$z" || it_fail "no standby took over from the paused $z: $(hw cluster status)"
a=$(zk_active); ep1=$(zk_epoch)
[ "$ep1" -gt "$ep0" ] || it_fail "controller epoch $ep0 -> $ep1 did not grow"
it_log "controller $a active with epoch $ep1 while $z is stopped"
# a request waiting in the zombie's socket when it wakes: a topic creation
printf 'cluster.id=%s\nhiwater.cluster.secret.file=%s\n' "$(sed -n 's/^cluster.id=//p' "$IT_DIR/c/cluster.properties")" \
	"$IT_DIR/c/cluster.secret" >"$IT_DIR/client.properties"
[ -f "$IT_DIR/c/cluster.secret" ] || it_fail "no cluster secret at $IT_DIR/c/cluster.secret"
follow_new() { local b; for b in 1 2 3; do [ "$(zk_metric $b hiwater_broker_controller_epoch)" = "$ep1" ] || return 1; done; }
it_wait 10 follow_new || it_fail "the brokers do not all follow controller epoch $ep1 while $z is stopped"
sw0=$(zk_broker_sum hiwater_broker_controller_switches_total)
"$HIWATER" topic create t-zombie --partitions 1 --replication-factor 3 --bootstrap-server "127.0.0.1:$zport" \
	--command-config "$IT_DIR/client.properties" >"$IT_DIR/zombie-create.out" 2>&1 &
zc=$!; IT_PIDS+=($zc)
sleep 1
hw cluster resume "$z" -q || it_fail "resume $z"
stepped() { grep -q "controller $z steps down" "$IT_DIR/c/node-$z/hiwaterd.log"; }
it_wait 10 stepped || it_fail "the zombie $z did not step down"
it_log "zombie: $(grep "controller $z steps down" "$IT_DIR/c/node-$z/hiwaterd.log" | tail -1 | sed 's/.*zk: //')"
zrc=0; wait "$zc" || zrc=$?
it_log "topic creation sent to the zombie: exit $zrc: $(tail -1 "$IT_DIR/zombie-create.out")"
# the request reached the zombie and was answered (not a client-side error)
if grep -q -e '--command-config\|--bootstrap-server needs\|cannot read' "$IT_DIR/zombie-create.out"; then
	it_fail "the topic creation never reached the zombie: $(cat "$IT_DIR/zombie-create.out")"
fi
zw=$(curl -s "http://127.0.0.1:$(hw cluster status | awk -v n="$z" '$1 == n { print $6 }')/metrics" |
	grep -E '^hiwater_controller_zookeeper_events_total\{event="WRITES_FAILED' | awk '$2 > 0' | tr '\n' ' ')
it_log "the zombie's refused metadata writes: ${zw:-none}"
if [ "$zrc" = 0 ] && grep -q "Created topic" "$IT_DIR/zombie-create.out" &&
	! grep -q "t-zombie.*created" "$IT_DIR/c/node-$a/hiwaterd.log"; then
	it_fail "the zombie $z created a topic"
fi
stale_pushes() {
	[ "$(zk_broker_sum 'hiwater_broker_stale_controller_messages_total{message="PartitionState"}')" -gt "$stale0" ]
}
if it_wait 3 stale_pushes; then
	it_log "the zombie pushed before it learnt of the expiry; stale pushes dropped by the brokers:" \
		"$(zk_broker_sum 'hiwater_broker_stale_controller_messages_total{message="PartitionState"}')"
else
	# the other order: its ZooKeeper thread saw the expiry first, so it must
	# have stepped down without a push (its own log says why)
	grep -q "controller $z steps down (epoch $ep0)" "$IT_DIR/c/node-$z/hiwaterd.log" ||
		it_fail "no broker dropped a push of the zombie, and it did not step down from epoch $ep0 either"
	it_log "the zombie learnt of the expiry before its first push: nothing stale was sent"
fi
sw1=$(zk_broker_sum hiwater_broker_controller_switches_total)
[ "$sw1" = "$sw0" ] || it_fail "a broker switched controller after the zombie resumed ($sw0 -> $sw1 switches)"
[ "$(zk_metric "$z" hiwater_controller_active)" = 0 ] || it_fail "the zombie $z still reports itself active"
[ "$(zk_active)" = "$a" ] && [ "$(zk_n_active)" = 1 ] || it_fail "not exactly one active controller: $(hw cluster status)"
for b in 1 2 3; do
	e=$(zk_metric $b hiwater_broker_controller_epoch)
	[ "$e" = "$ep1" ] || it_fail "broker $b follows controller epoch $e, not $ep1"
done
it_wait 5 zk_ack_one after || it_fail "no acks=all after the zombie stepped down"

rc=0; wait "$bench" || rc=$?
it_bench_check "$IT_DIR/bench.out" "$IT_DIR/bench.err" $rc
it_final_check t1 0
# both controllers' /metrics lint clean with promtool and carry the
# ZooKeeper families (the other promtool tests run no ZooKeeper)
for n in "$a" "$z"; do
	port=$(hw cluster status | awk -v n="$n" '$1 == n { print $6 }')
	curl -s "http://127.0.0.1:$port/metrics" >"$IT_DIR/metrics-$n.txt" || it_fail "metrics of controller $n"
	lint=$(promtool check metrics <"$IT_DIR/metrics-$n.txt" 2>&1) || it_fail "promtool on controller $n: $lint"
	[ -z "$lint" ] || it_fail "promtool on controller $n: $lint"
	for f in hiwater_controller_zookeeper_session_state hiwater_controller_zookeeper_events_total \
		hiwater_controller_zookeeper_request_latency_seconds; do
		grep -q "^# TYPE $f " "$IT_DIR/metrics-$n.txt" || it_fail "controller $n serves no $f"
	done
done
it_log "controllers $a and $z: /metrics promtool-clean, ZooKeeper families present"
it_log "PASS"
