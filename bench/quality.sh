#!/usr/bin/env bash
# quality.sh — `make quality`: precision and recall of "distance <= k" against
# exact word-shingle Jaccard on a real corpus (bench/quality.py), and of the
# verified near-duplicates against SimHash radius alone and a MinHash-LSH
# baseline (bench/neardup_quality.py -> bench/QUALITY.md; QUALITY_ND_DOCS
# documents, default 4000), on a throwaway cluster with the extension built
# from this tree; then regenerates bench/REPORT.md.  QUALITY_ONLY=neardup
# runs only the second part.
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
if [ "${QUALITY_ONLY:-}" != neardup ]; then
	/usr/bin/python3 bench/quality.py
	/usr/bin/python3 bench/report.py
	echo "bench/REPORT.md written (quality section from $BENCH_RESULTS/quality.md)"
fi
/usr/bin/python3 bench/neardup_quality.py
echo "bench/QUALITY.md written (verified near-duplicates, $BENCH_RESULTS/neardup_*.csv)"
