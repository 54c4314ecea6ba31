#!/usr/bin/env bash
# it_rig_produce_consume.sh PORT — a controller, 3 brokers and the client,
# each in its own network namespace (`cluster up --rig netns --port PORT`,
# apps/hiwater/hw_rig.h), the data plane on PORT (af_packet, af_xdp: a DPDK
# PMD on the node's data0 veth; udp: kernel UDP across the namespaces, no
# NAT). A topic with RF 3 and min.insync.replicas=2: 10,000 acks=all records
# of 1 KiB in batches of 16 and 1,000 records of 16 KiB (larger than any
# Ethernet frame here: fragmented) are acknowledged at consecutive offsets,
# consumed back in order from the client namespace, and the three replicas'
# segment files are byte-identical. The bytes crossed the rig's links: the
# leader's data0 sent at least the followers' two copies, the client's
# data0 at least what it produced. `cluster down` removes every namespace
# the rig made, also with the cluster directory's record gone.
source "$(dirname "$0")/it_lib.sh"
port=${1:?port}
N=10000 NB=1000

it_rig_up "$port"
st=$(hw cluster status)
tag=$(sed -n 's/^rig=netns port=[a-z_]* tag=\([0-9a-f]*\) complete=yes .*/\1/p' <<<"$st")
[ -n "$tag" ] || it_fail "cluster status shows no complete rig: $st"
for ns in sw n0 n1 n2 n3 cl; do
	ip netns list | grep -q "^hwr$tag-$ns\b" || it_fail "namespace hwr$tag-$ns missing"
done
# a daemon's sockets live in its namespace, not in ours
ip netns exec "hwr$tag-n0" ss -Hlun | grep -q "10.99.0.1:" ||
	it_fail "the controller does not listen on 10.99.0.1 in hwr$tag-n0"
ss -Hlun | grep -q "10.99.0.1:" && it_fail "a rig socket is bound in the root namespace"
# data0 statistics as the node's namespace sees them
nsbytes() { ip netns exec "hwr$tag-$1" cat "/sys/class/net/data0/statistics/$2"; }

hw topic create t1 --partitions 1 --replication-factor 3 --config min.insync.replicas=2 -q \
	>/dev/null || it_fail "topic create t1"
hw topic create big --partitions 1 --replication-factor 3 --config min.insync.replicas=2 -q \
	>/dev/null || it_fail "topic create big"
l1=$(it_field t1 0 Leader) l2=$(it_field big 0 Leader)
[ -n "$l1" ] && [ -n "$l2" ] || it_fail "no leaders: $(hw topic describe t1; hw topic describe big)"
declare -A tx0 want
for b in 1 2 3; do tx0[$b]=$(nsbytes "n$b" tx_bytes) want[$b]=0; done
want[$l1]=$(( want[$l1] + 2 * N * 1024 ))
want[$l2]=$(( want[$l2] + 2 * NB * 16384 ))
ctx0=$(nsbytes cl tx_bytes)

# records: "<6-digit index>-" then filler up to 1 KiB / 16 KiB (newline excluded)
awk -v n=$N 'BEGIN { s = "abcdefghijklmnopqrstuvwxyz0123456789"; while (length(s) < 1017) s = s s
	for (i = 0; i < n; i++) printf "%06d-%s\n", i, substr(s, 1 + i % 36, 1017) }' >"$IT_DIR/in"
awk -v n=$NB 'BEGIN { s = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"; while (length(s) < 16377) s = s s
	for (i = 0; i < n; i++) printf "%06d-%s\n", i, substr(s, 1 + i % 26, 16377) }' >"$IT_DIR/inbig"
[ "$(head -1 "$IT_DIR/in" | tr -d '\n' | wc -c)" = 1024 ] || it_fail "record generator"
[ "$(head -1 "$IT_DIR/inbig" | tr -d '\n' | wc -c)" = 16384 ] || it_fail "big record generator"

it_log "producing $N x 1 KiB records, acks=all, batches of 16, over $port"
hw produce --topic t1 --acks all --batch-size 16 --verbose -q <"$IT_DIR/in" >"$IT_DIR/acks" ||
	it_fail "produce t1 exited $?"
seq 0 $((N - 1)) | sed 's/^/0 /' | cmp -s - "$IT_DIR/acks" ||
	it_fail "t1 acknowledged offsets are not 0..$((N - 1)) in order ($(head -3 "$IT_DIR/acks" | tr '\n' ' ')...)"
it_log "producing $NB x 16 KiB records, acks=all, batches of 3"
hw produce --topic big --acks all --batch-size 3 --verbose -q <"$IT_DIR/inbig" >"$IT_DIR/acksbig" ||
	it_fail "produce big exited $?"
seq 0 $((NB - 1)) | sed 's/^/0 /' | cmp -s - "$IT_DIR/acksbig" ||
	it_fail "big acknowledged offsets are not 0..$((NB - 1)) in order"

it_log "consuming both back from the client namespace"
hw consume --topic t1 --from-beginning --max-messages $N --print-offsets -q >"$IT_DIR/out" ||
	it_fail "consume t1 exited $?"
paste <(seq 0 $((N - 1))) "$IT_DIR/in" | cmp -s - "$IT_DIR/out" ||
	it_fail "consumed t1 records differ from produced"
hw consume --topic big --from-beginning --max-messages $NB --print-offsets -q >"$IT_DIR/outbig" ||
	it_fail "consume big exited $?"
paste <(seq 0 $((NB - 1))) "$IT_DIR/inbig" | cmp -s - "$IT_DIR/outbig" ||
	it_fail "consumed big records differ from produced"

full() { [ "$(it_field "$1" 0 HW)" = "$2" ] && [ "$(it_field "$1" 0 Isr | tr ',' '\n' | wc -l)" = 3 ]; }
it_wait 20 full t1 $N || it_fail "t1 HW/ISR not $N/3: $(hw topic describe t1)"
it_wait 20 full big $NB || it_fail "big HW/ISR not $NB/3: $(hw topic describe big)"

# Both followers fetched every byte through its leader's data0 (t1's
# leader l1, big's l2); the client sent every record through its own.
for b in 1 2 3; do
	tx=$(( $(nsbytes "n$b" tx_bytes) - tx0[$b] ))
	it_log "broker $b's data0 sent $tx bytes (leader's share of the followers' fetches: ${want[$b]})"
	[ "$tx" -ge "${want[$b]}" ] || it_fail "broker $b's data0 sent $tx bytes, its followers alone fetched ${want[$b]}"
done
ctx=$(( $(nsbytes cl tx_bytes) - ctx0 ))
[ "$ctx" -ge $(( N * 1024 + NB * 16384 )) ] || it_fail "client's data0 sent only $ctx bytes"

for b in 1 2 3; do hw cluster stop "$b" -q || it_fail "clean stop of broker $b"; done
it_wait 10 it_segs_equal t1-0 $((N * 1024)) || it_fail "t1-0 replica segment files differ"
it_wait 10 it_segs_equal big-0 $((NB * 16384)) || it_fail "big-0 replica segment files differ"

# `down` removes every namespace (and with them the veths and bridges), is
# idempotent, and finds a rig's namespaces from the directory alone (a CLI
# that died during `up` before writing anything else).
hw cluster down -q || it_fail "cluster down"
[ -z "$(ip netns list | grep "^hwr$tag-")" ] || it_fail "namespaces left after down: $(ip netns list | grep "^hwr$tag-")"
hw cluster down -q || it_fail "a second cluster down exited $?"
ip netns add "hwr$tag-n9"
mv "$IT_DIR/c/cluster.properties" "$IT_DIR/c/cluster.properties.gone"
hw cluster down -q || it_fail "cluster down without cluster.properties"
[ -z "$(ip netns list | grep "^hwr$tag-")" ] || it_fail "down without cluster.properties left $(ip netns list | grep "^hwr$tag-")"
mv "$IT_DIR/c/cluster.properties.gone" "$IT_DIR/c/cluster.properties"
it_log "PASS ($port): $N + $NB records acknowledged, consumed in order, 3 identical replicas each"
