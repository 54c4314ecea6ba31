#!/usr/bin/env bash
# it_restart_port.sh TRANSPORT — docs/reactors.md "Restarting a node": a
# broker restarted while its ports are still held (a SIGKILLed process's
# io_uring receives keep its UDP socket open until the kernel's
# asynchronous ring teardown has cancelled them) waits for them instead of
# exiting with "Address already in use". Here another real process holds
# the broker's control (UDP) and metrics (TCP listening) ports for 1.5
# and 3 s after the kill; `cluster start` must succeed, the log must say it waited,
# and the broker must come back into the ISR.
source "$(dirname "$0")/it_lib.sh"
transport=${1:?transport}

it_up "$transport"
hw topic create t1 --partitions 1 --replication-factor 3 -q >/dev/null || it_fail "topic create"
b=2
props="$IT_DIR/c/node-$b/server.properties"
cport=$(sed -n 's/^hiwater.control.endpoint=.*:\([0-9]*\)$/\1/p' "$props")
mport=$(sed -n 's/^hiwater.metrics.port=//p' "$props")
[ -n "$cport" ] && [ -n "$mport" ] || it_fail "no control/metrics port in $props"

hw cluster kill "$b" -q || it_fail "kill broker $b"
# the holder binds both ports, says so, and lets them go after 1.5 and 3 s
/usr/bin/python3 - "$cport" "$mport" "$IT_DIR/held" <<'PY' &
import socket, sys, time
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u.bind(("127.0.0.1", int(sys.argv[1])))
t = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
t.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
t.bind(("127.0.0.1", int(sys.argv[2])))
t.listen(1)
open(sys.argv[3], "w").close()
time.sleep(1.5)
u.close()      # the control endpoint binds first, then (later in start-up) metrics
time.sleep(1.5)
PY
holder=$!
IT_PIDS+=($holder)
it_wait 5 test -e "$IT_DIR/held" || it_fail "the port holder did not bind ports $cport/$mport"
t0=$(date +%s%N)
hw cluster start "$b" -q || it_fail "start broker $b while its ports were held"
waited=$(( ($(date +%s%N) - t0) / 1000000 ))
log="$IT_DIR/c/node-$b/hiwaterd.log"
grep -q "udp 127.0.0.1:$cport: address in use; waiting" "$log" || it_fail "no wait logged for the control port"
grep -q "udp 127.0.0.1:$cport: bound after" "$log" || it_fail "no 'bound after' for the control port"
grep -q "metrics listener: bound after" "$log" || it_fail "no 'bound after' for the metrics port"
[ "$waited" -ge 2500 ] || it_fail "started in $waited ms: the ports were not held"
wait "$holder" || true
it_log "broker $b started after $waited ms, once the held ports were released"
it_wait 20 isr_has t1 0 "$b" || it_fail "restarted broker $b not back in the ISR: $(hw topic describe t1)"
echo "probe" | hw produce --topic t1 --partition 0 --acks all --timeout 3000 -q >/dev/null ||
	it_fail "acks=all with the restarted broker"
it_log "PASS"
