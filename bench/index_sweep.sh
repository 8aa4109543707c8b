#!/usr/bin/env bash
# index_sweep.sh — radius-k search through the simhash index against a
# sequential scan, for several table sizes N and radii k = 0..6 (issue 6,
# "Query").  Not part of `make test`; part `sweep` of bench/run.sh.
#
#   SIZES="100000 1000000" KS="0 1 2 3 4 5 6" QUERIES=200 SEQ_SAMPLE=5 bash bench/index_sweep.sh
#
# SIZES defaults to 100000 and 1000000 times SCALE (SCALE=10: 10^6 and 10^7).
# Data as in bench/index_bench.sh: 90% random fingerprints (md5 of the row
# number), 10% planted near copies of random rows with 1..6 bits flipped, so
# every run sees the same data.  Index: `USING simhash (fp)` with the default
# options (bits 3, blocks 4).  For every k: QUERIES queries (half of them
# centres of planted copies, half fresh random values) with
# `simhash_within(fp, q, k)`; the plan is checked with EXPLAIN first and
# enable_seqscan is turned off only when the planner would not use the index
# (the CSV says which).  SEQ_SAMPLE of the same queries run as a sequential
# scan `simhash_distance(fp, q) <= k` (index scans off), extrapolated per
# query; their result counts are compared with the index's.  Timings are
# server-side (clock_timestamp() in PL/pgSQL), one backend, no parallel
# workers, no JIT.  Writes $BENCH_RESULTS/index_sweep.csv:
#   n,k,plan,index_p50_ms,index_p99_ms,seq_ms_per_query,speedup_p50,rows_avg,count_mismatches,bits,build_s,bytes_per_row
# (speedup_p50 = seq_ms_per_query / index_p50_ms).
# BITS="3 4 5 6" repeats every N with an index of each `bits` option (blocks =
# bits + 1, the default); OUT=name.csv writes another file of $BENCH_RESULTS
# (part `tuning` of bench/run.sh: BITS="3 4 5 6" at 10^6 rows -> index_tuning.csv).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
SCALE=${SCALE:-1}
SIZES=${SIZES:-"$((100000 * SCALE)) $((1000000 * SCALE))"}
KS=${KS:-"0 1 2 3 4 5 6"}
QUERIES=${QUERIES:-200}
BITS=${BITS:-3}
SEQ_SAMPLE=${SEQ_SAMPLE:-5}
BENCH_RESULTS=${BENCH_RESULTS:-$ROOT/bench/results}
OUT=$BENCH_RESULTS/${OUT:-index_sweep.csv}
DB=simhash_index_sweep

step() { printf '\n== %s\n' "$*" >&2; }

if [ "${SIMHASH_BENCH_CLUSTER:-}" != 1 ]; then
	# Alone: a throwaway cluster of our own (removed on exit by tmp-cluster.sh).
	source tools/tmp-cluster.sh
	step "building and installing into a private prefix"
	tmpc_install sweep
	tmpc_start -c shared_buffers=1GB -c maintenance_work_mem=1GB -c work_mem=64MB \
		-c max_parallel_workers_per_gather=0
	tmpc_psql -c 'CREATE EXTENSION simhash'
fi
PSQL=${TMPC_BIN:+$TMPC_BIN/}psql
export PGOPTIONS="-c client_min_messages=warning"
"$PSQL" -X -q -c "DROP DATABASE IF EXISTS $DB" -c "CREATE DATABASE $DB"
drop_db() { "$PSQL" -X -q -c "DROP DATABASE IF EXISTS $DB" >/dev/null 2>&1 || true; }
if [ "${SIMHASH_BENCH_CLUSTER:-}" = 1 ]; then trap drop_db EXIT; else trap 'drop_db; tmpc_cleanup' EXIT; fi
pg() { PGOPTIONS="-c client_min_messages=warning -c max_parallel_workers_per_gather=0 -c maintenance_work_mem=1GB -c jit=off" \
	"$PSQL" -X -q -A -t -v ON_ERROR_STOP=1 -P pager=off -d "$DB" "$@"; }

pg -c "CREATE EXTENSION IF NOT EXISTS simhash"
if [ "$(pg -c "SELECT count(*) FROM pg_am WHERE amname = 'simhash'")" = 0 ] ||
   [ "$(pg -c "SELECT count(*) FROM pg_proc WHERE proname = 'simhash_within'")" = 0 ]; then
	echo "SKIP: no simhash index access method or simhash_within in this build"; exit 0
fi
pg <<'SQL'
CREATE TABLE lat (n bigint, k int, kind text, qid int, ms float8, cnt bigint);
-- lim queries of bq spread evenly over both halves; kind 'index' or 'seqscan'
CREATE FUNCTION run_queries(nrows bigint, kind text, k int, lim int) RETURNS void LANGUAGE plpgsql AS $$
DECLARE r record; t0 timestamptz; c bigint;
BEGIN
  FOR r IN SELECT qid, q FROM bq WHERE (qid - 1) % greatest(1, (SELECT count(*) FROM bq) / lim) = 0
            ORDER BY qid LIMIT lim LOOP
    t0 := clock_timestamp();
    IF kind = 'index' THEN
      SELECT count(id) INTO c FROM t WHERE simhash_within(fp, r.q, k);
    ELSE
      SELECT count(id) INTO c FROM t WHERE simhash_distance(fp, r.q) <= k;
    END IF;
    INSERT INTO lat VALUES (nrows, k, kind, r.qid, extract(epoch FROM clock_timestamp() - t0) * 1000, c);
  END LOOP;
END $$;
SQL

tmp=$(mktemp)
echo "n,k,plan,index_p50_ms,index_p99_ms,seq_ms_per_query,speedup_p50,rows_avg,count_mismatches,bits,build_s,bytes_per_row" >"$tmp"
for N in $SIZES; do
	step "N=$N: loading (10% planted near duplicates)"
	pg -c "DROP TABLE IF EXISTS t, bq"
	pg -v n="$N" -v queries="$QUERIES" < bench/planted.sql
	for bits in $BITS; do
	step "N=$N: building the index (bits $bits, blocks $((bits + 1)))"
	pg -c "DROP INDEX IF EXISTS t_sh" -c "DELETE FROM lat WHERE n = $N" -c CHECKPOINT
	t0=$(date +%s.%N)
	pg -c "CREATE INDEX t_sh ON t USING simhash (fp) WITH (bits = $bits)"
	build_s=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.3f", b - a }')
	pg -c "VACUUM ANALYZE t"
	bytes_per_row=$(pg -c "SELECT round(pg_relation_size('t_sh')::numeric / $N, 1)")
	q1=$(pg -c "SELECT q FROM bq ORDER BY qid LIMIT 1")
	for k in $KS; do
		explain="EXPLAIN (COSTS OFF) SELECT count(id) FROM t WHERE simhash_within(fp, '$q1', $k)"
		forced=""
		if pg -c "$explain" | grep -q t_sh; then
			plan=$(pg -c "$explain" | grep t_sh | sed 's/^[ ->]*//; s/ on t_sh.*//' | head -1)
		else
			forced="SET enable_seqscan = off;"
			pg -c "$forced $explain" | grep -q t_sh || { echo "N=$N k=$k: the index is not used even with enable_seqscan off" >&2; exit 1; }
			plan="$(pg -c "$forced $explain" | grep t_sh | sed 's/^[ ->]*//; s/ on t_sh.*//' | head -1) (forced)"
		fi
		step "N=$N bits=$bits k=$k: $QUERIES index queries [$plan], $SEQ_SAMPLE seqscan queries"
		# warm-up (caches, plan cache), not recorded
		pg -c "$forced SELECT run_queries($N, 'index', $k, 20); DELETE FROM lat WHERE n = $N AND k = $k" >/dev/null
		pg -c "$forced SELECT run_queries($N, 'index', $k, $QUERIES)" >/dev/null
		pg -c "SET enable_indexscan = off; SET enable_bitmapscan = off; SELECT run_queries($N, 'seqscan', $k, $SEQ_SAMPLE)" >/dev/null
		pg -F , -c "
SELECT $N, $k, '$plan', round(i.p50::numeric, 4), round(i.p99::numeric, 4), round(s.ms::numeric, 3),
       round((s.ms / nullif(i.p50, 0))::numeric, 1), round(i.rows_avg::numeric, 2),
       (SELECT count(*) FROM lat a JOIN lat b USING (n, k, qid)
         WHERE a.n = $N AND a.k = $k AND a.kind = 'index' AND b.kind = 'seqscan' AND a.cnt <> b.cnt),
       $bits, round($build_s, 2), $bytes_per_row
  FROM (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) AS p50,
               percentile_cont(0.99) WITHIN GROUP (ORDER BY ms) AS p99, avg(cnt) AS rows_avg
          FROM lat WHERE n = $N AND k = $k AND kind = 'index') i,
       (SELECT avg(ms) AS ms FROM lat WHERE n = $N AND k = $k AND kind = 'seqscan') s" | tee -a "$tmp"
	done
	done
done
mkdir -p "$BENCH_RESULTS"
mv "$tmp" "$OUT"; chmod 644 "$OUT"
step "results ($OUT)"
column -t -s, "$OUT"
