#!/usr/bin/env bash
# it_rack.sh — docs/racks.md on real processes: 6 brokers in racks a,b,c
# (cluster up --racks, shown by cluster status), RF 3,
# min.insync.replicas=2. Every partition's replicas are in 3 racks;
# --replica-assignment is taken as given and checked; a consumer in a
# follower's rack (consume
# --client-rack) is sent there by the leader (RackAwareReplicaSelector) and
# reads every record exactly once from that follower (its
# consumer_fetches_as_follower moves, the leader answers only the redirect),
# never above that follower's own HW (the third replica paused holds it
# back while the follower's log grows past it),
# and so does a Kafka client (confluent-kafka-python, client.rack) through
# the Kafka listener (Fetch v11 rack_id / preferred_read_replica);
# with both brokers of rack c killed every partition keeps an ISR of 2 and
# takes acks=all writes (bench --verify: nothing lost), and a rack-c
# consumer reading from the rack-c follower finishes from the leader.
source "$HW_SRCDIR/tests/integration/it_lib.sh"
SEL=org.apache.kafka.common.replica.RackAwareReplicaSelector
it_up udp --brokers 6 --racks a,b,c --config replica.selector.class=$SEL \
	--config broker.session.timeout.ms=6000 --config broker.heartbeat.interval.ms=500 \
	--config offsets.topic.num.partitions=1
hw topic create t --partitions 6 --replication-factor 3 --config min.insync.replicas=2 -q >/dev/null ||
	it_fail "topic create"
hw topic describe t --json >"$IT_DIR/d.json" || it_fail "describe --json"
python3 - "$IT_DIR/d.json" <<'PY' || it_fail "placement: $(cat "$IT_DIR/d.json")"
import json, sys
d = json.load(open(sys.argv[1]))
racks = {b["id"]: b["rack"] for b in d["brokers"] if b["rack"]}
assert racks == {1: "a", 2: "b", 3: "c", 4: "a", 5: "b", 6: "c"}, racks
parts = d["partitions"]
assert len(parts) == 6
for p in parts:
    assert sorted(p["replica_racks"]) == ["a", "b", "c"], p
leaders = sorted(p["leader"] for p in parts)
assert leaders == [1, 2, 3, 4, 5, 6], leaders   # leaders balanced
PY
it_log "every partition in racks a,b,c: $(hw topic describe t | awk -F'\t' 'NR>1 {print $5, $12}' | tr '\n' ';')"
[ "$(hw cluster status | awk '$1 ~ /^[1-6]$/ { printf "%s%s", $1, $8 }')" = 1a2b3c4a5b6c ] ||
	it_fail "cluster status racks: $(hw cluster status)"
# explicit assignments (Kafka's --replica-assignment), checked by the controller
hw topic create m --replica-assignment 4:5:6,5:6:4 -q >/dev/null || it_fail "create --replica-assignment"
[ "$(it_field m 1 Replicas)" = 5,6,4 ] && [ "$(it_field m 1 Leader)" = 5 ] ||
	it_fail "assignment not taken: $(hw topic describe m)"
rc=0; hw topic create bad --replica-assignment 1:1 -q 2>"$IT_DIR/bad.err" || rc=$?
[ $rc = 4 ] && grep -q INVALID_REPLICA_ASSIGNMENT "$IT_DIR/bad.err" || it_fail "1:1 accepted ($rc): $(cat "$IT_DIR/bad.err")"

# ---- fetch from the closest replica
leader=$(it_field t 0 Leader)
reps=$(it_field t 0 Replicas)
follower=""
for r in ${reps//,/ }; do [ "$r" = "$leader" ] || { follower=$r; break; }; done
rack_of() { echo "abc" | cut -c$(( ($1 - 1) % 3 + 1 )); }   # cluster up --racks a,b,c
frack=$(rack_of "$follower")
seq 1 500 | hw produce --topic t --partition 0 --acks all -q || it_fail "produce"
# series FAMILY{topic="t",partition="0"} of broker $1 (families named in full: metric_users checks them)
metric() { hw metrics "$1" | awk -v m="$2{topic=\"t\",partition=\"0\"}" '$1 == m { print $2 }'; }
l0=$(metric "$leader" hiwater_partition_consumer_fetches_total)
hw consume --topic t --partition 0 --from-beginning --max-messages 500 --print-offsets --client-rack "$frack" \
	--timeout 5000 >"$IT_DIR/c.out" || it_fail "consume --client-rack $frack"
[ "$(cut -f1 "$IT_DIR/c.out" | sort -n | uniq | wc -l)" = 500 ] || it_fail "not 500 distinct offsets"
[ "$(wc -l <"$IT_DIR/c.out")" = 500 ] || it_fail "duplicates: $(wc -l <"$IT_DIR/c.out") lines"
[ "$(cut -f2 "$IT_DIR/c.out" | sort -n | uniq | wc -l)" = 500 ] || it_fail "records seen twice or lost"
ff=$(metric "$follower" hiwater_partition_consumer_fetches_as_follower_total)
lp=$(metric "$leader" hiwater_partition_preferred_read_replica_answers_total)
l1=$(metric "$leader" hiwater_partition_consumer_fetches_total)
[ "${ff:-0}" -ge 1 ] || it_fail "follower $follower served no consumer fetch"
[ "${lp:-0}" -ge 1 ] || it_fail "leader $leader sent no preferred read replica"
[ $(( l1 - l0 )) -le 2 ] || it_fail "leader $leader served $(( l1 - l0 )) consumer fetches (only the redirect expected)"
it_log "rack $frack consumer: follower $follower served $ff fetches, leader $leader $(( l1 - l0 )) (redirects $lp)"

# ---- never above the follower's HW: the third replica paused (SIGSTOP;
# it stays in the ISR for broker.session.timeout.ms = 6 s, until the
# controller fences it; these checks take ~2 s) holds the HW while the
# rack follower replicates acks=1 records past it; the consumer there gets
# only what is below that follower's HW, and the rest once the HW moves
third=""
for r in ${reps//,/ }; do [ "$r" = "$leader" ] || [ "$r" = "$follower" ] || third=$r; done
hw cluster pause "$third" -q || it_fail "pause $third"
seq 501 800 | hw produce --topic t --partition 0 --acks 1 -q || it_fail "produce acks=1"
f_leo() { [ "$(metric "$follower" hiwater_partition_log_end_offset)" = 800 ]; }
it_wait 10 f_leo || it_fail "follower $follower did not replicate to 800: LEO $(metric "$follower" hiwater_partition_log_end_offset)"
fhw=$(metric "$follower" hiwater_partition_high_watermark)
[ "$fhw" = 500 ] || it_fail "follower $follower HW $fhw, expected 500 (held by the paused $third)"
rc=0
hw consume --topic t --partition 0 --offset 490 --max-messages 310 --print-offsets --client-rack "$frack" \
	--timeout 1500 >"$IT_DIR/h.out" || rc=$?
[ $rc = 5 ] || it_fail "consume past the follower's HW exited $rc (want 5: fewer than asked)"
[ "$(wc -l <"$IT_DIR/h.out")" = 10 ] && [ "$(tail -1 "$IT_DIR/h.out" | cut -f1)" = 499 ] ||
	it_fail "read past the follower's HW 500: $(tail -2 "$IT_DIR/h.out" | tr '\n' ' ')"
# still the situation checked: the paused replica in the ISR, the HW at 500
[ "$(it_field t 0 HW)" = 500 ] && [[ ",$(it_field t 0 Isr)," == *",$third,"* ]] ||
	it_fail "the paused $third left the ISR too early: $(hw topic describe t | sed -n 2p)"
hw cluster resume "$third" -q || it_fail "resume $third"
f_hw() { [ "$(metric "$follower" hiwater_partition_high_watermark)" = 800 ]; }
it_wait 10 f_hw || it_fail "follower $follower HW stays $(metric "$follower" hiwater_partition_high_watermark)"
hw consume --topic t --partition 0 --offset 500 --max-messages 300 --print-offsets --client-rack "$frack" \
	--timeout 3000 >"$IT_DIR/h2.out" || it_fail "consume 500..799 from the follower"
[ "$(cut -f1 "$IT_DIR/h2.out" | sort -n | uniq | wc -l)" = 300 ] || it_fail "500..799 not read once each"
it_log "$third paused: follower $follower LEO 800 HW $fhw, consumer got offsets up to 499 only; resumed: 500..799"

# ---- the same through the Kafka listener: librdkafka with client.rack
hw topic create k --partitions 1 --replication-factor 3 -q >/dev/null || it_fail "topic create k"
kl=$(it_field k 0 Leader)
kf=""
for r in $(it_field k 0 Replicas | tr , ' '); do [ "$r" = "$kl" ] || { kf=$r; break; }; done
kmetric() { hw metrics "$1" | awk -v m="$2{topic=\"k\",partition=\"0\"}" '$1 == m { print $2 }'; }
boot=$(hw cluster status | sed -n 's/^bootstrap.servers=//p')
timeout 60 /usr/bin/python3 "$HW_SRCDIR/tests/integration/rack/rack_kafka.py" "$boot" k 300 "$(rack_of "$kf")" >"$IT_DIR/k.out" 2>&1 ||
	it_fail "librdkafka client.rack=$(rack_of "$kf"): $(cat "$IT_DIR/k.out")"
grep -q '^OK 300$' "$IT_DIR/k.out" || it_fail "librdkafka: $(cat "$IT_DIR/k.out")"
kff=$(kmetric "$kf" hiwater_partition_consumer_fetches_as_follower_total)
klp=$(kmetric "$kl" hiwater_partition_preferred_read_replica_answers_total)
[ "${kff:-0}" -ge 1 ] && [ "${klp:-0}" -ge 1 ] ||
	it_fail "librdkafka did not read from follower $kf (follower fetches ${kff:-0}, leader redirects ${klp:-0})"
it_log "librdkafka client.rack=$(rack_of "$kf"): 300 records, follower $kf served $kff fetches, leader $kl redirected $klp"

# ---- lose the rack of that follower (c): ISR 2 everywhere, acks=all still
# taken; a rack-c consumer reading from follower $follower meanwhile goes
# back to the leader once its read replica is silent and out of the ISR
hw consume --topic t --partition 0 --offset 800 --max-messages 200 --print-offsets --client-rack "$frack" \
	--timeout 20000 >"$IT_DIR/f.out" 2>"$IT_DIR/f.err" &
cpid=$!
IT_PIDS+=("$cpid")
sleep 0.5
for b in 1 2 3 4 5 6; do [ "$(rack_of $b)" != "$frack" ] || hw cluster kill "$b" -q; done
isr2() {
	hw topic describe t --json >"$IT_DIR/d2.json" 2>/dev/null || return 1
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
gone = {int(x) for x in sys.argv[2].split()}
sys.exit(0 if all(len(p["isr"]) == 2 and not set(p["isr"]) & gone and p["leader"] not in gone | {-1}
                  for p in d["partitions"]) else 1)' "$IT_DIR/d2.json" "$(for b in 1 2 3 4 5 6; do [ "$(rack_of $b)" != "$frack" ] || echo $b; done)"
}
it_wait 15 isr2 || it_fail "not every ISR is 2 without rack $frack: $(hw topic describe t)"
seq 1001 1200 | hw produce --topic t --partition 0 --acks all -q || it_fail "acks=all without rack $frack"
wait "$cpid" || it_fail "the rack-$frack consumer did not finish from the leader: $(tail -3 "$IT_DIR/f.err")"
[ "$(cut -f1 "$IT_DIR/f.out" | sort -n | uniq | wc -l)" = 200 ] && [ "$(wc -l <"$IT_DIR/f.out")" = 200 ] &&
	[ "$(head -1 "$IT_DIR/f.out")" = "$(printf '800\t1001')" ] && [ "$(tail -1 "$IT_DIR/f.out")" = "$(printf '999\t1200')" ] ||
	it_fail "rack-$frack consumer after the rack loss: $(wc -l <"$IT_DIR/f.out") lines, $(head -1 "$IT_DIR/f.out") .. $(tail -1 "$IT_DIR/f.out")"
served=$(( $(metric "$leader" hiwater_partition_consumer_fetches_total) - $(metric "$leader" hiwater_partition_preferred_read_replica_answers_total) ))
[ "$served" -ge 1 ] || it_fail "leader $leader served no consumer fetch after the rack loss"
it_log "the rack-$frack consumer read 800..999 once each, from leader $leader ($served fetches served) after its read replica died"
hw bench --topic t --acks all --rate 2000 --duration 2s --verify >"$IT_DIR/b.out" 2>&1 ||
	it_fail "bench --verify without rack $frack: $(tail -5 "$IT_DIR/b.out")"
grep -Eq "lost[=: ]+0\b|0 lost" "$IT_DIR/b.out" || it_fail "bench --verify: $(cat "$IT_DIR/b.out")"
it_log "rack $frack down: $(grep -Ei 'lost|verify' "$IT_DIR/b.out" | head -2 | tr '\n' ' ')"
