# it_lib.sh — shared setup for the integration tests on real processes.
#
# Each test gets its own cluster directory and base port, and a trap that
# takes the whole cluster down (and removes its files) on ANY exit, so a
# failing or interrupted test leaves no process behind. DPDK runs with
# --no-huge and file prefixes unique to the cluster (see hw_cluster.c).
set -euo pipefail

: "${HW_BUILDDIR:?run through meson test (HW_BUILDDIR unset)}"
HIWATER="$HW_BUILDDIR/apps/hiwater/hiwater"
export HIWATER_BIN_DIR="$HW_BUILDDIR/apps/hiwaterd"
IT_NAME=$(basename "$0" .sh)
IT_DIR=$(mktemp -d "/tmp/hw-it-$IT_NAME-XXXXXX")
# A cluster uses ports base..base+999 (control, data, metrics; the CLI
# client's data and control ports at base+200/+300; the Kafka listeners,
# ZooKeeper servers, extra controllers and Prometheus above base+500: the
# port plan in apps/hiwater/hw_cluster.h). Each build's
# integration pass has its own 20000-port range (HW_IT_PORT_BASE, default
# 2000), below the kernel's ephemeral ports (32768-60999) so no unrelated
# connect() or bind(0) can hold one; inside it, pick a base none of whose
# ports is bound now (other clusters on a shared machine), bases 1000 apart.
it_free_port() {
	local base i used
	used=$(ss -Hluntp 2>/dev/null | awk '{ n = split($5, a, ":"); print a[n] }')
	for i in $(shuf -i 0-18 -n 19); do
		base=$(( ${HW_IT_PORT_BASE:-2000} + i * 1000 ))
		if ! awk -v b=$base '$1 >= b && $1 < b + 1000 { f = 1 } END { exit !f }' <<<"$used"; then
			echo $base
			return 0
		fi
	done
	echo "it_lib: no free port range in ${HW_IT_PORT_BASE:-2000}..+19000" >&2
	return 1
}
IT_PORT=$(it_free_port)
IT_PIDS=()

it_log() { echo "[$IT_NAME $(date +%T)] $*"; }
it_fail() {
	echo "FAIL [$IT_NAME]: $*" >&2
	for f in "$IT_DIR"/c/node-*/hiwaterd.log; do
		[ -f "$f" ] || continue
		echo "---- tail $f" >&2
		tail -n 15 "$f" >&2
		# a sanitizer's report starts far above the tail: print its head too
		if grep -q "ERROR: AddressSanitizer\|runtime error:" "$f"; then
			echo "---- sanitizer report in $f" >&2
			grep -m1 -A40 "ERROR: AddressSanitizer\|runtime error:" "$f" >&2
		fi
	done
	# again last: CI often shows only the end of a failed test's output
	echo "FAIL [$IT_NAME]: $*" >&2
	exit 1
}

it_cleanup() {
	local rc=$?
	for p in "${IT_PIDS[@]:-}"; do
		[ -n "$p" ] && kill "$p" 2>/dev/null || true
	done
	"$HIWATER" cluster down --dir "$IT_DIR/c" --purge -q --timeout 5000 >/dev/null 2>&1 || true
	# a test's own teardown (processes, network namespaces), also run by the watchdog
	[ ! -x "$IT_DIR/on-exit" ] || "$IT_DIR/on-exit" || true
	rm -rf "$IT_DIR"
	exit $rc
}
trap it_cleanup EXIT
trap 'exit 130' INT TERM
# The daemons run in their own sessions, so a test killed outright (meson's
# timeout escalates to SIGKILL) would leave them behind: a watchdog in its
# own session takes the cluster down once this script is gone, whatever
# ended it. Its descriptors go to /dev/null so meson does not wait for it.
setsid bash -c 'while kill -0 "$1" 2>/dev/null; do sleep 1; done
	"$2" cluster down --dir "$3/c" --purge -q --timeout 3000
	[ ! -x "$3/on-exit" ] || "$3/on-exit"
	rm -rf "$3"' it-watchdog "$$" "$HIWATER" "$IT_DIR" </dev/null >/dev/null 2>&1 &

hw() { "$HIWATER" "$@" --dir "$IT_DIR/c"; }

# it_up TRANSPORT [cluster up args...]; $HW_IT_UP_ARGS (word-split) is
# appended: tests/integration/zk runs failover scenarios in ZooKeeper mode with it
# (--controllers 3 --zookeeper 3 ...). Another cluster on a shared machine
# can bind a port of our range between it_free_port and our brokers' bind:
# then take everything down and retry on a fresh range (IT_PORT changes).
it_up() {
	local transport=$1 try
	shift
	for try in 1 2 3; do
		if "$HIWATER" cluster up --dir "$IT_DIR/c" --brokers 3 --transport "$transport" \
			--base-port "$IT_PORT" -q "$@" ${HW_IT_UP_ARGS:-}; then
			return 0
		fi
		grep -qsi "Address already in use" "$IT_DIR"/c/node-*/hiwaterd.log "$IT_DIR"/c/prometheus/prometheus.log || break
		"$HIWATER" cluster down --dir "$IT_DIR/c" --purge -q >/dev/null 2>&1 || true
		IT_PORT=$(it_free_port)
		it_log "a port of the range was taken meanwhile: retry $try on base $IT_PORT"
	done
	it_fail "cluster up ($transport)"
}

# it_rig_up PORT [cluster up args...]: a `--rig netns` cluster (every node
# and the client in its own network namespace, apps/hiwater/hw_rig.h) of a
# controller and 3 brokers, data plane on PORT (af_packet|af_xdp|tap|udp).
# Namespaces are private (hwr<tag>-*): no port of the host is used;
# `cluster down` in it_cleanup and the watchdog removes them.
it_rig_up() {
	local port=$1
	shift
	"$HIWATER" cluster up --dir "$IT_DIR/c" --brokers 3 --rig netns --port "$port" -q "$@" ||
		it_fail "cluster up --rig netns --port $port"
}

# it_segs_equal PART MIN_BYTES: the .log segment files of partition
# directory PART (e.g. t1-0) on brokers 1..3 are byte-identical and hold
# more than MIN_BYTES (stop the brokers cleanly first: the log keeps its
# tail in memory until then).
it_segs_equal() {
	local part=$1 min=$2 ref="" n=0 b d sum
	for b in 1 2 3; do
		d=$(find "$IT_DIR/c/node-$b/data" -type d -name "$part" | head -1)
		[ -n "$d" ] || return 1
		[ -n "$(ls "$d"/*.log 2>/dev/null)" ] || return 1
		[ "$(cat "$d"/*.log | wc -c)" -gt "$min" ] || return 1
		sum=$(cat $(ls "$d"/*.log | sort) | sha256sum)
		[ -n "$ref" ] || ref=$sum
		[ "$sum" = "$ref" ] || return 1
		n=$((n + 1))
	done
	[ $n = 3 ]
}

# it_wait SECONDS COMMAND...: retry the command every 0.2 s until it succeeds;
# 1 if it still fails after SECONDS (the caller says what it waited for).
# Wait on a condition like this instead of sleeping a fixed time: a sleep
# is either too short on a loaded machine or too long everywhere else.
it_wait() {
	local deadline=$(( $(date +%s%N) + $1 * 1000000000 ))
	shift
	until "$@"; do
		[ "$(date +%s%N)" -lt "$deadline" ] || return 1
		sleep 0.2
	done
}
# it_until SECONDS WHAT COMMAND...: it_wait, failing the test with
# "WHAT not reached after SECONDS s" (and the cluster's logs) on timeout.
it_until() {
	local secs=$1 what=$2
	shift 2
	it_wait "$secs" "$@" || it_fail "$what not reached after $secs s"
}

# describe fields of partition P of topic T: it_field T P NAME with NAME one
# of Leader, Replicas, Isr, Elr, LastKnownElr, LeaderEpoch, HW, LEO (from
# `topic describe --json`: id lists comma-separated, -1 for no leader or an
# offset the leader did not report; empty if the topic or partition is not
# there or the controller did not answer).
it_field() {
	local key
	case "$3" in
	Leader) key=leader ;; Replicas) key=replicas ;; Isr) key=isr ;; Elr) key=elr ;;
	LastKnownElr) key=last_known_elr ;; LeaderEpoch) key=leader_epoch ;;
	HW) key=hw ;; LEO) key=leo ;;
	*) echo "it_field: unknown field '$3'" >&2; return 2 ;;
	esac
	{ hw topic describe "$1" --json 2>/dev/null || true; } |
		jq -r --arg t "$1" --argjson p "$2" --arg k "$key" '
			.partitions[] | select(.topic == $t and .partition == $p) | .[$k]
			| if type == "array" then map(tostring) | join(",") else tostring end' 2>/dev/null || true
}

# isr_has T P NODE / isr_lacks T P NODE
isr_has() { [[ ",$(it_field "$1" "$2" Isr)," == *",$3,"* ]]; }
isr_lacks() { local isr; isr=$(it_field "$1" "$2" Isr); [ -n "$isr" ] && [[ ",$isr," != *",$3,"* ]]; }
# it_hw_past T P N: partition P of topic T has a HW above N (records are
# being acknowledged: the load a scenario needs is flowing)
it_hw_past() { local h; h=$(it_field "$1" "$2" HW); [ -n "$h" ] && [ "$h" != -1 ] && [ "$h" -gt "$3" ]; }
# it_load_flowing T P [N]: wait (at most 15 s) until the HW of T-P has moved
# N records (default 200) past where it is now: the background load a
# scenario starts before its fault is being acknowledged.
it_load_flowing() {
	local h0
	h0=$(it_field "$1" "$2" HW)
	[ -n "$h0" ] && [ "$h0" != -1 ] || h0=0
	it_until 15 "load acknowledged on $1-$2 (HW past $((h0 + ${3:-200})))" it_hw_past "$1" "$2" $((h0 + ${3:-200}))
}
# it_running PID: the process exists and has not exited (a zombie has: it
# only waits for its parent, or init, to reap it)
it_running() { local st; st=$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null) && [ -n "$st" ] && [ "$st" != Z ]; }
