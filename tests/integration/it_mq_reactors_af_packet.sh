#!/usr/bin/env bash
# it_mq_reactors_af_packet.sh — brokers with two reactors on two-queue ports
# that do not pair queues (drivers/net/README.md "Steering"), across network
# namespaces:
#   - a switch namespace with two bridges: control (kernel UDP, 10.202.0.0/24)
#     and data (the DPDK ports, no kernel addresses; DPDK IPs 10.202.1.x);
#   - the controller (node 0) and brokers 1..3, each in its own namespace
#     with a control veth and a data veth on the bridges; every broker runs
#     hiwater.reactor.lcores of 2 CPUs on net_af_packet qpairs=2, so the
#     kernel's fanout hash, not the owning reactor, picks each frame's RX
#     queue; brokers learn each other's DPDK routes from the metadata
#     (registered dpdk:ip=..,udp=BASE,queues=2);
#   - a client namespace: `hiwater bench --producers 2 --verify` (1 KiB x 16
#     records, acks=all, RF 3, min ISR 2; messages above the port MTU go as
#     hiwater fragments, steered like any frame; its own
#     af_packet port, qpairs=2: one queue per producer) through
#     --bootstrap-server and --command-config only.
# Checks: bench exit 0, 0 lost / duplicated / misplaced / corrupt, every
# acknowledged record verified; HW and ISR complete on every partition;
# on every broker and reactor no STALE_SENDER (nor REPLAYED) drop, hand-offs
# counted (some frames arrived on the other reactor's queue) and none
# dropped. Every namespace, veth and bridge is removed on any exit.
set -euo pipefail
: "${HW_BUILDDIR:?run through meson test (HW_BUILDDIR unset)}"
HIWATER="$HW_BUILDDIR/apps/hiwater/hiwater"
HIWATERD="$HW_BUILDDIR/apps/hiwaterd/hiwaterd"
IT_NAME=$(basename "$0" .sh)
DIR=$(mktemp -d "/tmp/hw-it-mq-XXXXXX")
T=$(printf '%04x' $(( $$ & 0xffff )))
P="hwm$T"                  # every namespace: hwm<tag>sw, hwm<tag>n<id>, hwm<tag>cl
BROKERS=3
CTL_PORT=19090
METRICS_PORT=19100
CLUSTER=4242
RATE=${HW_IT_RATE:-2000}
SECS=${HW_IT_SECS:-4}
PIDS=()

log() { echo "[$IT_NAME $(date +%T)] $*"; }
fail() {
	echo "FAIL [$IT_NAME]: $*" >&2
	for f in "$DIR"/n*/hiwaterd.log; do
		[ -f "$f" ] || continue
		echo "---- tail $f" >&2
		tail -n 20 "$f" >&2
	done
	exit 1
}
namespaces() { ip netns list | awk -v p="$P" 'index($1, p) == 1 { print $1 }'; }
teardown() {
	local p n i
	# newest first (the brokers, then the controller), one at a time, as
	# `cluster down` does: a broker's controlled shutdown needs the
	# controller, and with it gone every broker waits out its timeout
	for ((i = ${#PIDS[@]} - 1; i >= 0; i--)); do
		p=${PIDS[$i]}
		[ -n "$p" ] || continue
		kill "$p" 2>/dev/null || true
		for n in $(seq 50); do it_running "$p" || break; sleep 0.1; done
		kill -9 "$p" 2>/dev/null || true
	done
	for n in $(namespaces); do ip netns del "$n" 2>/dev/null || true; done
}
cleanup() {
	local rc=$?
	teardown
	rm -rf "$DIR"
	exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM
# a watchdog in its own session: namespaces and daemons go even if this
# script is SIGKILLed (meson's timeout escalates)
# (the daemons' pids are in $DIR/pids)
setsid bash -c 'while kill -0 "$1" 2>/dev/null; do sleep 1; done
	[ -f "$3/pids" ] && kill -KILL $(cat "$3/pids") 2>/dev/null
	for n in $(ip netns list | awk -v p="$2" '"'"'index($1, p) == 1 { print $1 }'"'"'); do ip netns del "$n"; done
	rm -rf "$3"' it-mq-watchdog "$$" "$P" "$DIR" </dev/null >/dev/null 2>&1 &

ctl_ip() { [ "$1" = cl ] && echo 10.202.0.200 || echo "10.202.0.$(( $1 + 1 ))"; }
dpdk_ip() { [ "$1" = cl ] && echo 10.202.1.200 || echo "10.202.1.$1"; }

# ---- the rig ----------------------------------------------------------------
SW="${P}sw"
ip netns add "$SW"
ip -n "$SW" link set lo up
ip -n "$SW" link add name brc type bridge forward_delay 0
ip -n "$SW" link add name brd type bridge forward_delay 0
ip -n "$SW" link set dev brc up
ip -n "$SW" link set dev brd up
# plug ID QUEUES: namespace hwm<tag><n<id>|cl> with ctl0 on brc and data0 on brd
plug() {
	local id=$1 q=$2 ns se
	[ "$id" = cl ] && ns="${P}cl" || ns="${P}n$id"
	ip netns add "$ns"
	ip -n "$ns" link set lo up
	ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
	se="${P}c$id"
	ip -n "$SW" link add "$se" type veth peer name ctl0 netns "$ns"
	ip -n "$SW" link set dev "$se" master brc up
	ip -n "$ns" addr add "$(ctl_ip "$id")/24" dev ctl0
	ip -n "$ns" link set ctl0 up
	se="${P}d$id"
	ip -n "$SW" link add name "$se" numtxqueues "$q" numrxqueues "$q" type veth \
		peer name data0 numtxqueues "$q" numrxqueues "$q" netns "$ns"
	ip -n "$SW" link set dev "$se" master brd up
	ip -n "$ns" link set data0 up
}
plug 0 1
for b in $(seq $BROKERS); do plug "$b" 2; done
plug cl 2
log "namespaces: $(namespaces | tr '\n' ' ')"

# ---- the nodes --------------------------------------------------------------
eal() { # NAME QPAIRS
	echo "--no-huge -m 512 --no-pci --no-telemetry --file-prefix=$1 --log-level=pmd.net.af_packet:error" \
		"--vdev=net_af_packet0,iface=data0,qpairs=$2"
}
conf() { # ID
	local id=$1
	mkdir -p "$DIR/n$id/data"
	{
		echo "node.id=$id"
		echo "process.roles=$([ "$id" = 0 ] && echo controller || echo broker)"
		echo "cluster.id=$CLUSTER"
		echo "log.dirs=$DIR/n$id/data"
		echo "controller.quorum.voters=0@$(ctl_ip 0):$CTL_PORT"
		echo "hiwater.control.listen=udp:$(ctl_ip "$id"):$CTL_PORT"
		echo "hiwater.metrics.listen=$(ctl_ip "$id")"
		echo "hiwater.metrics.port=$METRICS_PORT"
		echo "hiwater.cluster.secret.file=$DIR/cluster.secret"
		if [ "$id" != 0 ]; then
			echo "hiwater.transport=dpdk"
			echo "dpdk.eal.args=$(eal "${P}n$id" 2)"
			echo "hiwater.dpdk.ip=$(dpdk_ip "$id")"
			echo "hiwater.reactor.lcores=0,1"
		fi
	} >"$DIR/n$id/server.properties"
}
start() { # ID
	conf "$1"
	ip netns exec "${P}n$1" "$HIWATERD" --config "$DIR/n$1/server.properties" \
		>>"$DIR/n$1/hiwaterd.log" 2>&1 </dev/null &
	PIDS+=($!)
	echo $! >>"$DIR/pids"
}
# the cluster secret (docs/security.md), shared by the nodes and the client
(umask 077; od -An -tx1 -N32 /dev/urandom | tr -d ' \n' >"$DIR/cluster.secret")
for id in $(seq 0 $BROKERS); do start "$id"; done

# the client: one queue per producer; a one-queue port for the other commands
for q in 1 2; do
	{
		echo "hiwater.transport=dpdk"
		echo "dpdk.eal.args=$(eal "${P}cl$q" "$q")"
		echo "hiwater.dpdk.ip=$(dpdk_ip cl)"
		echo "cluster.id=$CLUSTER"
		echo "hiwater.cluster.secret.file=$DIR/cluster.secret"
	} >"$DIR/client$q.properties"
done
cl() { # QUEUES CMD...: the CLI in the client namespace
	local q=$1
	shift
	ip netns exec "${P}cl" "$HIWATER" "$@" --bootstrap-server "$(ctl_ip 0):$CTL_PORT" \
		--command-config "$DIR/client$q.properties"
}

wait_for() { # SECONDS CMD...
	local deadline=$(( $(date +%s) + $1 ))
	shift
	until "$@"; do
		[ "$(date +%s)" -lt "$deadline" ] || return 1
		sleep 0.3
	done
}
brokers_up() {
	local out
	out=$(cl 1 topic create probe$RANDOM --partitions 1 --replication-factor $BROKERS -q 2>&1) && return 0
	echo "$out" >"$DIR/probe.err"
	return 1
}
wait_for 30 brokers_up || fail "no topic with RF $BROKERS after 30 s: $(cat "$DIR/probe.err" 2>/dev/null)"
log "controller and $BROKERS brokers up (2 reactors each, af_packet qpairs=2)"

cl 1 topic create tb --partitions 4 --replication-factor $BROKERS --config min.insync.replicas=2 -q \
	>/dev/null || fail "topic create"

# ---- the bench ----------------------------------------------------------------
log "bench: 2 producers, $RATE records/s for $SECS s, acks=all, --verify"
set +e
cl 2 bench --topic tb --acks all --producers 2 --rate "$RATE" --duration "${SECS}s" \
	--verify --json "$DIR/bench.json" >"$DIR/bench.out" 2>&1
brc=$?
set -e
cat "$DIR/bench.out"
[ $brc = 0 ] || fail "bench exited $brc"
python3 - "$DIR/bench.json" <<'EOF' || fail "bench JSON: see above"
import json, sys
r = json.load(open(sys.argv[1]))[0]
per, v = r["ackedRecordsPerProducer"], r.get("verify")
bad = []
if len(per) != 2 or min(per) <= 0:
    bad.append(f"per-producer acknowledged {per}")
if r["failedRecords"]:
    bad.append(f"failedRecords {r['failedRecords']}")
if not v or v["checked"] != r["ackedRecords"]:
    bad.append(f"verify {v} vs acked {r['ackedRecords']}")
else:
    bad += [f"verify {k} = {v[k]}" for k in ("lost", "duplicated", "misplaced", "corrupt") if v[k]]
print("per producer", per, "acked", r["ackedRecords"], "verify", v)
for b in bad:
    print("bench JSON:", b, file=sys.stderr)
sys.exit(1 if bad else 0)
EOF

# ---- replication and the counters ------------------------------------------
field() { # PARTITION NAME
	{ cl 1 topic describe tb 2>/dev/null || true; } |
		awk -v p="$1" -v k="$2:" '$0 ~ ("Partition: " p "\t") {
			for (i = 1; i <= NF; i++) if ($i == k) { print $(i + 1); exit } }'
}
complete() {
	local p hw leo
	for p in 0 1 2 3; do
		hw=$(field $p HW); leo=$(field $p LEO)
		[ -n "$hw" ] && [ "$hw" = "$leo" ] && [ "$hw" -gt 0 ] || return 1
		[ "$(field $p Isr | tr ',' '\n' | wc -l)" = $BROKERS ] || return 1
	done
}
wait_for 20 complete || fail "HW/ISR not complete: $(cl 1 topic describe tb 2>&1)"
log "every partition: HW = LEO > 0, ISR of $BROKERS"

metric_sum() { # PAGE PREFIX: sum of the series whose name starts with PREFIX
	awk -v k="$2" 'index($1, k) == 1 { s += $2 } END { printf "%d\n", s }' <<<"$1"
}
steered=0
for b in $(seq $BROKERS); do
	page=$(ip netns exec "${P}cl" "$HIWATER" metrics "$(ctl_ip "$b"):$METRICS_PORT" 2>/dev/null) ||
		fail "metrics of broker $b"
	# both reactors' data planes ("data", "data-r1") must report both reasons
	series=$(grep -cE '^hiwater_transport_drops_total\{plane="data(-r1)?",reason="(STALE_SENDER|REPLAYED)"\}' <<<"$page" || true)
	[ "$series" = 4 ] || fail "broker $b: $series STALE_SENDER/REPLAYED series for the data planes, want 4"
	stale=$(awk '/^hiwater_transport_drops_total\{plane="data[^"]*",reason="(STALE_SENDER|REPLAYED)"\}/ { s += $2 } END { printf "%d\n", s }' <<<"$page")
	out=$(metric_sum "$page" 'hiwater_reactor_shard_dpdk_rx_steered_total{reactor="0",what="out"')
	out1=$(metric_sum "$page" 'hiwater_reactor_shard_dpdk_rx_steered_total{reactor="1",what="out"')
	in=$(awk '/^hiwater_reactor_shard_dpdk_rx_steered_total\{.*what="in"\}/ { s += $2 } END { printf "%d\n", s }' <<<"$page")
	grep -q '^hiwater_reactor_shard_dpdk_rx_steer_dropped_total{reactor="1"} ' <<<"$page" ||
		fail "broker $b: no hiwater_reactor_shard_dpdk_rx_steer_dropped_total for reactor 1"
	dropped=$(awk '/^hiwater_reactor_shard_dpdk_rx_steer_dropped_total\{/ { s += $2 } END { printf "%d\n", s }' <<<"$page")
	rx0=$(metric_sum "$page" 'hiwater_reactor_shard_dpdk_rx_packets_total{reactor="0"')
	rx1=$(metric_sum "$page" 'hiwater_reactor_shard_dpdk_rx_packets_total{reactor="1"')
	log "broker $b: STALE_SENDER+REPLAYED drops $stale; packets received by reactor 0/1: $rx0/$rx1;" \
		"handed over by reactor 0: $out, by reactor 1: $out1, received by hand-off: $in, hand-offs dropped: $dropped"
	[ "$stale" = 0 ] || fail "broker $b dropped $stale frames as STALE_SENDER/REPLAYED: $(grep -E 'reason="(STALE_SENDER|REPLAYED)"' <<<"$page")"
	[ "$dropped" = 0 ] || fail "broker $b dropped $dropped hand-offs"
	[ "$rx0" -gt 0 ] && [ "$rx1" -gt 0 ] || fail "broker $b: a reactor received nothing on its queue"
	steered=$(( steered + out + out1 ))
done
[ "$steered" -gt 0 ] || fail "no frame was handed to another reactor on any broker (the fanout hash put every flow on its owner's queue?)"
log "PASS: 0 lost, no STALE_SENDER drop, $steered frames steered in software across the brokers"
