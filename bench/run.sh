#!/usr/bin/env bash
# run.sh — `make bench`: builds this tree, installs it into a throwaway
# PostgreSQL cluster under /tmp, runs the benchmark parts, writes
# bench/results/*.csv and regenerates bench/REPORT.md with plots.
#
#   PARTS="fingerprint concurrency insert index sweep tuning planner batch memory ingest steady_mix citus parallel_build scale limit limit_ratios neardup_online neardup_scale"   (default: all)
#   SCALE=1        multiplies the data sizes (10 -> 1M-row tables, ...)
#   SCALE_ROWS     the table sizes of part scale (default 1000000 x SCALE), e.g. "1000000 10000000"
#   LIMIT_ROWS     the table sizes of part limit (default "100000 1000000" x SCALE)
#   LIMIT_RATIOS_ROWS  the sizes of part limit_ratios (default "100000 1000000 10000000 100000000")
#   BENCH_SECONDS  pgbench duration per point and round (default 6)
#   ROUNDS         pgbench rounds, best kept (default 2 concurrency, 3 insert)
#
# A part whose feature is not in the build (the index, the batch CLI,
# simhash_html, ...) is reported as skipped; index and batch are the scripts
# bench/index_bench.sh and bench/batch_bench.sh, run when they exist; sweep
# (index vs seqscan over N and k) is bench/index_sweep.sh -> index_sweep.csv;
# tuning (radius k against the index's bits option, 10^6 x SCALE rows) is the
# same script with BITS="3 4 5 6" -> index_tuning.csv.
# planner (the planner's choice over radii 0..64, exact KNN) is
# bench/planner_knn.sh -> planner_radius.csv, planner_knn.csv.
# ingest (the index under continuous ingestion) is bench/ingest.sh; steady_mix
# (4 clients mixing inserts, deletes and queries for 3 minutes) bench/steady_mix.sh.
# citus (one node vs coordinator + 2 workers) is bench/citus.sh, skipped without Citus.
# scale (the README's figures at 1M, 10M, ... rows: builds, size, warm and cold
# latency, ingestion, all pairs, against btree and a sequential scan) is
# bench/scale.sh, on a cluster of its own per size; its CSVs keep the rows of
# the sizes not run this time.
# parallel_build (CREATE INDEX serial and with 2 workers beside btree's) is
# bench/parallel_build.sh, on this cluster's server only.
# limit (the index against a packed linear scan of the same codes, the
# physical limit of exact search, over N) is bench/limit.sh -> limit.csv.
# limit_ratios (the packed scan alone, no server, at the sizes and query types
# of the README's index figures, which report.py pairs with it) is
# bench/limit_ratios.sh -> limit_ratios.csv.
# neardup_online (simhash_near_duplicates_of at 100,000 real documents:
# index size, p50/p95, candidates per lookup) is bench/neardup_online.sh.
# neardup_scale (the verified join at NEARDUP_SCALE_DOCS documents, default
# 100000, at work_mem 4GB and 64MB beside MinHash-LSH, and the online lookup on
# the same table) is bench/neardup_scale.sh; its CSVs keep the rows of the
# sizes not run this time.
# Only the parts that run lose their old results; the report is regenerated
# from every CSV, so `PARTS=sweep make bench` keeps the other sections.
set -euo pipefail
cd "$(dirname "$0")/.."
export SCALE=${SCALE:-1}
PARTS=${PARTS:-"fingerprint concurrency insert index sweep tuning planner batch memory ingest steady_mix citus parallel_build scale limit limit_ratios neardup_online neardup_scale"}
export BENCH_RESULTS=${BENCH_RESULTS:-$PWD/bench/results}
mkdir -p "$BENCH_RESULTS" bench/plots

bash tools/install-deps.sh
source tools/tmp-cluster.sh
echo "== building and installing into a private prefix"
tmpc_install bench
tmpc_start -c shared_buffers=1GB -c maintenance_work_mem=1GB -c work_mem=64MB \
	-c max_parallel_workers_per_gather=0 -c checkpoint_timeout=30min
export SIMHASH_BENCH_CLUSTER=1 TMPC_BIN
echo "   cluster at $PGHOST"

bash bench/machine.sh > "$BENCH_RESULTS/machine.csv"
tmpc_psql -c 'CREATE EXTENSION simhash'
feat=$(tmpc_psql -At -c "SELECT concat_ws(' ',
	CASE WHEN EXISTS (SELECT FROM pg_am WHERE amname = 'simhash') THEN 'index-am' END,
	(SELECT string_agg(DISTINCT proname, ' ' ORDER BY proname) FROM pg_proc
	  WHERE proname IN ('simhash_html', 'simhash_seomoz', 'simhash_within', 'simhash_find_all', 'simhash_cluster')))")
feat="$feat $(cd "$TMPC_BIN" && ls simhash-* 2>/dev/null | tr '\n' ' ')"
echo "features,\"$feat\"" >> "$BENCH_RESULTS/machine.csv"
cat "$BENCH_RESULTS/machine.csv"

status=$BENCH_RESULTS/parts.csv
# keep the status lines of the parts that do not run this time
old=$(tail -n +2 "$status" 2>/dev/null | awk -F, -v p=" $PARTS " 'index(p, " " $1 " ") == 0' || true)
echo "part,status,seconds,note" > "$status"
[ -n "$old" ] && echo "$old" >> "$status"
for part in $PARTS; do
	case $part in
		index|batch) script=bench/${part}_bench.sh ;;
		sweep) script=bench/index_sweep.sh ;;
		tuning) script=bench/index_sweep.sh ;;
		planner) script=bench/planner_knn.sh ;;
		*) script=bench/$part.sh ;;
	esac
	log=$BENCH_RESULTS/$part.log
	# no stale figures in the report (index_sweep.csv belongs to part sweep,
	# limit_ratios.csv to part limit_ratios, not limit)
	# (scale.csv, scale_info.csv, neardup_scale_{join,online}.csv: bench/scale.sh and
	# bench/neardup_scale.py replace the rows of the sizes they run)
	find "$BENCH_RESULTS" -maxdepth 1 \( -name "$part.*" -o -name "${part}_*.csv" \) ! -name index_sweep.csv \
		! -name scale.csv ! -name scale_info.csv ! -name neardup_scale_join.csv ! -name neardup_scale_online.csv \
		! -name limit_ratios.csv -delete
	[ "$part" = sweep ] && rm -f "$BENCH_RESULTS/index_sweep.csv"
	[ "$part" = limit_ratios ] && rm -f "$BENCH_RESULTS/limit_ratios.csv"
	penv=()
	if [ "$part" = tuning ]; then
		rm -f "$BENCH_RESULTS/index_tuning.csv"
		penv=(SIZES=$((1000000 * SCALE)) BITS="3 4 5 6" OUT=index_tuning.csv)
	fi
	echo "== $part"
	if [ ! -f "$script" ]; then
		echo "   skipped: $script is not in this tree"
		echo "$part,skipped,0,$script not in this tree" >> "$status"
		continue
	fi
	t0=$(date +%s)
	if env "${penv[@]}" bash "$script" 2>&1 | tee "$log"; then
		st=ran; note=$(sed -n 's/^SKIP: //p' "$log" | head -1 | tr ',' ';')
		[ -n "$note" ] && st=skipped
	else
		st=failed; note="see results/$part.log"
	fi
	echo "$part,$st,$(( $(date +%s) - t0 )),$note" >> "$status"
done

tmpc_stop
echo "== report"
/usr/bin/python3 bench/report.py
echo "bench/REPORT.md written; parts:"
column -s, -t < "$status"
