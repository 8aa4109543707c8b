#!/usr/bin/env bash
# boilerplate.sh — boilerplate weighting against shared navigation and licence
# footers: precision and recall of "distance <= k" with simhash_html and with
# simhash_weighted (simhash_df_build), against exact Jaccard of the main text
# (bench/boilerplate_quality.py), on a throwaway cluster with the extension
# built from this tree.  Writes $BENCH_RESULTS/boilerplate.{csv,md} and the
# "Boilerplate weighting" section of bench/QUALITY.md.  BOILER_ARTICLES sets
# the number of articles (default 1000).
set -euo pipefail
cd "$(dirname "$0")/.."
export BENCH_RESULTS=${BENCH_RESULTS:-$PWD/bench/results}
mkdir -p "$BENCH_RESULTS"
if [ -z "${SIMHASH_BENCH_CLUSTER:-}" ]; then
	source tools/tmp-cluster.sh
	echo "== building and installing into a private prefix"
	tmpc_install boilerplate
	tmpc_start -c shared_buffers=256MB
	export TMPC_BIN
fi
/usr/bin/python3 bench/boilerplate_quality.py
