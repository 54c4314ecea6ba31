#!/usr/bin/env bash
# it_zk_fence.sh TEST_BINARY — runs test_zk_fence.c (the ZooKeeper store's
# versioned fencing) against a real standalone ZooKeeper server started
# here as a plain java process (Debian's jars), data in the test directory.
source "$(dirname "$0")/../it_lib.sh"
bin=${1:?test binary}
command -v java >/dev/null || it_fail "java not found (apt-get install zookeeper, or run ci/bootstrap)"
port=$((IT_PORT + 601))
mkdir -p "$IT_DIR/zk/data"
cat >"$IT_DIR/zk/zoo.cfg" <<CFG
tickTime=500
dataDir=$IT_DIR/zk/data
clientPort=$port
clientPortAddress=127.0.0.1
admin.enableServer=false
4lw.commands.whitelist=srvr
CFG
java -Xmx96m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Dzookeeper.log.dir="$IT_DIR/zk" \
	-cp /etc/zookeeper/conf:/usr/share/java/zookeeper.jar org.apache.zookeeper.server.quorum.QuorumPeerMain \
	"$IT_DIR/zk/zoo.cfg" >"$IT_DIR/zk/out.log" 2>&1 &
IT_PIDS+=($!)
serving() { { exec 3<>"/dev/tcp/127.0.0.1/$port"; } 2>/dev/null || return 1; echo srvr >&3; grep -q "Mode:" <&3; }
it_wait 30 serving || { cat "$IT_DIR/zk/out.log" >&2; it_fail "ZooKeeper on port $port did not start"; }
HW_ZK_CONNECT="127.0.0.1:$port" "$bin" || it_fail "test_zk_fence"
it_log "PASS"
