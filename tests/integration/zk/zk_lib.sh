# zk_lib.sh — shared helpers of the ZooKeeper-mode tests (docs/controller-ha.md),
# sourced by tests/integration/zk/it_zk_*.sh after tests/integration/it_lib.sh and
# it_failover_lib.sh. Every test runs a real local ensemble of 3 ZooKeeper
# servers (java processes, data in the cluster directory), 3 controllers
# (nodes 0, 900, 901) and 3 brokers over kernel UDP, with short timeouts.

IT_CHECK="$(dirname "$0")/../it_logcheck.py"

# zk_up [cluster up args...]
zk_up() {
	command -v java >/dev/null || it_fail "java not found (apt-get install zookeeper, or run ci/bootstrap)"
	[ -f /usr/share/java/zookeeper.jar ] || it_fail "/usr/share/java/zookeeper.jar missing (apt-get install zookeeper)"
	it_up udp --controllers 3 --zookeeper 3 --timeout 40000 \
		--config zookeeper.session.timeout.ms="${ZK_SESSION_MS:-3000}" \
		--config broker.session.timeout.ms="${ZK_BROKER_SESSION_MS:-3000}" \
		--config broker.heartbeat.interval.ms=300 --config replica.lag.time.max.ms=5000 "$@"
}

# the active controller's id and epoch from `cluster status` (-1: none)
zk_active() { hw cluster status 2>/dev/null | sed -n 's/^active.controller=\(-\{0,1\}[0-9]*\) .*/\1/p'; }
zk_epoch() { hw cluster status 2>/dev/null | sed -n 's/.* controller.epoch=\(-\{0,1\}[0-9]*\) .*/\1/p'; }
zk_n_active() { hw cluster status 2>/dev/null | sed -n 's/.* active.controllers=\([0-9]*\) .*/\1/p'; }
# exactly one active controller, not $1 (may be empty)
zk_other_active() { local a; a=$(zk_active); [ -n "$a" ] && [ "$a" != -1 ] && [ "$a" != "${1:-x}" ] && [ "$(zk_n_active)" = 1 ]; }

# a sample of node N's /metrics: zk_metric N 'name{labels}' (0 if absent)
zk_metric() {
	local port
	port=$(hw cluster status | awk -v n="$1" '$1 == n { print $6 }')
	curl -s "http://127.0.0.1:$port/metrics" | awk -v k="$2" '$1 == k { v = $2 } END { print v + 0 }'
}
# the sum of a family's samples over the brokers 1..3
zk_broker_sum() {
	local s=0 b v
	for b in 1 2 3; do
		[ "$(hw cluster status | awk -v n=$b '$1 == n { print $4 }')" = RUNNING ] || continue
		v=$(zk_metric $b "$1")
		s=$((s + ${v%.*}))
	done
	echo $s
}

# zk_bench SECONDS: acks=all load with --verify in the background ($bench)
zk_bench() {
	hw bench --topic t1 --acks all --rate 400 --record-size 100 --batch-size 8 --duration "$1"s \
		--warmup 0 --verify --no-progress --timeout 400ms >"$IT_DIR/bench.out" 2>"$IT_DIR/bench.err" &
	bench=$!
	IT_PIDS+=($bench)
}

# one acks=all record acknowledged within the timeout
zk_ack_one() { echo "probe-$1" | hw produce --topic t1 --partition 0 --acks all --timeout 1500 -q >/dev/null 2>&1; }
