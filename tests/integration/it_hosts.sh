#!/usr/bin/env bash
# it_hosts.sh TRANSPORT — brokers on separate "hosts", no NAT: the
# controller, three brokers and a client each in a network namespace of their
# own with a veth on a bridge (itself in a namespace of its own), private
# addresses 10.203.<s>.0/24 inside those namespaces only. Each daemon gets a
# hand-written server.properties (no `hiwater cluster`), listening on the
# wildcard or on its own address and advertising what peers must use
# (apps/hiwaterd/README.md, "Addresses across hosts"). From the client
# namespace, using ONLY --bootstrap-server and --command-config: a topic with
# RF 3 and min.insync.replicas=2, 10,000 acks=all records of 1 KiB produced
# in batches of 16 and consumed back in order at their offsets, a
# two-producer bench verified; the three
# replicas' segment files are byte-identical; a broker's metrics endpoint
# answers on its non-loopback listen address.
#   TRANSPORT udp: the data plane on kernel UDP (it_hosts_udp.sh).
#   TRANSPORT af_packet: the data plane over DPDK net_af_packet on the same
#   veths, brokers and the client with no hiwater.neighbour.* routes: each
#   learns the others' from their registered dpdk:ip=..,udp=.. through the
#   only port; frames above the veth's MTU go as hiwater fragments.
source "$(dirname "$0")/it_lib.sh"
transport=${1:?transport: udp or af_packet}
case $transport in udp | af_packet) ;; *) it_fail "transport '$transport': udp or af_packet" ;; esac
N=10000
HIWATERD="$HW_BUILDDIR/apps/hiwaterd/hiwaterd"
command -v ip >/dev/null || it_fail "iproute2 (ip) is required"
[ "$(id -u)" = 0 ] || it_fail "needs root (network namespaces)"

# Names: prefix hwa + 4 hex digits of our pid (parallel runs do not collide);
# subnet 10.203.<s>.0/24 from the same digits.
tag=$(printf '%04x' $(( $$ & 0xffff )))
s=$(( 0x$tag % 250 ))
NET=10.203.$s
SW=hwa${tag}sw
ns_of() { [ "$1" = cl ] && echo "hwa${tag}cl" || echo "hwa${tag}n$1"; }
ip_of() { [ "$1" = cl ] && echo "$NET.200" || echo "$NET.$(( $1 + 1 ))"; }
dpdk_ip_of() { [ "$1" = cl ] && echo "$NET.210" || echo "$NET.$(( $1 + 100 ))"; }
# af_packet on eth0 next to the kernel's control traffic: the EAL of node $1
eal_of() { echo "--no-huge -m $2 --no-pci --no-telemetry --file-prefix=hwa${tag}$1 --vdev=net_af_packet0,iface=eth0 --lcores=0@(0-$(( $(nproc) - 1 )))"; }
NODES="0 1 2 3 cl"

# Teardown (it_lib runs it on any exit, and its watchdog if we are killed):
# the daemons by pid, then every namespace (their veths and the bridge go
# with them).
ALL_NS="$SW $(for i in $NODES; do printf '%s ' "$(ns_of "$i")"; done)"
cat >"$IT_DIR/on-exit" <<EOF
#!/usr/bin/env bash
for f in "$IT_DIR"/pid-*; do [ -f "\$f" ] && kill -KILL "\$(cat "\$f")" 2>/dev/null; done
for n in $ALL_NS; do ip netns del "\$n" 2>/dev/null; done
rm -rf /var/run/dpdk/hwa${tag}* # EAL runtime dirs of killed DPDK processes
exit 0
EOF
chmod +x "$IT_DIR/on-exit"

it_log "namespaces $SW, $(ns_of 0) .. $(ns_of cl) on $NET.0/24"
ip netns add "$SW" || it_fail "ip netns add $SW"
ip -n "$SW" link add "hwa${tag}br" type bridge || it_fail "bridge"
ip -n "$SW" link set "hwa${tag}br" up
ip -n "$SW" link set lo up
for i in $NODES; do
	ns=$(ns_of "$i")
	ip netns add "$ns" || it_fail "ip netns add $ns"
	# both ends made inside the switch namespace, one moved to the node
	ip -n "$SW" link add "hwa${tag}p$i" type veth peer name eth0 netns "$ns" || it_fail "veth $i"
	ip -n "$SW" link set "hwa${tag}p$i" master "hwa${tag}br" up
	ip -n "$ns" link set lo up
	ip -n "$ns" addr add "$(ip_of "$i")/24" dev eth0
	ip -n "$ns" link set eth0 up
done
# no NAT anywhere: the nodes reach each other on their own addresses only
for i in $NODES; do
	! ip netns exec "$(ns_of "$i")" iptables-save -t nat 2>/dev/null | grep -q -- '-j \(DNAT\|SNAT\|MASQUERADE\)' ||
		it_fail "NAT rules in $(ns_of "$i")"
done

CID=$(( (RANDOM << 15 | RANDOM) + 1 ))
CTL=$(ip_of 0):9090
# Every way of giving the addresses: the controller on the wildcard with the
# voter's port; broker 1 wildcard listen (advertised: its address toward the
# controller); broker 2 on its own address; broker 3 wildcard listen with
# explicit advertised endpoints.
node_conf() {
	local i=$1 me
	me=$(ip_of "$i")
	cat <<EOF
node.id=$i
controller.quorum.voters=0@$CTL
cluster.id=$CID
log.dirs=$IT_DIR/c/node-$i/data
hiwater.metrics.port=9400
hiwater.metrics.listen=$me
broker.heartbeat.interval.ms=500
broker.session.timeout.ms=3000
EOF
	if [ "$transport" = udp ] || [ "$i" = 0 ]; then
		echo "hiwater.transport=udp"
	else
		echo "hiwater.transport=dpdk"
		echo "hiwater.dpdk.ip=$(dpdk_ip_of "$i")"
		echo "dpdk.eal.args=$(eal_of "b$i" 512)"
	fi
	case $i in
	0) echo "process.roles=controller"; echo "hiwater.control.listen=udp:0.0.0.0:9090" ;;
	1) echo "process.roles=broker"; echo "hiwater.control.listen=udp:0.0.0.0:9090"
	   echo "hiwater.data.listen=udp:0.0.0.0:9190" ;;
	2) echo "process.roles=broker"; echo "hiwater.control.listen=udp:$me:9090"
	   echo "hiwater.data.listen=udp:$me:9190" ;;
	3) echo "process.roles=broker"; echo "hiwater.control.listen=udp:0.0.0.0:9090"
	   echo "hiwater.data.listen=udp:0.0.0.0:9190"
	   echo "hiwater.control.advertised=udp:$me:9090"; echo "hiwater.data.advertised=udp:$me:0" ;;
	esac
}
# the cluster secret every node and the client share (docs/security.md)
mkdir -p "$IT_DIR/c"
(umask 077; od -An -tx1 -N32 /dev/urandom | tr -d ' \n' >"$IT_DIR/c/cluster.secret")
for i in 0 1 2 3; do
	mkdir -p "$IT_DIR/c/node-$i"
	{ node_conf "$i"; echo "hiwater.cluster.secret.file=$IT_DIR/c/cluster.secret"; } \
		>"$IT_DIR/c/node-$i/server.properties"
	ip netns exec "$(ns_of "$i")" "$HIWATERD" --config "$IT_DIR/c/node-$i/server.properties" \
		>"$IT_DIR/c/node-$i/hiwaterd.log" 2>&1 &
	echo $! >"$IT_DIR/pid-$i"
	disown $!   # killed by on-exit; no job report
	[ "$i" != 0 ] || it_wait 10 grep -qs "node 0 ready" "$IT_DIR/c/node-0/hiwaterd.log" ||
		it_fail "the controller is not ready"
done
for i in 1 2 3; do
	it_wait 20 grep -qs "node $i ready" "$IT_DIR/c/node-$i/hiwaterd.log" || it_fail "broker $i is not ready"
	# registered (and printed) the address peers reach it at, not loopback
	data="udp:$(ip_of "$i"):9190"
	[ "$transport" = udp ] || data="dpdk:ip=$(dpdk_ip_of "$i"),udp=9092,queues=1"
	grep -q "node $i ready (roles broker, control udp:$(ip_of "$i"):9090, data $data," \
		"$IT_DIR/c/node-$i/hiwaterd.log" ||
		it_fail "broker $i advertises $(grep "node $i ready" "$IT_DIR/c/node-$i/hiwaterd.log")"
done

# The client: nothing but a bootstrap address and client properties.
cat >"$IT_DIR/client.properties" <<EOF
# client of the namespaced cluster (apps/hiwater/README.md, --command-config)
cluster.id=$CID
hiwater.control.listen=udp:$(ip_of cl):0
hiwater.cluster.secret.file=$IT_DIR/c/cluster.secret
EOF
if [ "$transport" = udp ]; then
	echo "hiwater.transport=udp" >>"$IT_DIR/client.properties"
else
	printf 'hiwater.transport=dpdk\nhiwater.dpdk.ip=%s\ndpdk.eal.args=%s\n' "$(dpdk_ip_of cl)" \
		"$(eal_of cl 256)" >>"$IT_DIR/client.properties"
fi
cli() {
	local boot=$1
	shift
	ip netns exec "$(ns_of cl)" "$HIWATER" "$@" --bootstrap-server "$boot" \
		--command-config "$IT_DIR/client.properties"
}
cli "$CTL" topic create t --partitions 1 --replication-factor 3 --config min.insync.replicas=2 -q \
	>/dev/null || it_fail "topic create through the controller"
# a bad command-config names file, line and key, exit 2
printf 'cluster.id=%s\nhiwater.dpdk.ip=10.203.0.999\n' "$CID" >"$IT_DIR/bad.properties"
rc=0; err=$(ip netns exec "$(ns_of cl)" "$HIWATER" topic describe --bootstrap-server "$CTL" \
	--command-config "$IT_DIR/bad.properties" 2>&1) || rc=$?
[ $rc = 2 ] && [[ "$err" == *"bad.properties:2: bad value "*" for key 'hiwater.dpdk.ip'"* ]] ||
	it_fail "bad command-config: exit $rc, '$err'"

it_log "producing $N acks=all records of 1 KiB in batches of 16 (bootstrap: broker 2)"
awk -v n=$N 'BEGIN { pad = sprintf("%1011s", ""); gsub(/ /, "x", pad);
	for (i = 0; i < n; i++) printf "record-%06d%s\n", i, pad }' >"$IT_DIR/in"
[ "$(head -1 "$IT_DIR/in" | tr -d '\n' | wc -c)" = 1024 ] || it_fail "records are not 1 KiB"
t0=$(date +%s%N)
cli "$(ip_of 2):9090" produce --topic t --acks all --batch-size 16 --verbose -q <"$IT_DIR/in" \
	>"$IT_DIR/acks" || it_fail "produce exited $?"
it_log "produced in $(( ($(date +%s%N) - t0) / 1000000 )) ms"
seq 0 $((N - 1)) | sed 's/^/0 /' | cmp -s - "$IT_DIR/acks" ||
	it_fail "acknowledged offsets are not 0..$((N - 1)) in order ($(head -3 "$IT_DIR/acks" | tr '\n' ' ')...)"

it_log "consuming them back (bootstrap: broker 3)"
cli "$(ip_of 3):9090" consume --topic t --from-beginning --max-messages $N --print-offsets -q \
	>"$IT_DIR/out" || it_fail "consume exited $?"
paste <(seq 0 $((N - 1))) "$IT_DIR/in" | cmp -s - "$IT_DIR/out" ||
	it_fail "consumed records differ from produced ($(wc -l <"$IT_DIR/out") lines)"

hw_full() {
	local d
	d=$(cli "$(ip_of 1):9090" topic describe t 2>/dev/null) || return 1
	[[ "$d" == *"HW: $N"* ]] && [[ "$d" == *"Isr: "?,?,?* ]]
}
it_wait 20 hw_full || it_fail "HW/ISR not $N/3: $(cli "$CTL" topic describe t 2>&1)"

# bench with two producers (a udp socket and node id each, on the client's
# address): every acknowledged record read back exactly once
cli "$CTL" topic create b --partitions 2 --replication-factor 3 --config min.insync.replicas=2 -q \
	>/dev/null || it_fail "topic create b"
producers=2
[ "$transport" = udp ] || producers=1 # one queue pair on an af_packet port
cli "$(ip_of 1):9090" bench --topic b --acks all --producers $producers --rate 2000 --duration 2s --warmup 0 \
	--verify --no-progress -q >"$IT_DIR/bench.out" 2>&1 || { cat "$IT_DIR/bench.out" >&2; it_fail "bench exited $?"; }
grep -q "verify          OK" "$IT_DIR/bench.out" || { cat "$IT_DIR/bench.out" >&2; it_fail "bench verify"; }

# the brokers replicated over each other's advertised data addresses
for i in 1 2 3; do
	for j in 1 2 3; do
		[ "$i" = "$j" ] && continue
		route="udp:$(ip_of "$j"):9190"
		[ "$transport" = udp ] || route="dpdk:port=0,ip=$(dpdk_ip_of "$j"),udp=9092"
		grep -q "data route to broker $j: $route" "$IT_DIR/c/node-$i/hiwaterd.log" ||
			it_fail "broker $i has no route to broker $j's advertised address"
	done
done

# metrics on a non-loopback listen address, fetched from the client namespace
m=$(ip netns exec "$(ns_of cl)" "$HIWATER" metrics "$(ip_of 2):9400" --grep hiwater_partition_high_watermark) ||
	it_fail "metrics of broker 2 at $(ip_of 2):9400"
[[ "$m" == *"$N"* ]] || it_fail "broker 2's metrics do not show HW $N: $m"
# every node's, found through Metadata (control hosts) and the common port
m=$(cli "$CTL" metrics --metrics-port 9400 --grep hiwater_metrics_scrapes_total) ||
	it_fail "metrics through --bootstrap-server"
[ "$(awk '{ print $1 }' <<<"$m" | sort -u | tr '\n' ' ')" = "node=0 node=1 node=2 node=3 " ] ||
	it_fail "metrics through --bootstrap-server: $m"
! ip netns exec "$(ns_of 2)" "$HIWATER" metrics 127.0.0.1:9400 -T 500 >/dev/null 2>&1 ||
	it_fail "broker 2's metrics also answer on loopback (listen address ignored)"

# clean stop (flush, close segments), then the replicas must be identical
for i in 1 2 3; do kill -TERM "$(cat "$IT_DIR/pid-$i")"; done
for i in 1 2 3; do
	it_wait 20 eval '! it_running "$(cat "$IT_DIR/pid-$i")"' ||
		it_fail "broker $i did not stop on SIGTERM"
done
ref=""
for i in 1 2 3; do
	d="$IT_DIR/c/node-$i/data/t-0"
	[ -n "$(ls "$d"/*.log 2>/dev/null)" ] || it_fail "broker $i has no segments in $d"
	bytes=$(cat $(ls "$d"/*.log | sort) | wc -c)
	[ "$bytes" -gt $((N * 1024)) ] || it_fail "broker $i: only $bytes bytes of segments"
	sum=$(cat $(ls "$d"/*.log | sort) | sha256sum)
	[ -n "$ref" ] || ref=$sum
	[ "$sum" = "$ref" ] || it_fail "broker $i's segments differ from broker 1's"
done
it_log "PASS: $N records of 1 KiB over $transport across 5 namespaces without NAT, 3 identical replicas ($bytes bytes)"
