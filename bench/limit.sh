#!/usr/bin/env bash
# limit.sh — the index against the physical limit of exact search, a packed
# linear scan of the same codes (bench/packed_scan: popcount(x ^ q) over a
# uint64 array, one core), for several table sizes (issue 31).  Part `limit`
# of bench/run.sh.
#
#   LIMIT_ROWS="100000 1000000 4000000" QUERIES=100 ROUNDS=3 bash bench/limit.sh
#
# LIMIT_ROWS defaults to 100000 and 1000000 times SCALE.  Data: bench/planted.sql
# (90% random codes, 10% planted near copies of earlier rows 1..6 bits away;
# queries: half of them centres of planted copies ("near"), half fresh random
# values ("random")), the index with default options, VACUUM ANALYZE,
# pg_prewarm of table and index.  The codes are exported in id order, so the
# packed scan's position order is the index's TID order (ties of KNN broken
# alike).
# Query types: KNN-10 (`ORDER BY fp <~> q LIMIT 10`) for the near and the
# random queries apart, and radius r for r in RADII (default 0 3 6 10 13 16,
# `simhash_within(fp, q, r)`, all queries).  Index times are server-side
# (clock_timestamp() in PL/pgSQL around EXECUTE, so planning is included), one
# backend, warm, max_parallel_workers_per_gather = 0, no JIT, index scans
# forced (enable_seqscan = off).  ROUNDS rounds, each timing every query of
# every type through the index and then the packed scan (AVX2 kernel, then
# scalar), so both see the same machine load.
# Answers are compared: KNN-10 by its distance list (the multiset: both are in
# distance order; the ids of ties are compared too and counted apart), radius
# by its id set.  Also, per type, the shared buffers an index query touches
# (EXPLAIN (ANALYZE, BUFFERS) of up to 10 queries, untimed).
# Appends to $BENCH_RESULTS/limit.csv, one row per N and query type:
#   label,n,query,queries,index_p50_ms,index_p95_ms,scan_p50_ms,scan_ns_row,
#   ratio,scalar_p50_ms,ratio_scalar,rows_avg,buffers_avg,mismatches,
#   tie_id_diffs,load,index_cpu_ms,scan_cpu_ms,ratio_cpu
# ratio = index p50 / packed-scan (AVX2) p50 (< 1: the index is faster);
# ratio_scalar the same against the scalar kernel; load = the 1-minute load
# average before and after the N's timed rounds.  On a loaded machine a query
# of many milliseconds is descheduled and a scan of one is not, so wall times
# favour the short one: the CPU columns are the mean CPU time per query, the
# index's from the backend's /proc/self/schedstat over passes of the same
# queries repeated for at least MIN_PASS_MS (default 300; planning included,
# no answers kept), the scan's from its thread CPU clock, and ratio_cpu their
# quotient.  These columns time EXECUTE of dynamic SQL: every query is parsed
# and planned.  An application would prepare its statement once: the
# prepared columns time the same queries as static SQL in a PL/pgSQL function
# (its plan prepared once and kept, plan_cache_mode = force_generic_plan, the
# query a parameter), the same way (index_prep_cpu_ms, and ratio_prep_cpu to
# the same scan CPU).  Appended after ratio_cpu:
#   index_prep_cpu_ms,ratio_prep_cpu
# LIMIT_INDEX_WITH gives the index options (e.g. "bits = 4"; default: none).
# LIMIT_SERVER_OPTS adds server settings (e.g. "-c simhash.sweep_cache_size=128MB")
# when the bench starts its own cluster.
# KEEP_DB=1 leaves database $DB (the last N's table t, queries bq and the
# timings) for a look afterwards (with TMPC_KEEP=1 when alone: the cluster's
# directory stays, the server is stopped).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
SCALE=${SCALE:-1}
LIMIT_ROWS=${LIMIT_ROWS:-"$((100000 * SCALE)) $((1000000 * SCALE))"}
QUERIES=${QUERIES:-100}
ROUNDS=${ROUNDS:-3}
RADII=${RADII:-"0 3 6 10 13 16"}
MIN_PASS_MS=${MIN_PASS_MS:-300}
LABEL=${LABEL:-$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)}
BENCH_RESULTS=${BENCH_RESULTS:-$ROOT/bench/results}
DB=${DB:-simhash_limit}

step() { printf '\n== %s\n' "$*" >&2; }
load1() { cut -d' ' -f1 /proc/loadavg; }

make -s -C "$ROOT" bench/packed_scan >/dev/null
if [ "${SIMHASH_BENCH_CLUSTER:-}" != 1 ]; then
	source tools/tmp-cluster.sh
	step "building and installing into a private prefix"
	tmpc_install limit
	tmpc_start -c shared_buffers=${SHARED_BUFFERS:-1GB} -c maintenance_work_mem=1GB \
		-c max_parallel_workers_per_gather=0 ${LIMIT_SERVER_OPTS:-}
fi
PSQL=${TMPC_BIN:+$TMPC_BIN/}psql
work=$(mktemp -d /tmp/simhash-limit.XXXXXX)
chmod 755 "$work"
drop_db() {
	rm -rf "$work"
	[ "${KEEP_DB:-}" = 1 ] || "$PSQL" -X -q -c "DROP DATABASE IF EXISTS $DB" >/dev/null 2>&1 || true
}
if [ "${SIMHASH_BENCH_CLUSTER:-}" = 1 ]; then trap drop_db EXIT; else trap 'drop_db; tmpc_cleanup' EXIT; fi
pg() { PGOPTIONS="-c client_min_messages=warning -c max_parallel_workers_per_gather=0 -c maintenance_work_mem=1GB -c jit=off -c work_mem=64MB" \
	"$PSQL" -X -q -A -t -v ON_ERROR_STOP=1 -P pager=off -d "$DB" "$@"; }

"$PSQL" -X -q -c "DROP DATABASE IF EXISTS $DB" -c "CREATE DATABASE $DB"
pg -c "CREATE EXTENSION simhash" -c "CREATE EXTENSION IF NOT EXISTS pg_prewarm"
if [ "$(pg -c "SELECT count(*) FROM pg_am WHERE amname = 'simhash'")" = 0 ] ||
   [ "$(pg -c "SELECT count(*) FROM pg_proc WHERE proname = 'simhash_within'")" = 0 ]; then
	echo "SKIP: no simhash index access method or simhash_within in this build"; exit 0
fi

radii_csv=$(echo "$RADII" | tr ' ' ',')
pg <<'SQL'
CREATE TABLE lat (n bigint, kind text, param int, round int, qid int, ms float8,
                  cnt bigint, dists text, ids text);
CREATE TABLE scan (n bigint, kernel text, kind text, param int, round int, qid int, ns float8,
                   cpu_ns float8, cnt bigint, dists text, ids text);
CREATE TABLE cpu (n bigint, kind text, param int, qset text, round int, queries bigint, cpu_ns float8,
                  prepared bool DEFAULT false);
CREATE TABLE bufs (n bigint, kind text, param int, qid int, buffers bigint);
-- every query of bq through the index: KNN-k, or radius k
CREATE FUNCTION l_time(nrows bigint, kind text, k int, rnd int) RETURNS void LANGUAGE plpgsql AS $$
DECLARE r record; t0 timestamptz; e float8; ids int[]; ds int[]; sql text;
BEGIN
  SET LOCAL enable_seqscan = off;
  sql := CASE kind
    WHEN 'knn' THEN format('SELECT array_agg(id), array_agg(fp <~> $1) FROM
                             (SELECT id, fp FROM t ORDER BY fp <~> $1 LIMIT %s) s', k)
    ELSE format('SELECT array_agg(id), array_agg(fp <~> $1) FROM t WHERE simhash_within(fp, $1, %s)', k) END;
  FOR r IN SELECT qid, q FROM bq ORDER BY qid LOOP
    t0 := clock_timestamp();
    EXECUTE sql INTO ids, ds USING r.q;
    e := extract(epoch FROM clock_timestamp() - t0) * 1000;
    IF kind = 'knn' THEN  -- distance order, as returned
      INSERT INTO lat VALUES (nrows, kind, k, rnd, r.qid, e, coalesce(cardinality(ids), 0),
                              array_to_string(ds, ' '), array_to_string(ids, ' '));
    ELSE  -- ids ascending, distances in the same order
      INSERT INTO lat SELECT nrows, kind, k, rnd, r.qid, e, coalesce(cardinality(ids), 0),
                             string_agg(d::text, ' ' ORDER BY i), string_agg(i::text, ' ' ORDER BY i)
                        FROM unnest(ids, ds) u(i, d);
    END IF;
  END LOOP;
END $$;
-- CPU time of this backend (ns on a CPU, /proc/self/schedstat; exact at each
-- context switch and scheduler tick)
CREATE FUNCTION l_cpu_ns() RETURNS float8 LANGUAGE sql AS $$
  SELECT split_part(pg_read_file('/proc/self/schedstat'), ' ', 1)::float8 $$;
-- the queries of one set through the index, over and over for at least
-- min_ms, no answers kept: the backend's CPU time per query
CREATE FUNCTION l_cpu(nrows bigint, kind text, k int, qset text, rnd int, min_ms float8) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE qs simhash[]; sql text; ids int[]; ds int[]; c0 float8; t0 timestamptz; reps int := 0;
BEGIN
  SET LOCAL enable_seqscan = off;
  sql := CASE kind
    WHEN 'knn' THEN format('SELECT array_agg(id), array_agg(fp <~> $1) FROM
                             (SELECT id, fp FROM t ORDER BY fp <~> $1 LIMIT %s) s', k)
    ELSE format('SELECT array_agg(id), array_agg(fp <~> $1) FROM t WHERE simhash_within(fp, $1, %s)', k) END;
  SELECT array_agg(q ORDER BY qid) INTO qs FROM bq
   WHERE qset = 'all' OR (qset = 'near') = (qid <= (SELECT count(*) FROM bq) / 2);
  t0 := clock_timestamp();
  c0 := l_cpu_ns();
  LOOP
    FOR i IN 1 .. cardinality(qs) LOOP
      EXECUTE sql INTO ids, ds USING qs[i];
    END LOOP;
    reps := reps + 1;
    EXIT WHEN extract(epoch FROM clock_timestamp() - t0) * 1000 >= min_ms;
  END LOOP;
  INSERT INTO cpu VALUES (nrows, kind, k, qset, rnd, reps * cardinality(qs), l_cpu_ns() - c0);
END $$;
-- as l_cpu, with the statement prepared once: static SQL in a function made
-- for this query type (PL/pgSQL keeps its plan; a generic plan, the query a
-- parameter), called over and over
CREATE FUNCTION l_cpu_prep(nrows bigint, kind text, k int, qset text, rnd int, min_ms float8) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE qs simhash[]; c0 float8; t0 timestamptz; reps int := 0;
BEGIN
  SET LOCAL enable_seqscan = off;
  SET LOCAL plan_cache_mode = force_generic_plan;
  EXECUTE format($f$CREATE OR REPLACE FUNCTION pg_temp.l_prep_pass(qs simhash[]) RETURNS void
    LANGUAGE plpgsql AS $b$
    DECLARE ids int[]; ds int[]; q simhash;
    BEGIN
      FOREACH q IN ARRAY qs LOOP
        %s INTO ids, ds;
      END LOOP;
    END $b$ $f$, CASE kind
      WHEN 'knn' THEN format('SELECT array_agg(id), array_agg(fp <~> q) FROM
                               (SELECT id, fp FROM t ORDER BY fp <~> q LIMIT %s) s', k)
      ELSE format('SELECT array_agg(id), array_agg(fp <~> q) FROM t WHERE simhash_within(fp, q, %s)', k) END);
  SELECT array_agg(q ORDER BY qid) INTO qs FROM bq
   WHERE qset = 'all' OR (qset = 'near') = (qid <= (SELECT count(*) FROM bq) / 2);
  PERFORM pg_temp.l_prep_pass(qs[1:1]);  -- parsed and planned here, untimed
  t0 := clock_timestamp();
  c0 := l_cpu_ns();
  LOOP
    PERFORM pg_temp.l_prep_pass(qs);
    reps := reps + 1;
    EXIT WHEN extract(epoch FROM clock_timestamp() - t0) * 1000 >= min_ms;
  END LOOP;
  INSERT INTO cpu VALUES (nrows, kind, k, qset, rnd, reps * cardinality(qs), l_cpu_ns() - c0, true);
END $$;
-- shared buffers (hit + read) one index query touches, from EXPLAIN (ANALYZE,
-- BUFFERS); after one query untimed, as the backend's first sweep reads every
-- page of table 0 to keep its keys (simhash.sweep_cache_size)
CREATE FUNCTION l_bufs(nrows bigint, kind text, k int, lim int) RETURNS void LANGUAGE plpgsql AS $$
DECLARE r record; p json; sql text;
BEGIN
  SET LOCAL enable_seqscan = off;
  sql := CASE kind
    WHEN 'knn' THEN format('EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) SELECT id FROM t ORDER BY fp <~> $1 LIMIT %s', k)
    ELSE format('EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) SELECT id FROM t WHERE simhash_within(fp, $1, %s)', k) END;
  EXECUTE sql INTO p USING (SELECT q FROM bq ORDER BY qid LIMIT 1);
  FOR r IN SELECT qid, q FROM bq WHERE qid % greatest(1, (SELECT count(*) FROM bq) / lim) = 0 ORDER BY qid LOOP
    EXECUTE sql INTO p USING r.q;
    INSERT INTO bufs VALUES (nrows, kind, k, r.qid,
      (p -> 0 -> 'Plan' ->> 'Shared Hit Blocks')::bigint + (p -> 0 -> 'Plan' ->> 'Shared Read Blocks')::bigint);
  END LOOP;
END $$;
SQL

mkdir -p "$BENCH_RESULTS"
csv=$BENCH_RESULTS/limit.csv
[ -f "$csv" ] || echo "label,n,query,queries,index_p50_ms,index_p95_ms,scan_p50_ms,scan_ns_row,ratio,scalar_p50_ms,ratio_scalar,rows_avg,buffers_avg,mismatches,tie_id_diffs,load,index_cpu_ms,scan_cpu_ms,ratio_cpu,index_prep_cpu_ms,ratio_prep_cpu" > "$csv"
kernels=$("$ROOT/bench/packed_scan" /dev/null /dev/null --kernel avx2 2>/dev/null >/dev/null && echo "avx2 scalar" || echo scalar)

for N in $LIMIT_ROWS; do
	step "N=$N: loading (10% planted near copies), building the index"
	pg -c "DROP TABLE IF EXISTS t, bq" >/dev/null
	pg -v n="$N" -v queries="$QUERIES" < bench/planted.sql
	pg -c "CREATE INDEX t_sh ON t USING simhash (fp) ${LIMIT_INDEX_WITH:+WITH ($LIMIT_INDEX_WITH)}" -c "VACUUM ANALYZE t" >/dev/null
	# ids 1..N once each: position i in the export is id i + 1
	if [ "$(pg -c "SELECT min(id) = 1 AND max(id) = count(*) AND count(DISTINCT id) = count(*) FROM t")" != t ]; then
		echo "ids of t are not 1..$N" >&2; exit 1
	fi
	pg -c "COPY (SELECT fp::bigint FROM t ORDER BY id) TO STDOUT" > "$work/codes"
	pg -c "COPY (SELECT qid, q::bigint FROM bq ORDER BY qid) TO STDOUT" > "$work/queries"
	for kind in knn $RADII; do
		if [ "$kind" = knn ]; then pg -c "SELECT l_bufs($N, 'knn', 10, 10)" >/dev/null
		else pg -c "SELECT l_bufs($N, 'radius', $kind, 10)" >/dev/null; fi
	done
	pg -c "SELECT pg_prewarm('t'), pg_prewarm('t_sh')" >/dev/null
	# warm-up, not recorded
	pg -c "SELECT l_time(-1, 'knn', 10, 0)" -c "SELECT l_time(-1, 'radius', 13, 0)" >/dev/null
	"$ROOT/bench/packed_scan" "$work/codes" "$work/queries" --knn 10 --radius "$radii_csv" >/dev/null 2>&1
	load_a=$(load1)
	for ((j = 1; j <= ROUNDS; j++)); do
		step "N=$N: round $j of $ROUNDS (load $(load1))"
		args=(-c "SELECT l_time($N, 'knn', 10, $j)")
		for r in $RADII; do args+=(-c "SELECT l_time($N, 'radius', $r, $j)"); done
		args+=(-c "SELECT l_cpu($N, 'knn', 10, 'near', $j, $MIN_PASS_MS)" -c "SELECT l_cpu($N, 'knn', 10, 'random', $j, $MIN_PASS_MS)")
		for r in $RADII; do args+=(-c "SELECT l_cpu($N, 'radius', $r, 'all', $j, $MIN_PASS_MS)"); done
		args+=(-c "SELECT l_cpu_prep($N, 'knn', 10, 'near', $j, $MIN_PASS_MS)" -c "SELECT l_cpu_prep($N, 'knn', 10, 'random', $j, $MIN_PASS_MS)")
		for r in $RADII; do args+=(-c "SELECT l_cpu_prep($N, 'radius', $r, 'all', $j, $MIN_PASS_MS)"); done
		pg "${args[@]}" >/dev/null
		for kern in $kernels; do
			"$ROOT/bench/packed_scan" "$work/codes" "$work/queries" --knn 10 --radius "$radii_csv" \
				--kernel "$kern" 2>"$work/scan.err" | sed "s/^\([a-z0-9]*\),\([a-z]*\),\([0-9]*\),1,/\1,\2,\3,$j,/" \
				> "$work/scan.csv"
			cat "$work/scan.err" >&2
			pg -c "CREATE TEMP TABLE s (kernel text, kind text, param int, round int, qid int, ns float8, cpu_ns float8, cnt bigint, dists text, ids text)" \
			   -c "\\copy s FROM '$work/scan.csv' CSV HEADER" \
			   -c "INSERT INTO scan SELECT $N, * FROM s"
		done
	done
	load_b=$(load1)
	pg -F , -c "
WITH q AS (SELECT qid, CASE WHEN qid <= (SELECT count(*) FROM bq) / 2 THEN 'near' ELSE 'random' END AS qset FROM bq),
     i AS (SELECT l.*, CASE WHEN kind = 'knn' THEN 'knn' || param || ' ' || qset ELSE 'radius ' || param END AS query
             FROM lat l JOIN q USING (qid) WHERE n = $N),
     s AS (SELECT l.*, CASE WHEN kind = 'knn' THEN 'knn' || param || ' ' || qset ELSE 'radius ' || param END AS query
             FROM scan l JOIN q USING (qid) WHERE n = $N),
     iq AS (SELECT query, min(kind) AS kind, min(param) AS param, count(*) AS queries,
                   percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) AS p50,
                   percentile_cont(0.95) WITHIN GROUP (ORDER BY ms) AS p95, avg(cnt) AS rows_avg
              FROM i GROUP BY query),
     sq AS (SELECT query, kernel, percentile_cont(0.5) WITHIN GROUP (ORDER BY ns) / 1e6 AS p50,
                   avg(cpu_ns) / 1e6 AS cpu
              FROM s GROUP BY query, kernel),
     ic AS (SELECT CASE WHEN kind = 'knn' THEN 'knn' || param || ' ' || qset ELSE 'radius ' || param END AS query,
                   sum(cpu_ns) / sum(queries) / 1e6 AS cpu
              FROM cpu WHERE n = $N AND NOT prepared GROUP BY 1),
     ip AS (SELECT CASE WHEN kind = 'knn' THEN 'knn' || param || ' ' || qset ELSE 'radius ' || param END AS query,
                   sum(cpu_ns) / sum(queries) / 1e6 AS cpu
              FROM cpu WHERE n = $N AND prepared GROUP BY 1),
     chk AS (SELECT i.query,
                    count(*) FILTER (WHERE i.cnt <> s.cnt OR (i.kind = 'knn' AND i.dists IS DISTINCT FROM s.dists)
                                     OR (i.kind = 'radius' AND i.ids IS DISTINCT FROM s.ids)) AS mismatches,
                    count(*) FILTER (WHERE i.kind = 'knn' AND i.dists IS NOT DISTINCT FROM s.dists
                                     AND i.ids IS DISTINCT FROM s.ids) AS tie_ids
               FROM i JOIN s USING (round, qid, kind, param) GROUP BY i.query)
SELECT '$LABEL', $N, iq.query, iq.queries, round(iq.p50::numeric, 4), round(iq.p95::numeric, 4),
       round(a.p50::numeric, 4), round((a.p50 * 1e6 / $N)::numeric, 3), round((iq.p50 / a.p50)::numeric, 3),
       round(b.p50::numeric, 4), round((iq.p50 / b.p50)::numeric, 3), round(iq.rows_avg, 1),
       (SELECT round(avg(buffers), 1) FROM bufs JOIN q USING (qid)
         WHERE n = $N AND bufs.kind = iq.kind AND bufs.param = iq.param
           AND (iq.kind = 'radius' OR iq.query LIKE '% ' || q.qset)),
       chk.mismatches, chk.tie_ids, '$load_a-$load_b',
       round(ic.cpu::numeric, 4), round(a.cpu::numeric, 4), round((ic.cpu / a.cpu)::numeric, 3),
       round(ip.cpu::numeric, 4), round((ip.cpu / a.cpu)::numeric, 3)
  FROM iq JOIN sq a ON a.query = iq.query AND a.kernel = '${kernels%% *}'
          JOIN sq b ON b.query = iq.query AND b.kernel = 'scalar'
          JOIN chk ON chk.query = iq.query
          LEFT JOIN ic ON ic.query = iq.query
          LEFT JOIN ip ON ip.query = iq.query
 ORDER BY iq.kind, iq.param, iq.query" | tee -a "$csv"
done
step "results: $csv"
column -t -s, "$csv"
bad=$(pg -c "SELECT count(*) FROM lat i JOIN scan s USING (n, round, qid, kind, param)
             WHERE i.n > 0 AND (i.cnt <> s.cnt OR (kind = 'knn' AND i.dists IS DISTINCT FROM s.dists)
                                OR (kind = 'radius' AND i.ids IS DISTINCT FROM s.ids))")
if [ "$bad" != 0 ]; then
	echo "limit: $bad answers differ between the index and the packed scan" >&2
	exit 1
fi
echo "limit: every answer of the index equals the packed scan's"
