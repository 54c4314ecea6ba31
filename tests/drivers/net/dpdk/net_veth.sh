#!/bin/sh
# net_veth.sh PEER PMD MODE — two hiwater DPDK processes over a real kernel
# link: a veth pair between two network namespaces made here (hwf<tag>-a,
# hwf<tag>-b; veths hwfa<tag>/hwfb<tag>; removed on exit, also on failure),
# each process in its namespace with one DPDK port on its veth end:
#   PMD  af_packet  --vdev=net_af_packet0,iface=<veth>
#                   (jumbo: ...,framesz=10240,blocksz=20480)
#        af_xdp     --vdev=net_af_xdp0,iface=<veth>,start_queue=0,queue_count=1
#        tap        --vdev=net_tap0,iface=hwft<tag>, the tap bridged to the veth
#                   in its namespace (bridge hwfbr<tag>)
#   MODE mtu1500    veth MTU 1500: frames up to 65000 bytes go as fragments
#        jumbo      veth MTU 9000 (hiwater MTU 9000; larger frames fragment)
#        jumbo_smallframes  veth MTU 9000, af_packet's default framesz=2048:
#                   hiwater must cap its MTU at 2048 - 88 = 1960
#        zc         MTU 1500, the echo answers with fetch responses whose records
#                   go by reference: zero-copy on MULTI_SEGS ports (af_packet,
#                   tap), one linearised mbuf per packet on af_xdp (counted)
#        loss       MTU 1500 and tc netem 'loss 3% delay 1ms reorder 25% 50%' on
#                   both veth ends (with qdisc_bypass=0 so af_packet's TX passes it);
#                   on a kernel without sch_netem (said so on stderr) an XDP
#                   program on each veth (net_drop.bpf.c) drops 3% of what it
#                   receives instead, without delay or reordering
# dpdk_wire_peer (echo in b, send in a) checks every byte and the fragment
# counters; its exit status is the test's. Needs root. No addresses are set
# on the kernel interfaces: the DPDK processes own 10.201.0.1 and .2.
set -u
peer=$(realpath "$1"); pmd=$2; mode=$3
count=${HW_NET_COUNT:-300}
tag=$(od -An -N2 -tx2 /dev/urandom | tr -d ' \n')
nsa=hwf$tag-a; nsb=hwf$tag-b; va=hwfa$tag; vb=hwfb$tag
work=$(mktemp -d "${TMPDIR:-/tmp}/hwf-net.XXXXXX")
echo_pid=
cleanup() {
	[ -n "$echo_pid" ] && kill "$echo_pid" 2>/dev/null && wait "$echo_pid" 2>/dev/null
	ip netns del "$nsa" 2>/dev/null
	ip netns del "$nsb" 2>/dev/null
	ip link del "$va" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
[ -n "${HW_NET_KEEP:-}" ] && trap - EXIT
trap 'exit 1' INT TERM
fail() { echo "net_veth: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || fail "needs root (network namespaces)"
ip netns add "$nsa" || fail "ip netns add"
ip netns add "$nsb" || fail "ip netns add"
ip link add "$va" type veth peer name "$vb" || fail "ip link add veth"
ip link set "$va" netns "$nsa" && ip link set "$vb" netns "$nsb" || fail "move veths"
link_mtu=1500
afp_extra=
case $mode in jumbo*) link_mtu=9000 ;; esac
for x in "$nsa:$va" "$nsb:$vb"; do
	ns=${x%%:*}; v=${x#*:}
	ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
	ip -n "$ns" link set lo up
	ip -n "$ns" link set "$v" mtu "$link_mtu" up || fail "veth up"
	if [ "$mode" = loss ]; then
		if ip netns exec "$ns" tc qdisc add dev "$v" root netem loss 3% delay 1ms reorder 25% 50% \
			2>"$work/tc.err"; then
			afp_extra=,qdisc_bypass=0
		else
			echo "net_veth: tc netem refused ($(cat "$work/tc.err")): this kernel has no sch_netem;" \
				"dropping 3% of received packets with XDP (net_drop.bpf.c) instead (no delay, no reordering)" >&2
			[ -f "$work/drop.o" ] || clang -O2 -target bpf -I/usr/include/"$(uname -m)"-linux-gnu \
				-c "$(dirname "$0")/net_drop.bpf.c" -o "$work/drop.o" || fail "building net_drop.bpf.c"
			ip -n "$ns" link set dev "$v" xdp obj "$work/drop.o" sec xdp || fail "XDP drop program"
		fi
	fi
	if [ "$pmd" = tap ]; then
		# a fixed bridge MAC: a bridge takes its lowest port MAC otherwise,
		# which can be the tap's — the DPDK port's own address — and would
		# then keep the frames for that MAC for itself
		br_mac=02:00:00:00:00:0$([ "$ns" = "$nsa" ] && echo 1 || echo 2)
		ip -n "$ns" link add "hwfbr$tag" type bridge && ip -n "$ns" link set "hwfbr$tag" address "$br_mac" &&
			ip -n "$ns" link set "hwfbr$tag" mtu "$link_mtu" up &&
			ip -n "$ns" link set "$v" master "hwfbr$tag" || fail "bridge"
	fi
done
expect=$link_mtu
[ "$mode" = jumbo_smallframes ] && expect=1960
vdev() {   # vdev <veth>
	case $pmd in
	af_packet)
		if [ "$mode" = jumbo ]; then echo "net_af_packet0,iface=$1,framesz=10240,blocksz=20480"
		else echo "net_af_packet0,iface=$1$afp_extra"; fi ;;
	af_xdp) echo "net_af_xdp0,iface=$1,start_queue=0,queue_count=1" ;;
	tap) echo "net_tap0,iface=hwft$tag" ;;
	*) fail "unknown PMD $pmd" ;;
	esac
}
[ "$pmd" = tap ] && expect=1500     # ethdev 22.11 caps tap at 1504 (max_rx_pktlen 1522)
ncpu=$(nproc)
eal() {    # eal <side> <veth>
	echo "--no-huge -m 512 --no-pci --no-telemetry --file-prefix=hwf$tag$1 --lcores=0@(0-$((ncpu - 1))) --vdev=$(vdev "$2")"
}
extra="loss=0"
echo_extra=
[ "$mode" = loss ] && extra="loss=1 max=30000 wait_ms=250"
if [ "$mode" = zc ]; then
	ms=1
	[ "$pmd" = af_xdp ] && ms=0     # 22.11 af_xdp does not advertise TX MULTI_SEGS
	extra="loss=0 max=4000 count=200 expect_multiseg=$ms"
	echo_extra="zc=1"
fi
ip netns exec "$nsb" "$peer" echo 2 1 "$(eal b "$vb")" $echo_extra >"$work/echo.log" 2>&1 &
echo_pid=$!
bridge_tap() {   # bridge_tap <ns> <log>: the tap appears when its process starts the port
	for i in $(seq 100); do
		# wait for the port to be started ("link UP" in the process's log),
		# not just for the interface: the PMD sets the kernel tap's MAC to
		# its own again while it starts the port, and a tap bridged with
		# the DPDK port's MAC lost every frame (the bridge kept them)
		if ip -n "$1" link show "hwft$tag" >/dev/null 2>&1 && grep -q "link UP" "$2" 2>/dev/null; then
			# the tap PMD gives the kernel tap its own DPDK MAC; a bridge
			# keeps frames for a port's MAC for itself, so the kernel side
			# gets another address before it joins the bridge
			ip -n "$1" link set "hwft$tag" address 02:00:00:00:01:0$([ "$1" = "$nsa" ] && echo 1 || echo 2) &&
				ip -n "$1" link set "hwft$tag" master "hwfbr$tag" && ip -n "$1" link set "hwft$tag" up ||
				fail "bridging the tap in $1"
			return
		fi
		sleep 0.1
	done
	fail "tap interface hwft$tag did not appear in $1"
}
[ "$pmd" = tap ] && bridge_tap "$nsb" "$work/echo.log"
if [ "$pmd" = tap ]; then
	( bridge_tap "$nsa" "$work/send.log" ) &
fi
rc=0
ip netns exec "$nsa" "$peer" send 1 2 "$(eal a "$va")" expect_mtu="$expect" count="$count" $extra \
	>"$work/send.log" 2>&1 || rc=$?
cat "$work/send.log"
kill "$echo_pid" 2>/dev/null
wait "$echo_pid" 2>/dev/null
echo_pid=
echo "---- echo (namespace $nsb):"
grep -v '^EAL: \|^TELEMETRY' "$work/echo.log" | tail -n 30
exit $rc
