#!/usr/bin/env bash
# it_kafka_big.sh — record batches larger than one engine frame, end to end
# (docs/wire.md "Batch pieces", docs/kafka.md "Produce"), on the kernel UDP
# data plane with two reactors per broker (the listener's requests and
# answers cross reactors as local frames) and on DPDK memif links (frames
# are at most one memif buffer):
#   confluent-kafka-python with librdkafka's default batch.size and
#   message.max.bytes, acks=all, idempotent, RF 3, min.insync.replicas=2:
#   4 records of 990,000 bytes and 3,000 of 700 bytes (kafka_big.py), every
#   one acknowledged and consumed back byte-identical, in order;
#   the native CLI consumer reads all 3,004 too (it assembles pieces);
#   both followers assembled batches from pieces and dropped none;
#   after a clean stop the three replicas' segment files are byte-identical.
source "$HW_SRCDIR/tests/integration/it_lib.sh"
PY=/usr/bin/python3
K="$HW_SRCDIR/tests/integration/kafka"
N=3004

metric_sum() { # metric_sum BROKER FAMILY: the sum of its series
	hw metrics "$1" | awk -v f="$2" 'index($0, f) == 1 { s += $NF } END { printf "%d\n", s }'
}

round() {
	local transport=$1
	shift
	it_up "$transport" "$@"
	local boot leader b asm drops
	boot=$(hw cluster status | sed -n 's/^bootstrap.servers=//p')
	hw topic create t1 --partitions 1 --replication-factor 3 --config min.insync.replicas=2 -q \
		>/dev/null || it_fail "topic create"
	(cd "$IT_DIR" && timeout 90 $PY "$K/kafka_big.py" "$boot" t1) >"$IT_DIR/big.$transport" 2>&1 ||
		it_fail "$transport: kafka_big.py: $(cat "$IT_DIR/big.$transport")"
	grep -q '^OK$' "$IT_DIR/big.$transport" || it_fail "$transport: $(cat "$IT_DIR/big.$transport")"
	it_log "$transport: $(grep -E '^(produced|consumed)' "$IT_DIR/big.$transport" | tr '\n' ' ')"
	timeout 40 "$HIWATER" consume --dir "$IT_DIR/c" --topic t1 --from-beginning --max-messages $N \
		>"$IT_DIR/cli.$transport" 2>"$IT_DIR/clierr" || it_fail "$transport: hiwater consume: $(tail -3 "$IT_DIR/clierr")"
	it_log "$transport: hiwater consume read $N records ($(wc -c <"$IT_DIR/cli.$transport") bytes)"
	full() { [ "$(it_field t1 0 HW)" = $N ] && [ "$(it_field t1 0 Isr | tr ',' '\n' | wc -l)" = 3 ]; }
	it_wait 20 full || it_fail "$transport: HW/ISR not $N/3: $(hw topic describe t1)"
	leader=$(it_field t1 0 Leader)
	for b in 1 2 3; do
		[ "$b" = "$leader" ] && continue
		asm=$(metric_sum "$b" hiwater_partition_batches_assembled_total)
		drops=$(metric_sum "$b" hiwater_partition_batch_pieces_dropped_total)
		it_log "$transport: follower $b assembled $asm batches from pieces, dropped $drops pieces"
		[ "$asm" -ge 4 ] || it_fail "$transport: follower $b assembled $asm batches (>= 4 expected)"
		[ "$drops" = 0 ] || it_fail "$transport: follower $b dropped $drops pieces on a lossless link"
	done
	for b in 1 2 3; do hw cluster stop "$b" -q || it_fail "clean stop of broker $b"; done
	it_wait 10 it_segs_equal t1-0 6000000 || it_fail "$transport: t1-0 replica segment files differ"
	it_log "$transport: the three replicas' segments are byte-identical"
	hw cluster down --purge -q || it_fail "cluster down"
}

round udp --reactors 2
round dpdk
it_log "OK"
