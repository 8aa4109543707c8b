#!/usr/bin/env bash
# index_bench.sh — the simhash index against a sequential scan and a btree,
# on a throwaway cluster in /tmp.  Not part of `make test`; prints ratios
# measured in the same run and writes bench/results/index.csv.
#
#   N=1000000 QUERIES=1000 SEQ_SAMPLE=20 BLOCKS="4 5 6" bash bench/index_bench.sh
#
# Data: N fingerprints, 90% random (md5 of the row number), 10% planted near
# duplicates: copies of random rows with 1..6 bits flipped.  N defaults to
# 1,000,000 x SCALE.  Under bench/run.sh (SIMHASH_BENCH_CLUSTER=1) it reuses
# that cluster and writes $BENCH_RESULTS/index_bench.csv and index.md.  Queries: half of
# them planted centres (they have neighbours), half fresh random values;
# radius 3 (bits = 3).  Every timing is server-side (clock_timestamp() in
# PL/pgSQL), one backend, no parallel workers, no JIT, so index and sequential scan
# are compared on the same single core.  The sequential scan is timed on a
# sample of SEQ_SAMPLE queries and extrapolated per query.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
N=${N:-$((1000000 * ${SCALE:-1}))}
QUERIES=${QUERIES:-1000}
SEQ_SAMPLE=${SEQ_SAMPLE:-20}
KNN_QUERIES=${KNN_QUERIES:-100}
KNN_SEQ_SAMPLE=${KNN_SEQ_SAMPLE:-5}
INSERTS=${INSERTS:-20000}
BLOCKS=${BLOCKS:-"4 5 6"}
BITS=${BITS:-3}
if [ -n "${BENCH_RESULTS:-}" ]; then OUT=${OUT:-$BENCH_RESULTS/index_bench.csv}; else OUT=${OUT:-$ROOT/bench/results/index.csv}; fi

step() { printf '\n== %s\n' "$*" >&2; }
now() { date +%s.%N; }

if [ "${SIMHASH_BENCH_CLUSTER:-}" = 1 ]; then
	# Under bench/run.sh: a cluster with the
	# extension is up at $PGHOST; work in a database of our own.
	PSQL=${TMPC_BIN:+$TMPC_BIN/}psql
	BIN=${TMPC_BIN:-$(pg_config --bindir)}
	"$PSQL" -X -q -c "DROP DATABASE IF EXISTS simhash_index_bench" -c "CREATE DATABASE simhash_index_bench"
	trap '"$PSQL" -X -q -c "DROP DATABASE IF EXISTS simhash_index_bench" >/dev/null 2>&1 || true' EXIT
	pg() { PGOPTIONS="-c max_parallel_workers_per_gather=0 -c maintenance_work_mem=1GB -c jit=off" \
		"$PSQL" -X -q -A -t -v ON_ERROR_STOP=1 -P pager=off -d simhash_index_bench "$@"; }
else
	# A throwaway cluster on a private installation (tools/tmp-cluster.sh), so
	# that the system's PostgreSQL is left alone.
	step "building and installing into a private copy of PostgreSQL"
	source tools/tmp-cluster.sh
	tmpc_install bench
	BIN=$TMPC_BIN
	step "starting a throwaway cluster in $TMPC_DIR"
	# fsync off: a throwaway cluster; both sides of every ratio run under it.
	tmpc_start -c shared_buffers=2GB -c maintenance_work_mem=1GB -c max_wal_size=16GB -c fsync=off \
		-c synchronous_commit=off -c full_page_writes=off -c autovacuum=off \
		-c max_parallel_workers_per_gather=0 -c max_parallel_maintenance_workers=0 -c jit=off
	pg() { tmpc_psql -A -t "$@"; }
fi

pg -c "CREATE EXTENSION IF NOT EXISTS simhash"
step "loading $N fingerprints (10% planted near duplicates)"
t0=$(now)
pg -v n="$N" -v queries="$QUERIES" < bench/planted.sql
pg <<SQL
VACUUM ANALYZE t;
CREATE TABLE lat (kind text, cfg text, qid int, ms float8, n int);
CREATE FUNCTION run_queries(kind text, cfg text, lim int) RETURNS void LANGUAGE plpgsql AS \$\$
DECLARE r record; t0 timestamptz; n int;
BEGIN
  -- lim queries spread evenly over both halves of bq
  FOR r IN SELECT qid, q FROM bq WHERE (qid - 1) % greatest(1, (SELECT count(*) FROM bq) / lim) = 0
            ORDER BY qid LIMIT lim LOOP
    t0 := clock_timestamp();
    IF kind = 'index' THEN
      SELECT count(id) INTO n FROM t WHERE simhash_within(fp, r.q, 3);
    ELSIF kind = 'seqscan' THEN
      SELECT count(id) INTO n FROM t WHERE simhash_distance(fp, r.q) <= 3;
    ELSIF kind = 'knn index' THEN
      SELECT count(d) INTO n FROM (SELECT fp <~> r.q AS d FROM t ORDER BY fp <~> r.q LIMIT 10) s;
    ELSE
      SELECT count(d) INTO n FROM (SELECT fp <~> r.q AS d FROM t ORDER BY fp <~> r.q LIMIT 10) s;
    END IF;
    INSERT INTO lat VALUES (kind, cfg, r.qid, extract(epoch FROM clock_timestamp() - t0) * 1000, n);
  END LOOP;
END \$\$;
-- single-row inserts, one statement each; returns rows per second
CREATE FUNCTION insert_rate(cnt int) RETURNS float8 LANGUAGE plpgsql AS \$\$
DECLARE t0 timestamptz := clock_timestamp();
BEGIN
  FOR i IN 1 .. cnt LOOP
    INSERT INTO t VALUES (-i, ('x' || md5('ins' || i))::bit(64)::simhash);
  END LOOP;
  RETURN cnt / extract(epoch FROM clock_timestamp() - t0);
END \$\$;
SQL
load_s=$(echo "$(now) - $t0" | bc)
heap=$(pg -c "SELECT pg_relation_size('t')")

csv=$(mktemp); echo "n,config,metric,value,unit,baseline,ratio" >"$csv"
row() { echo "$N,$1,$2,$3,$4,$5,$6" >>"$csv"; }

step "sequential scan: $SEQ_SAMPLE radius-3 queries, $KNN_SEQ_SAMPLE KNN queries"
pg -c "SET enable_indexscan = off; SET enable_bitmapscan = off;
       SELECT run_queries('seqscan', 'none', $SEQ_SAMPLE); SELECT run_queries('knn seqscan', 'none', $KNN_SEQ_SAMPLE)" >/dev/null
seq_ms=$(pg -c "SELECT round(avg(ms)::numeric, 4) FROM lat WHERE kind = 'seqscan'")
knn_seq_ms=$(pg -c "SELECT round(avg(ms)::numeric, 4) FROM lat WHERE kind = 'knn seqscan'")
row none seqscan_ms_per_query "$seq_ms" ms "" ""
row none knn_seqscan_ms_per_query "$knn_seq_ms" ms "" ""

step "btree on the same column"
t0=$(now); pg -c "CREATE INDEX t_btree ON t (fp)"; btree_s=$(echo "$(now) - $t0" | bc)
btree_size=$(pg -c "SELECT pg_relation_size('t_btree')")
pg -c "DROP INDEX t_btree"
row btree build_s "$btree_s" s "" ""
row btree bytes_per_row "$(echo "scale=2; $btree_size / $N" | bc)" bytes "" ""

step "insert rate without an index"
pg -c "SELECT round(insert_rate(100)::numeric)" >/dev/null; pg -c "DELETE FROM t WHERE id < 0" -c "VACUUM t"
rate_none=$(pg -c "SELECT round(insert_rate($INSERTS)::numeric)"); pg -c "DELETE FROM t WHERE id < 0" -c "VACUUM t"
row none insert_rows_per_s "$rate_none" rows/s "" ""

for m in $BLOCKS; do
	cfg="bits=$BITS blocks=$m"
	step "simhash index ($cfg): build, $QUERIES queries, $KNN_QUERIES KNN queries, $INSERTS inserts"
	t0=$(now); pg -c "CREATE INDEX t_sh ON t USING simhash (fp) WITH (bits = $BITS, blocks = $m)"
	build_s=$(echo "$(now) - $t0" | bc)
	size=$(pg -c "SELECT pg_relation_size('t_sh')")
	pg -c "SET enable_seqscan = off; EXPLAIN (COSTS OFF) SELECT count(id) FROM t WHERE simhash_within(fp, '0123456789abcdef', 3)" | grep -q t_sh \
		|| { echo "the index is not used" >&2; exit 1; }
	pg -c "SELECT run_queries('index', '$cfg', $QUERIES); SELECT run_queries('knn index', '$cfg', $KNN_QUERIES)" >/dev/null
	read -r p50 p99 avg answers < <(pg -F ' ' -c "SELECT round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms)::numeric, 4), round(percentile_cont(0.99) WITHIN GROUP (ORDER BY ms)::numeric, 4), round(avg(ms)::numeric, 4), sum(n) FROM lat WHERE kind = 'index' AND cfg = '$cfg'")
	knn_ms=$(pg -c "SELECT round(avg(ms)::numeric, 4) FROM lat WHERE kind = 'knn index' AND cfg = '$cfg'")
	wrong=$(pg -c "SELECT count(*) FROM lat i JOIN lat s USING (qid) WHERE i.cfg = '$cfg' AND i.kind = 'index' AND s.kind = 'seqscan' AND i.n <> s.n")
	pg -c "SELECT round(insert_rate(100)::numeric)" >/dev/null; pg -c "DELETE FROM t WHERE id < 0" -c "VACUUM t"
	rate=$(pg -c "SELECT round(insert_rate($INSERTS)::numeric)"); pg -c "DELETE FROM t WHERE id < 0" -c "VACUUM t"
	pg -c "DROP INDEX t_sh"
	row "$cfg" build_s "$build_s" s "$btree_s" "$(echo "scale=2; $build_s / $btree_s" | bc)"
	row "$cfg" bytes_per_row "$(echo "scale=2; $size / $N" | bc)" bytes "$(echo "scale=2; $btree_size / $N" | bc)" "$(echo "scale=2; $size / $btree_size" | bc)"
	row "$cfg" ms_per_query_avg "$avg" ms "$seq_ms" "$(echo "scale=1; $seq_ms / $avg" | bc)"
	row "$cfg" ms_p50 "$p50" ms "$seq_ms" "$(echo "scale=1; $seq_ms / $p50" | bc)"
	row "$cfg" ms_p99 "$p99" ms "$seq_ms" "$(echo "scale=1; $seq_ms / $p99" | bc)"
	row "$cfg" answers_total "$answers" rows "" ""
	row "$cfg" answer_mismatches_vs_seqscan_sample "$wrong" queries "" ""
	row "$cfg" knn10_ms_per_query "$knn_ms" ms "$knn_seq_ms" "$(echo "scale=1; $knn_seq_ms / $knn_ms" | bc)"
	row "$cfg" insert_rows_per_s "$rate" rows/s "$rate_none" "$(echo "scale=2; $rate / $rate_none" | bc)"
done

mkdir -p "$(dirname "$OUT")"
if [ -s "$OUT" ] && head -1 "$OUT" | grep -q '^n,config'; then tail -n +2 "$csv" >>"$OUT"; else cat "$csv" >"$OUT"; fi
step "results (ratio = baseline / value for times, value / baseline for sizes and rates)"
{
	echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), PostgreSQL $("$BIN/postgres" -V | awk '{print $3}')"
	echo "N=$N rows (heap $(echo "scale=1; $heap / 1048576" | bc) MiB, loaded in ${load_s}s), $QUERIES radius-3 queries, seqscan sample $SEQ_SAMPLE"
	column -t -s, "$csv"
} | tee "${OUT%.csv}-last.txt"
if [ -n "${BENCH_RESULTS:-}" ]; then
	{
		echo "### Index: radius-3 queries, KNN, build, inserts (N = $N)"
		echo
		echo "ratio = baseline / value for times (speedup), value / baseline for sizes and rates;"
		echo "baselines measured in the same run: sequential scan (one core), btree on the same column,"
		echo "inserts without the index. Script: \`bench/index_bench.sh\`."
		echo
		echo "| config | metric | value | unit | baseline | ratio |"
		echo "|---|---|---|---|---|---|"
		tail -n +2 "$csv" | awk -F, '{ printf "| %s | %s | %s | %s | %s | %s |\n", $2, $3, $4, $5, $6, $7 }'
	} >"$BENCH_RESULTS/index.md"
fi
rm -f "$csv"
