#!/usr/bin/env bash
# neardup_scale.sh — part neardup_scale of `make bench` (bench/run.sh): the
# verified join simhash_near_duplicates at NEARDUP_SCALE_DOCS documents
# (default 100000; "100000 1000000" for both sizes) at work_mem 4GB and 64MB
# (NEARDUP_SCALE_WORK_MEM): time, pairs, the backend's peak memory; beside the
# MinHash-LSH baseline of bench/neardup_quality.py; and the online lookup of
# bench/neardup_online.py on the same table (NEARDUP_SCALE_ONLINE=0 skips it)
# -> $BENCH_RESULTS/neardup_scale_{join,online,info}.csv (bench/neardup_scale.py).
# Outside bench/run.sh it builds this tree into a throwaway cluster of its own.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${SIMHASH_BENCH_CLUSTER:-}" != 1 ]; then
	source tools/tmp-cluster.sh
	echo "== building and installing into a private prefix"
	tmpc_install neardup-scale
	tmpc_start -c shared_buffers=${SHARED_BUFFERS:-1GB} -c maintenance_work_mem=1GB \
		-c max_parallel_workers_per_gather=0
	export TMPC_BIN
fi
/usr/bin/python3 bench/neardup_scale.py
