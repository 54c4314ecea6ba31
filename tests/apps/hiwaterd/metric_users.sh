#!/usr/bin/env bash
# metric_users.sh HIWATERD SRCDIR — every metric name the repository's
# scripts read (tests/**/*.sh, perf/*, and the C sources of the CLI, the
# bench and the perf programs) is a family of docs/metrics.md, or a series of
# one (_bucket, _sum, _count of a histogram or summary), or a counter family
# without its _total (the metric part of a recording rule's name over a rate,
# level:metric:operations, apps/hiwater/hw_cluster_prom.h). A family renamed in
# hwd_metric_defs.h or HW_PART_METRIC_TABLE fails here, naming the file that
# still reads the old name, instead of silently reading nothing at run time.
set -euo pipefail
hiwaterd=${1:?hiwaterd binary}
src=${2:?source dir}
fams=$("$hiwaterd" --print-metrics-table | awk -F'|' '/^\| `hiwater_/ { f = $2; gsub(/[ `]/, "", f); print f }' | sort -u)
[ -n "$fams" ] || { echo "FAIL: no families from $hiwaterd --print-metrics-table" >&2; exit 1; }
cd "$src"
files=$(find tests perf apps/hiwater -type f \( -name '*.sh' -o -name '*.c' -o -name '*.py' \) 2>/dev/null
	find perf -maxdepth 1 -type f ! -name '*.*' 2>/dev/null)
bad=0 n=0
# names of metrics, not of files or build targets: hiwater_ then a family-like word
while IFS=: read -r file name; do
	n=$((n + 1))
	base=$(sed -E 's/_(bucket|sum|count)$//' <<<"$name")
	if ! grep -qxF "$name" <<<"$fams" && ! grep -qxF "$base" <<<"$fams" &&
		! grep -qxF "${name}_total" <<<"$fams"; then
		echo "FAIL: $file reads $name, which hiwaterd does not export (docs/metrics.md)" >&2
		bad=1
	fi
done < <(grep -oHE 'hiwater_[a-z0-9_]+' $files | grep -vE ':hiwater_(cleanshutdown|brokers)$' | sort -u)
[ "$bad" = 0 ] || exit 1
echo "metric_users: $n metric names read by the repository's scripts and programs, all exported"
