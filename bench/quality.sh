#!/usr/bin/env bash
# quality.sh — `make quality`: precision and recall of "distance <= k" against
# exact word-shingle Jaccard on a real corpus (bench/quality.py), on a
# throwaway cluster with the extension built from this tree; then
# regenerates bench/REPORT.md.
set -euo pipefail
cd "$(dirname "$0")/.."
export BENCH_RESULTS=${BENCH_RESULTS:-$PWD/bench/results}
mkdir -p "$BENCH_RESULTS" bench/plots
if [ -z "${SIMHASH_BENCH_CLUSTER:-}" ]; then
	bash tools/install-deps.sh
	source tools/tmp-cluster.sh
	echo "== building and installing into a private prefix"
	tmpc_install quality
	tmpc_start -c shared_buffers=512MB
	export TMPC_BIN
fi
/usr/bin/python3 bench/quality.py
/usr/bin/python3 bench/report.py
echo "bench/REPORT.md written (quality section from $BENCH_RESULTS/quality.md)"
