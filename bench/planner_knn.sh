#!/usr/bin/env bash
# planner_knn.sh — does the planner pick the faster of the simhash index and
# a sequential scan, and how fast is exact KNN?  Part `planner` of bench/run.sh.
#
#   N=1000000 QUERIES=20 SEQ_SAMPLE=5 BITS="3 6" RADII="0 1 ... 10 12 16 ... 64" bash bench/planner_knn.sh
#   N=10000000 QUERIES=20 SEQ_SAMPLE=3 RADII="0 1 2 3 4 5 6 7 8 9 10" SHARED_BUFFERS=3GB nice bash bench/planner_knn.sh
#
# The CSVs keep the rows of other sizes (N) from earlier runs, so a run at 1M
# and one at 10M make one table.
# Data: bench/planted.sql (90% random fingerprints, 10% planted copies with
# 1..6 bits flipped) plus 50 "centres" with 20 copies each at 1..3 flipped
# bits.  For every index layout (bits 3 and 6, default blocks = bits + 1):
#  - radius: `SELECT count(id) ... WHERE simhash_within(fp, q, r)` as the
#    planner plans it, with the index forced (enable_seqscan off) and with a
#    sequential scan forced (index and bitmap scans off); QUERIES queries, half
#    centres of planted copies, half random (SEQ_SAMPLE of them for the
#    sequential scan); median ms.  ratio: the forced plan of the kind the
#    planner chose (index or seqscan) over the faster of the two forced plans,
#    on the queries both ran (1.00: the planner chose the faster).
#  - KNN: `ORDER BY fp <~> q LIMIT 10` for random queries (10th neighbour at
#    15-16 bits at 1M rows) and for the 50 centres (10 neighbours within 3
#    bits), through the planner's plan (the index) and by a sequential scan
#    (SEQ_SAMPLE queries); the sampled answers are compared (ids, in
#    distance then ctid order).
# Timings are server-side (clock_timestamp() in PL/pgSQL), one backend, no
# parallel workers, no JIT, table and index prewarmed (pg_prewarm).  Writes
# $BENCH_RESULTS/planner_radius.csv and planner_knn.csv.
# pgvector (HNSW on bit(64), when installed; bench/pgvector.sh): its build,
# size, KNN latency beside simhash and recall@10 at ef_search 40 and 200, in
# planner_knn_pgvector.csv (see the end of this script).
set -euo pipefail
# one brace group: bash reads the whole script before running it, so editing
# the file during a run does not change that run
{
cd "$(dirname "$0")/.."
ROOT=$PWD
N=${N:-$((1000000 * ${SCALE:-1}))}
QUERIES=${QUERIES:-20}
SEQ_SAMPLE=${SEQ_SAMPLE:-5}
BITS=${BITS:-"3 6"}
RADII=${RADII:-"0 1 2 3 4 5 6 7 8 9 10 12 16 20 24 28 32 64"}
BENCH_RESULTS=${BENCH_RESULTS:-$ROOT/bench/results}
DB=simhash_planner_knn

step() { printf '\n== %s\n' "$*" >&2; }

if [ "${SIMHASH_BENCH_CLUSTER:-}" != 1 ]; then
	source tools/tmp-cluster.sh
	step "building and installing into a private prefix"
	tmpc_install planner
	tmpc_start -c shared_buffers=${SHARED_BUFFERS:-1GB} -c maintenance_work_mem=1GB -c work_mem=64MB \
		-c max_parallel_workers_per_gather=0
fi
PSQL=${TMPC_BIN:+$TMPC_BIN/}psql
"$PSQL" -X -q -c "DROP DATABASE IF EXISTS $DB" -c "CREATE DATABASE $DB"
# (and the result files not yet moved into $BENCH_RESULTS, should the run stop early)
drop_db() {
	"$PSQL" -X -q -c "DROP DATABASE IF EXISTS $DB" >/dev/null 2>&1 || true
	rm -f "${radius_csv:-}" "${knn_csv:-}" "${pgv_csv:-}"
}
if [ "${SIMHASH_BENCH_CLUSTER:-}" = 1 ]; then trap drop_db EXIT; else trap 'drop_db; tmpc_cleanup' EXIT; fi
pg() { PGOPTIONS="-c client_min_messages=warning -c max_parallel_workers_per_gather=0 -c maintenance_work_mem=1GB -c jit=off" \
	"$PSQL" -X -q -A -t -v ON_ERROR_STOP=1 -P pager=off -d "$DB" "$@"; }

pg -c "CREATE EXTENSION simhash"
if [ "$(pg -c "SELECT count(*) FROM pg_proc WHERE proname = 'simhash_within'")" = 0 ]; then
	echo "SKIP: no simhash index in this build"; exit 0
fi

step "N=$N: loading (bench/planted.sql + 50 centres with 20 copies each)"
pg -v n="$N" -v queries="$QUERIES" < bench/planted.sql
pg <<'SQL'
CREATE TABLE kc (cid int, q simhash);
INSERT INTO kc SELECT c, ('x' || md5('centre' || c))::bit(64)::simhash FROM generate_series(1, 50) c;
INSERT INTO t SELECT 2000000000 - cid * 100 - j,
       (q::bigint # (SELECT bit_or(1::bigint << ((hashint4(cid * 1000 + j * 8 + b) & 2147483647) % 64))
                       FROM generate_series(1, 1 + j % 3) b))::simhash
  FROM kc, generate_series(1, 20) j;
CREATE TABLE lat (bits int, part text, r int, mode text, qid int, ms float8, res text);
-- runs sql (%s: the query) for lim queries of the set; records ms and the result
CREATE FUNCTION run(b int, part text, r int, mode text, qset text, lim int, sql text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE rec record; t0 timestamptz; res text;
BEGIN
  FOR rec IN EXECUTE CASE qset
      WHEN 'mixed' THEN 'SELECT qid, q FROM bq ORDER BY hashint4(qid), qid LIMIT $1'
      WHEN 'random' THEN 'SELECT qid, q FROM bq WHERE qid > (SELECT count(*) FROM bq) / 2 ORDER BY qid LIMIT $1'
      ELSE 'SELECT cid AS qid, q FROM kc ORDER BY cid LIMIT $1' END USING lim LOOP
    t0 := clock_timestamp();
    EXECUTE format(sql, quote_literal(rec.q::text)) INTO res;
    INSERT INTO lat VALUES (b, part, r, mode, rec.qid, extract(epoch FROM clock_timestamp() - t0) * 1000, res);
  END LOOP;
END $$;
SQL

FORCE_INDEX="SET enable_seqscan = off;"
FORCE_SEQ="SET enable_indexscan = off; SET enable_bitmapscan = off;"
RQ="SELECT count(id)::text FROM t WHERE simhash_within(fp, %s, @R@)"
KQ="SELECT string_agg(id::text, ',') FROM (SELECT id FROM t ORDER BY fp <~> %s LIMIT 10) s"
# the sequential scan's order, ties by ctid as the index returns them
KQ_SEQ="SELECT string_agg(id::text, ',') FROM (SELECT id FROM t ORDER BY fp <~> %s, ctid LIMIT 10) s"
q1=$(pg -c "SELECT q FROM bq ORDER BY qid LIMIT 1")
# timed SETTINGS PART R MODE QSET LIMIT SQL: in one session, after two warm-up
# queries (catalog caches, plan, buffers), not recorded
timed() {
	pg -c "${1:-SELECT 1}" -c "SELECT run($b, '$2', $3, 'warm', '$5', 2, \$q\$$7\$q\$)" \
		-c "SELECT run($b, '$2', $3, '$4', '$5', $6, \$q\$$7\$q\$)" >/dev/null
}
radius_csv=$(mktemp); knn_csv=$(mktemp)
echo "n,bits,radius,plan,planner_ms,index_ms,seq_ms,ratio,count_mismatches" > "$radius_csv"
echo "n,bits,queries,plan,index_ms,seq_ms,speedup,mismatches" > "$knn_csv"
for b in $BITS; do
	step "bits $b: building the index"
	pg -c "DROP INDEX IF EXISTS t_sh" -c "CREATE INDEX t_sh ON t USING simhash (fp) WITH (bits = $b)" -c "VACUUM ANALYZE t"
	# both plans from shared buffers: the build writes the index around them,
	# and a few warm-up queries read only part of it
	pg -c "CREATE EXTENSION IF NOT EXISTS pg_prewarm" -c "SELECT pg_prewarm('t'), pg_prewarm('t_sh')" >/dev/null ||
		echo "note: pg_prewarm not available, the index starts cold" >&2
	for r in $RADII; do
		sql=${RQ/@R@/$r}
		plan=$(pg -c "EXPLAIN (COSTS OFF) ${sql//%s/\'$q1\'}" | grep -E 'Scan' | head -1 | sed 's/^[ ->]*//; s/ on .*//; s/ using .*//')
		step "bits $b radius $r: planner's plan [$plan], forced index, forced seqscan"
		timed "" radius $r planner mixed "$QUERIES" "$sql"
		timed "$FORCE_INDEX" radius $r index mixed "$QUERIES" "$sql"
		timed "$FORCE_SEQ" radius $r seq mixed "$SEQ_SAMPLE" "$sql"
		# ratio: the forced plan of the planner's choice against the faster forced
		# plan, both on the queries the sequential scan ran
		chosen=index; [ "$plan" = "Seq Scan" ] && chosen=seq
		pg -F , -c "
WITH m AS (SELECT mode, percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) AS ms
             FROM lat WHERE bits = $b AND part = 'radius' AND r = $r GROUP BY mode),
     c AS (SELECT mode, percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) AS ms
             FROM lat WHERE bits = $b AND part = 'radius' AND r = $r AND mode IN ('index', 'seq')
              AND qid IN (SELECT qid FROM lat WHERE bits = $b AND part = 'radius' AND r = $r AND mode = 'seq')
            GROUP BY mode)
SELECT $N, $b, $r, '$plan', round(p.ms::numeric, 3), round(i.ms::numeric, 3), round(s.ms::numeric, 3),
       round(((SELECT ms FROM c WHERE mode = '$chosen') / (SELECT min(ms) FROM c))::numeric, 2),
       (SELECT count(*) FROM lat a JOIN lat c USING (bits, part, r, qid)
         WHERE a.bits = $b AND a.part = 'radius' AND a.r = $r AND a.mode = 'index' AND c.mode IN ('seq', 'planner')
           AND a.res <> c.res)
  FROM m p, m i, m s WHERE p.mode = 'planner' AND i.mode = 'index' AND s.mode = 'seq'" | tee -a "$radius_csv"
	done
	for qs in random planted; do
		plan=$(pg -c "EXPLAIN (COSTS OFF) ${KQ//%s/\'$q1\'}" | grep -E 'Scan' | head -1 | sed 's/^[ ->]*//; s/ on .*//; s/ using .*//')
		step "bits $b KNN ($qs queries): planner's plan [$plan], seqscan"
		timed "" "knn-$qs" 10 index "$qs" "$QUERIES" "$KQ"
		timed "$FORCE_SEQ" "knn-$qs" 10 seq "$qs" "$SEQ_SAMPLE" "$KQ_SEQ"
		pg -F , -c "
WITH m AS (SELECT mode, percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) AS ms
             FROM lat WHERE bits = $b AND part = 'knn-$qs' GROUP BY mode)
SELECT $N, $b, '$qs', '$plan', round(i.ms::numeric, 3), round(s.ms::numeric, 3), round((s.ms / i.ms)::numeric, 1),
       (SELECT count(*) FROM lat a JOIN lat c USING (bits, part, r, qid)
         WHERE a.bits = $b AND a.part = 'knn-$qs' AND a.mode = 'index' AND c.mode = 'seq' AND a.res <> c.res)
  FROM m i, m s WHERE i.mode = 'index' AND s.mode = 'seq'" | tee -a "$knn_csv"
	done
done

# pgvector's HNSW, the approximate reference (bench/pgvector.sh): the same
# fingerprints as bit(64) (tv), an HNSW index (bit_hamming_ops, pgvector's
# defaults m 16, ef_construction 64, built serially), both tables and indexes
# prewarmed; for each query set, QUERIES queries, each run by the simhash
# index of the last layout above and by HNSW at ef_search 40 (pgvector's
# default) and PGVECTOR_EF (200) in turn, then by a sequential scan (the exact
# answer, every query).  recall@10: the returned distances that the exact
# answer's (a multiset) has too, / 10 (a row at a tied distance counts as right).
# Writes planner_knn_pgvector.csv; PGVECTOR=0 skips it, and so does N above
# PGVECTOR_MAX_ROWS (200k, as in scale.sh: a serial HNSW build of 1M rows takes over
# an hour here, bench/REPORT.md).
source bench/pgvector.sh
PGV_EF=${PGVECTOR_EF:-200}
pgv_csv=$(mktemp)
echo "n,queries,ef_search,hnsw_build_s,hnsw_bytes_per_row,hnsw_ms,simhash_ms,simhash_bits,seq_ms,recall_at_10,hnsw_exact_queries,queries_run" >"$pgv_csv"
if [ "$(pg -c "SELECT count(*) FROM pg_available_extensions WHERE name = 'vector'")" = 0 ]; then
	step "SKIP pgvector HNSW: the vector extension is not installed ($PGVECTOR_HOWTO)"
elif [ "${PGVECTOR:-1}" = 0 ]; then
	step "SKIP pgvector HNSW: PGVECTOR=0"
elif [ "$N" -gt "${PGVECTOR_MAX_ROWS:-200000}" ]; then
	step "SKIP pgvector HNSW: N above PGVECTOR_MAX_ROWS = ${PGVECTOR_MAX_ROWS:-200000}"
else
	pg -c "CREATE EXTENSION vector"
	step "pgvector: $(pgvector_status "$(pg -c "SELECT setting FROM pg_config WHERE name = 'SHAREDIR'")/extension"): HNSW build (serial)"
	pg -c "CREATE TABLE tv AS SELECT id, fp::bigint::bit(64) AS b FROM t" -c "VACUUM ANALYZE tv"
	t0=$(date +%s.%N)
	pg -c "SET max_parallel_maintenance_workers = 0" -c "CREATE INDEX tv_hnsw ON tv USING hnsw (b bit_hamming_ops)"
	hnsw_s=$(printf '%.1f' "$(echo "$(date +%s.%N) - $t0" | bc)")
	hnsw_bpr=$(pg -c "SELECT round(pg_relation_size('tv_hnsw')::numeric / count(*), 1) FROM tv")
	pg -c "VACUUM ANALYZE tv" -c "SELECT pg_prewarm('t'), pg_prewarm('t_sh'), pg_prewarm('tv'), pg_prewarm('tv_hnsw')" >/dev/null
	qb1=$(pg -c "SELECT q::bigint::bit(64) FROM bq ORDER BY qid LIMIT 1")
	pg -c "EXPLAIN (COSTS OFF) SELECT id FROM tv ORDER BY b <~> '$qb1' LIMIT 10" | grep -q tv_hnsw ||
		{ echo "FAIL: the HNSW query is not an index scan" >&2; exit 1; }
	pg <<'SQL'
CREATE TABLE pgv_lat (part text, kind text, ef int, qid int, ms float8, d int[]);
-- lim queries of the set, each by the kinds in turn: sh (the simhash index),
-- hnsw (once per ef_search in efs), exact (a sequential scan); d: the distances
CREATE FUNCTION pgv_run(part text, qset text, lim int, kinds text[], efs int[]) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE rec record;
BEGIN
  FOR rec IN EXECUTE CASE qset
      WHEN 'random' THEN 'SELECT qid, q FROM bq WHERE qid > (SELECT count(*) FROM bq) / 2 ORDER BY qid LIMIT $1'
      ELSE 'SELECT cid AS qid, q FROM kc ORDER BY cid LIMIT $1' END USING lim LOOP
    PERFORM pgv_one(part, rec.qid, rec.q, kinds, efs);
  END LOOP;
END $$;
SQL
	pg -c "$PGVECTOR_ONE_SQL"
	for qs in random planted; do
		step "pgvector HNSW ($qs queries): simhash (bits $b), HNSW at ef_search 40 and $PGV_EF, then sequential scans"
		pg -c "SELECT pgv_run('warmup', '$qs', 2, '{sh,hnsw}', '{40,$PGV_EF}')" \
			-c "SELECT pgv_run('$qs', '$qs', $QUERIES, '{sh,hnsw}', '{40,$PGV_EF}')" \
			-c "SELECT pgv_run('$qs', '$qs', $QUERIES, '{exact}', '{}')" >/dev/null
		bad=$(pg -c "SELECT count(*) FROM pgv_lat a JOIN pgv_lat e USING (part, qid)
			WHERE a.part = '$qs' AND a.kind = 'sh' AND e.kind = 'exact' AND a.d IS DISTINCT FROM e.d")
		[ "$bad" = 0 ] || { echo "FAIL: $bad simhash KNN answers differ from the sequential scan's" >&2; exit 1; }
		for ef in 40 "$PGV_EF"; do
			pg -F , -c "
WITH m AS (SELECT kind, percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) AS ms
             FROM pgv_lat WHERE part = '$qs' AND (kind <> 'hnsw' OR ef = $ef) GROUP BY kind),
     r AS (SELECT (SELECT coalesce(sum(least(a.c, b.c)), 0)
                     FROM (SELECT x, count(*) AS c FROM unnest(h.d) x GROUP BY x) a
                     JOIN (SELECT x, count(*) AS c FROM unnest(e.d) x GROUP BY x) b USING (x)) / 10.0 AS recall,
                  h.d = e.d AS exact
             FROM pgv_lat h JOIN pgv_lat e USING (part, qid) WHERE part = '$qs' AND h.kind = 'hnsw' AND h.ef = $ef AND e.kind = 'exact')
SELECT $N, '$qs', $ef, $hnsw_s, $hnsw_bpr, round(h.ms::numeric, 3), round(s.ms::numeric, 3), $b, round(e.ms::numeric, 3),
       (SELECT round(avg(recall), 3) FROM r), (SELECT count(*) FILTER (WHERE exact) FROM r), (SELECT count(*) FROM r)
  FROM m h, m s, m e WHERE h.kind = 'hnsw' AND s.kind = 'sh' AND e.kind = 'exact'" | tee -a "$pgv_csv"
		done
	done
fi
mkdir -p "$BENCH_RESULTS"
# keep the rows of other sizes from earlier runs
for f in planner_radius planner_knn planner_knn_pgvector; do
	new=$radius_csv; [ $f = planner_knn ] && new=$knn_csv; [ $f = planner_knn_pgvector ] && new=$pgv_csv
	# no pgvector rows in this run: the file as it was
	[ $f = planner_knn_pgvector ] && [ "$(wc -l <"$new")" = 1 ] && { rm -f "$new"; continue; }
	if [ -f "$BENCH_RESULTS/$f.csv" ]; then
		tail -n +2 "$BENCH_RESULTS/$f.csv" | awk -F, -v n="$N" '$1 != n' > "$new.old"
		{ head -1 "$new"; sort -t, -k1,1n -s "$new.old" <(tail -n +2 "$new"); } > "$new.all"
		mv "$new.all" "$new"; rm -f "$new.old"
	fi
	mv "$new" "$BENCH_RESULTS/$f.csv"
done
chmod 644 "$BENCH_RESULTS"/planner_*.csv
step "results ($BENCH_RESULTS/planner_radius.csv, planner_knn.csv, planner_knn_pgvector.csv)"
column -t -s, "$BENCH_RESULTS/planner_radius.csv"
column -t -s, "$BENCH_RESULTS/planner_knn.csv"
[ ! -f "$BENCH_RESULTS/planner_knn_pgvector.csv" ] || column -t -s, "$BENCH_RESULTS/planner_knn_pgvector.csv"
exit
}
