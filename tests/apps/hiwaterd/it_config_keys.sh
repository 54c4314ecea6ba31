#!/usr/bin/env bash
# it_config_keys.sh HIWATERD HIWATER — every configuration key gets a bad
# value and the program must refuse it: exit 2, naming the file, the line
# and the key (docs/security.md "Configuration").
#
# The keys come from the schemas the programs print (`hiwaterd
# --print-config`, `hiwater --print-client-config`), so a key added to a
# schema is covered without touching this test. For each key:
#   int32/int64  a wrong type ("x1"), and the values just outside the
#                printed range ([lo,...,hi] -> lo-1, hi+1; not the special
#                value "S or [...]"); the message must quote the range
#   bool / enum  a word that is not one of the values
#   string       with a validator: the bad example for its description
#                (the table below; an unknown description fails the test,
#                so a new validator needs its example here); without one
#                (a path, EAL arguments): listed as a free string
# Then every rule across keys is broken once (rule_case below; a new rule
# without a case fails the test).
# Nothing starts: hiwaterd runs with --print-config (a value wrongly
# accepted prints the configuration and exits 0, which fails the test).
set -euo pipefail
hiwaterd=${1:?hiwaterd binary}
hiwater=${2:?hiwater binary}
dir=$(mktemp -d /tmp/hw-cfgkeys-XXXXXX)
trap 'rm -rf "$dir"' EXIT

# A bad example for each STRING validator the schemas print.
bad_for_valid() {
	case $1 in
	"broker, controller or broker,controller") echo observer ;;
	"ID@HOST:PORT[,ID@HOST:PORT...] (distinct ids)") echo "0@127.0.0.1" ;;
	"HOST:PORT[,HOST:PORT...]") echo "zk1" ;;
	"PLAINTEXT://HOST:PORT") echo "SSL://127.0.0.1:9092" ;;
	"udp:HOST:PORT (HOST an IPv4 address)") echo "udp:host.example:1" ;;
	"udp:HOST:PORT or dpdk:port=...") echo "tcp:10.0.0.1:5" ;;
	"an IPv4 address") echo "10.77.0.300" ;;
	"an IPv4 address or localhost") echo "everywhere" ;;
	"a vdev name or a port id") echo "a,b" ;;
	"a list of 1 to 8 CPUs 0..1023, e.g. 1 or 1,2") echo "1,x" ;;
	"LEVEL[,MODULE=LEVEL...] (LEVEL: error, warn, info, debug, trace)") echo "loud" ;;
	"at most 63 bytes") printf 'r%.0s' $(seq 64) ;;
	"empty or org.apache.kafka.common.replica.RackAwareReplicaSelector") echo org.apache.kafka.common.replica.RackAwareReplicaSelectorX ;;
	*) return 1 ;;
	esac
}

fails=0 checked=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }

# expect_refused WHAT KEY VALUE WANT_TEXT CMD... : the file is $dir/f.properties
# with KEY=VALUE on line $line; CMD must exit 2 naming f.properties:$line and
# 'KEY' (and WANT_TEXT when not empty).
expect_refused() {
	local what=$1 key=$2 value=$3 want=$4 rc=0
	shift 4
	{ printf '%s' "$base"; printf '%s=%s\n' "$key" "$value"; } >"$dir/f.properties"
	timeout 20 "$@" >"$dir/out" 2>"$dir/err" || rc=$?
	checked=$((checked + 1))
	local msg
	msg=$(head -c 400 "$dir/err")
	if [ $rc != 2 ]; then
		fail "$what: $key=$value: exit $rc, expected 2 ($msg)"
	elif ! grep -qF "f.properties:$line: " "$dir/err" || ! grep -qF "'$key'" "$dir/err"; then
		fail "$what: $key=$value: message does not name f.properties:$line and '$key': $msg"
	elif [ -n "$want" ] && ! grep -qF -- "$want" "$dir/err"; then
		fail "$what: $key=$value: message does not say '$want': $msg"
	fi
}

# check_schema WHAT PRINT_CMD -- RUN_CMD... : every key printed by PRINT_CMD.
check_schema() {
	local what=$1 schema free=""
	shift
	local print=()
	while [ "$1" != -- ]; do print+=("$1"); shift; done
	shift
	schema=$("${print[@]}") || { fail "$what: ${print[*]} exited $?"; return; }
	# the stable format: 7 tab-separated fields per key line
	local odd
	odd=$(printf '%s\n' "$schema" | awk -F'\t' '!/^#/ && NF != 7 { print NR": "$0 }')
	[ -z "$odd" ] || fail "$what: lines without 7 tab-separated fields: $odd"
	local nkeys=0
	while IFS=$'\t' read -r name type def valid unit imp doc; do
		case $name in '#'*|'') continue ;; esac
		nkeys=$((nkeys + 1))
		local key=${name//<id>/7}
		case $type in
		int32|int64)
			expect_refused "$what" "$key" x1 "expected $type" "$@"
			local r=${valid#* or } lo="" hi=""
			case $r in
			"["*",...,"*"]") lo=${r#[}; lo=${lo%%,*}; hi=${r##*,}; hi=${hi%]} ;;
			"["*",...]") lo=${r#[}; lo=${lo%%,*} ;;
			"[...,"*"]") hi=${r##*,}; hi=${hi%]} ;;
			"["*"]") lo=${r#[}; lo=${lo%]}; hi=$lo ;;
			esac
			local special=""
			[ "$r" != "$valid" ] && special=${valid%% or *}
			if [ -n "$lo" ] && [ "$((lo - 1))" != "$special" ]; then
				expect_refused "$what" "$key" "$((lo - 1))" "expected $valid" "$@"
			elif [ -n "$lo" ]; then
				expect_refused "$what" "$key" "$((lo - 2))" "expected $valid" "$@"
			fi
			if [ -n "$hi" ] && [ "$((hi + 1))" != "$special" ]; then
				expect_refused "$what" "$key" "$((hi + 1))" "expected $valid" "$@"
			fi
			if [ -z "$lo$hi" ] && [ "$valid" != - ]; then
				fail "$what: $key: cannot read the range '$valid'"
			fi ;;
		bool) expect_refused "$what" "$key" maybe "expected bool" "$@" ;;
		enum) expect_refused "$what" "$key" no-such-value "expected one of" "$@" ;;
		string)
			if [ "$valid" = - ]; then
				free="$free $name"
			elif bad=$(bad_for_valid "$valid"); then
				expect_refused "$what" "$key" "$bad" "expected $valid" "$@"
			else
				fail "$what: $key: no bad example for the validator '$valid' (add one to bad_for_valid)"
			fi ;;
		*) fail "$what: $key: unknown type '$type'" ;;
		esac
	done <<<"$schema"
	[ $nkeys -gt 0 ] || fail "$what: no keys printed"
	echo "$what: $nkeys keys; free strings (no invalid value, not fed one):$free"
}

# hiwaterd: a broker with the required keys, the key under test on line 5.
base=$'process.roles=broker\nnode.id=2\ncontroller.quorum.voters=0@127.0.0.1:9090\nhiwater.auth=none\n'
line=5
check_schema hiwaterd "$hiwaterd" --print-config -- \
	"$hiwaterd" --config "$dir/f.properties" --print-config

# hiwater's --command-config: parsed before anything is sent; key on line 1.
base="" line=1
check_schema "hiwater --command-config" "$hiwater" --print-client-config -- \
	"$hiwater" topic describe --bootstrap-server 127.0.0.1:9 --command-config "$dir/f.properties"

# Every rule across keys (the "# rule" lines of --print-config) broken once:
# the lines of a file whose last line breaks it (the key it names, unless
# the rule's key is left at its default: then the message says "(default)").
rule_case() {
	local b=$'process.roles=broker\nnode.id=2\ncontroller.quorum.voters=0@127.0.0.1:9090\nhiwater.auth=none'
	local c=$'process.roles=controller\nnode.id=0\nhiwater.auth=none'
	case $1 in
	"session outlasts heartbeat") echo "$b"$'\nbroker.session.timeout.ms=2000' ;;
	"Kafka: fetch wait within lag") echo "$b"$'\nreplica.fetch.wait.max.ms=30001' ;;
	"Kafka: group session bounds") echo "$b"$'\ngroup.max.session.timeout.ms=5999' ;;
	"idle sleep bounds") echo "$b"$'\nhiwater.idle.sleep.max.us=9' ;;
	"several voters need ZooKeeper") echo "$c"$'\ncontroller.quorum.voters=0@127.0.0.1:9090,1@127.0.0.1:9091' ;;
	"a controller is a voter") echo "$c"$'\ncontroller.quorum.voters=5@127.0.0.1:9090' ;;
	"a broker is not a voter") echo "$b"$'\nnode.id=0' ;;
	"a controller listens on its voter address")
		echo "$c"$'\ncontroller.quorum.voters=0@127.0.0.1:9090\nhiwater.control.listen=udp:127.0.0.1:9091' ;;
	"dpdk needs EAL arguments") echo "$b"$'\nhiwater.transport=dpdk' ;;
	*) return 1 ;;
	esac
}
nrules=0
while IFS=$'\t' read -r tag name key want; do
	[ "$tag" = "# rule" ] || continue
	nrules=$((nrules + 1))
	text=$(rule_case "$name") || { fail "rule '$name': no case that breaks it (add one to rule_case)"; continue; }
	printf '%s\n' "$text" >"$dir/f.properties"
	n=$(printf '%s\n' "$text" | wc -l)
	where="f.properties:$n: "
	tail -n1 "$dir/f.properties" | grep -q "^$key=" || where="f.properties: "
	rc=0
	"$hiwaterd" --config "$dir/f.properties" --print-config >"$dir/out" 2>"$dir/err" || rc=$?
	checked=$((checked + 1))
	if [ $rc != 2 ] || ! grep -qF "$where" "$dir/err" || ! grep -qF "key '$key'" "$dir/err" ||
		! grep -qF -- "$want" "$dir/err"; then
		fail "rule '$name': exit $rc, '$(head -c 300 "$dir/err")' (want $where... key '$key': $want)"
	fi
done < <("$hiwaterd" --print-config)
[ $nrules -gt 0 ] || fail "no rules printed"
echo "hiwaterd: $nrules rules across keys, each broken once"

# An override is named as such, and it may replace a bad line of the file.
base=$'process.roles=broker\nnode.id=2\ncontroller.quorum.voters=0@127.0.0.1:9090\nhiwater.auth=none\nlog.roll.ms=0\n'
printf '%s' "$base" >"$dir/f.properties"
rc=0
"$hiwaterd" --config "$dir/f.properties" --override log.roll.ms=5 --print-config >"$dir/out" 2>&1 || rc=$?
[ $rc = 0 ] || fail "an override replacing a bad line: exit $rc: $(head -c 300 "$dir/out")"
grep -qx $'\tlog.roll.ms = 5' "$dir/out" || fail "the override's value is not the effective one"
rc=0
"$hiwaterd" --config "$dir/f.properties" --override log.roll.ms=5 --override hiwater.metrics.port=-1 \
	--print-config >"$dir/out" 2>&1 || rc=$?
[ $rc = 2 ] && grep -qF -- "--override: bad value '-1' for key 'hiwater.metrics.port'" "$dir/out" ||
	fail "a bad override: exit $rc: $(head -c 300 "$dir/out")"

[ $fails = 0 ] || { echo "config_keys: $fails of $checked bad values not refused as expected" >&2; exit 1; }
echo "config_keys: all $checked bad values refused with exit 2, naming file, line and key"
