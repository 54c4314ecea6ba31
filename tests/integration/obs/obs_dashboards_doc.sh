#!/usr/bin/env bash
# obs_dashboards_doc.sh TEST_OBS — without a cluster: the recording rules
# `cluster up --prometheus` writes pass `promtool check rules`, each has a
# row in docs/observability.md's table, and every panel query of
# docs/dashboards/*.json names only documented metrics and rules
# (tests/integration/obs/obs_dashboards.py; the integration test obs_prometheus_dpdk
# also requires data from each).
set -euo pipefail
: "${HW_SRCDIR:?run through meson test}"
tmp=$(mktemp -d /tmp/hw-obs-doc-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
"$1" rules >"$tmp/hiwater.rules.yml"
command -v promtool >/dev/null || { echo "FAIL: promtool not installed (ci/bootstrap)"; exit 1; }
promtool check rules "$tmp/hiwater.rules.yml"
# every rule has its row in docs/observability.md's table
for r in $(awk '$1 == "-" && $2 == "record:" { print $3 }' "$tmp/hiwater.rules.yml"); do
	grep -qF "| \`$r\` |" "$HW_SRCDIR/docs/observability.md" ||
		{ echo "FAIL: recording rule $r has no row in docs/observability.md"; exit 1; }
done
"$HW_SRCDIR/tests/integration/obs/obs_dashboards.py" --metrics-doc "$HW_SRCDIR/docs/metrics.md" \
	--obs-doc "$HW_SRCDIR/docs/observability.md" --rules "$tmp/hiwater.rules.yml" \
	"$HW_SRCDIR"/docs/dashboards/*.json
