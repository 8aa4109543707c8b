#!/usr/bin/env bash
# knn_scale.sh — exact KNN (`ORDER BY fp <~> q LIMIT 10`) through the simhash
# index against a single-process sequential scan, at N rows (issue 23, item 3).
#
#   N=1000000 bash bench/knn_scale.sh                  # iteration
#   N=4000000 SHARED_BUFFERS=2GB bash bench/knn_scale.sh
#   N=10000000 SHARED_BUFFERS=4GB SEQ_SAMPLE=5 bash bench/knn_scale.sh
#
# Data sets (generate_series + md5, deterministic):
#  - random: N random fingerprints (the first 64 bits of md5(i)); queries are
#    fresh random fingerprints (10th neighbour at 13-16 bits).
#  - dups: the same, but every 10th row is a copy of one of 10 "hot"
#    fingerprints (N/100 equal rows each); queries are the hot fingerprints
#    with 0..3 bits flipped, so the 10 nearest are all ties among thousands of
#    equal rows (returned in TID order, as `ORDER BY fp <~> q, ctid`).
# Each data set gets the index with default options, VACUUM ANALYZE, and
# pg_prewarm of table and index.  Timing is server-side (clock_timestamp() in
# PL/pgSQL), one backend, max_parallel_workers_per_gather = 0, no JIT.
# Index and sequential scan are interleaved: SEQ_SAMPLE rounds, each timing
# every one of QUERIES index queries and then one sequential scan, so both
# see the same machine load.  Prints per data set the index's median and p95,
# the sequential scan's median and p95, the ratio of the medians, and how
# many of the sampled answers differ (ids in distance-then-TID order, must be
# 0).  Appends to $BENCH_RESULTS/knn_scale.csv.
# REUSE=1 keeps the loaded tables of an earlier run in database $DB (with
# SIMHASH_BENCH_CLUSTER=1, on the cluster of PG* variables): for iterating on
# the scan code, reinstall and rerun without reloading.
# LIBS="before=/path/a.so after=/path/b.so" compares builds paired: every
# round runs the index queries once with each library (installed over the
# server's simhash.so by rename, so a new session loads it; the order rotates
# between rounds), then the sequential scan; one row per library, whose last
# column is the median over (round, query) of its time / the first library's.
# The server must be a private one (SIMHASH_BENCH_CLUSTER=1 with REUSE, or
# the default temporary cluster): the library it loads is replaced.
# ALTERNATE=1 (with LIBS) pairs finer: one session per library, opened while
# its library is installed (a session keeps the library it loaded), and every
# index query runs in each session in turn (the order rotating), SEQ_SAMPLE
# rounds of the QUERIES queries; prints per library its p50, the median of
# its per-query time / the first library's on the same query and round, and
# how many of its answers differ from the first library's and from the
# sequential scan's (one per round).  A query between two others' waits
# wakes with the scheduler's credit on a loaded machine, so its times are
# nearer CPU time than a run of back-to-back queries: no ratio to the
# sequential scan is printed in this mode.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
N=${N:-1000000}
QUERIES=${QUERIES:-100}
SEQ_SAMPLE=${SEQ_SAMPLE:-5}
SETS=${SETS:-"random dups"}
WORK_MEM=${WORK_MEM:-64MB}
LABEL=${LABEL:-$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)}
BENCH_RESULTS=${BENCH_RESULTS:-$ROOT/bench/results}
DB=${DB:-simhash_knn_scale}

step() { printf '\n== %s\n' "$*" >&2; }

if [ "${SIMHASH_BENCH_CLUSTER:-}" != 1 ]; then
	source tools/tmp-cluster.sh
	step "building and installing into a private prefix"
	tmpc_install knn
	tmpc_start -c shared_buffers=${SHARED_BUFFERS:-1GB} -c maintenance_work_mem=1GB \
		-c max_parallel_workers_per_gather=0
fi
PSQL=${TMPC_BIN:+$TMPC_BIN/}psql
pg() { PGOPTIONS="-c client_min_messages=warning -c max_parallel_workers_per_gather=0 -c maintenance_work_mem=1GB -c jit=off -c work_mem=$WORK_MEM" \
	"$PSQL" -X -q -A -t -v ON_ERROR_STOP=1 -P pager=off -d "$DB" "$@"; }
if [ "${REUSE:-}" != 1 ] || [ -z "$("$PSQL" -X -At -c "SELECT 1 FROM pg_database WHERE datname = '$DB'")" ]; then
	"$PSQL" -X -q -c "DROP DATABASE IF EXISTS $DB" -c "CREATE DATABASE $DB"
	pg -c "CREATE EXTENSION simhash" -c "CREATE EXTENSION IF NOT EXISTS pg_prewarm"
fi

for s in $SETS; do
	tab=k_$s
	have=$(pg -c "SELECT count(*) FROM pg_class WHERE relname = '$tab'")
	if [ "$have" = 1 ] && [ "$(pg -c "SELECT n FROM k_meta WHERE tab = '$tab'" 2>/dev/null)" = "$N" ]; then
		step "$s: reusing $tab ($N rows)"
		continue
	fi
	step "$s: loading $N rows and building the index"
	pg -c "CREATE TABLE IF NOT EXISTS k_meta (tab text PRIMARY KEY, n bigint)" -c "DROP TABLE IF EXISTS $tab"
	if [ "$s" = random ]; then
		pg -c "CREATE TABLE $tab AS SELECT i AS id, ('x' || md5(i::text))::bit(64)::simhash AS fp
		         FROM generate_series(1, $N) i" \
		   -c "CREATE TABLE ${tab}_q AS SELECT i AS qid, ('x' || md5('query' || i))::bit(64)::simhash AS q
		         FROM generate_series(1, $QUERIES) i"
	else
		pg -c "CREATE TABLE $tab AS SELECT i AS id,
		         (CASE WHEN i % 10 = 0 THEN 'x' || md5('hot' || (i / 10) % 10) ELSE 'x' || md5(i::text) END)::bit(64)::simhash AS fp
		         FROM generate_series(1, $N) i" \
		   -c "CREATE TABLE ${tab}_q AS SELECT i AS qid,
		         (('x' || md5('hot' || i % 10))::bit(64)::bigint
		          # coalesce((SELECT bit_or(1::bigint << ((hashint4(i * 64 + b) & 2147483647) % 64))
		                        FROM generate_series(1, (i / 10) % 4) b), 0))::simhash AS q
		         FROM generate_series(1, $QUERIES) i"
	fi
	pg -c "CREATE INDEX ${tab}_sh ON $tab USING simhash (fp)" -c "VACUUM ANALYZE $tab" \
	   -c "INSERT INTO k_meta VALUES ('$tab', $N) ON CONFLICT (tab) DO UPDATE SET n = $N"
done

pg <<'SQL'
CREATE TABLE IF NOT EXISTS k_lat (run text, tab text, mode text, qid int, ms float8, res text);
CREATE OR REPLACE FUNCTION k_time(run text, tab text, mode text, qids int[]) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE rec record; t0 timestamptz; res text; sql text;
BEGIN
  -- the sequential scan's order: ties by ctid, as the index returns them
  sql := format(CASE mode WHEN 'index'
      THEN 'SELECT string_agg(id::text, '','') FROM (SELECT id FROM %I ORDER BY fp <~> $1 LIMIT 10) s'
      ELSE 'SELECT string_agg(id::text, '','') FROM (SELECT id FROM %I ORDER BY fp <~> $1, ctid LIMIT 10) s' END, tab);
  IF mode = 'index' THEN
    SET LOCAL enable_seqscan = off;
  ELSE
    SET LOCAL enable_indexscan = off; SET LOCAL enable_bitmapscan = off;
  END IF;
  FOR rec IN EXECUTE format('SELECT qid, q FROM %I WHERE qid = ANY ($1) ORDER BY qid', tab || '_q') USING qids LOOP
    t0 := clock_timestamp();
    EXECUTE sql INTO res USING rec.q;
    INSERT INTO k_lat VALUES (run, tab, mode, rec.qid, extract(epoch FROM clock_timestamp() - t0) * 1000, res);
  END LOOP;
END $$;
SQL

if [ -n "${LIBS:-}" ] && [ "${ALTERNATE:-}" = 1 ]; then
	libdir=$(pg -c "SELECT setting FROM pg_config() WHERE name = 'PKGLIBDIR'")
	read -r -a libs <<<"$LIBS"
	run="alt-$$"
	first=${libs[0]%%=*}
	fifos=$(mktemp -d)
	for s in $SETS; do
		tab=k_$s
		pg -c "SELECT pg_prewarm('$tab'), pg_prewarm('${tab}_sh')" >/dev/null
		ins=() outs=()
		for ((k = 0; k < ${#libs[@]}; k++)); do
			lib=${libs[$k]}
			cp "${lib#*=}" "$libdir/simhash.so.new" && mv "$libdir/simhash.so.new" "$libdir/simhash.so"
			mkfifo "$fifos/$s-in$k" "$fifos/$s-out$k"
			pg <"$fifos/$s-in$k" >"$fifos/$s-out$k" 2>&1 &
			exec {fin}>"$fifos/$s-in$k" {fout}<"$fifos/$s-out$k"
			ins+=("$fin") outs+=("$fout")
			# loads the library now; each answer is one line (a count)
			echo "SELECT count(*) FROM (SELECT k_time('warm', '$tab', 'index', ARRAY[1, 2])) s;" >&"$fin"
			read -r _ <&"$fout"
		done
		for ((j = 0; j < SEQ_SAMPLE; j++)); do
			for ((q = 1; q <= QUERIES; q++)); do
				for ((k = 0; k < ${#libs[@]}; k++)); do
					i=$(( (j + q + k) % ${#libs[@]} ))
					echo "SELECT count(*) FROM (SELECT k_time('$run:${libs[$i]%%=*}:$j', '$tab', 'index', ARRAY[$q])) s;" >&"${ins[$i]}"
					read -r _ <&"${outs[$i]}"
				done
			done
			echo "SELECT count(*) FROM (SELECT k_time('$run:seq:$j', '$tab', 'seq', ARRAY[$(( j * QUERIES / SEQ_SAMPLE + 1 ))])) s;" >&"${ins[0]}"
			read -r _ <&"${outs[0]}"
		done
		for fd in "${ins[@]}"; do exec {fd}>&-; done
		for fd in "${outs[@]}"; do exec {fd}<&-; done
		wait
		pg -F , -c "
WITH l AS (SELECT split_part(run, ':', 2) AS v, split_part(run, ':', 3)::int AS j, qid, ms, res
             FROM k_lat WHERE run LIKE '$run:%' AND tab = '$tab')
SELECT v AS label, $N, '$s', count(*), round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms)::numeric, 3),
       round(percentile_cont(0.95) WITHIN GROUP (ORDER BY ms)::numeric, 3),
       (SELECT round(percentile_cont(0.5) WITHIN GROUP (ORDER BY a.ms / b.ms)::numeric, 3)
          FROM l a JOIN l b USING (j, qid) WHERE a.v = l.v AND b.v = '$first'),
       (SELECT count(*) FROM l a JOIN l b USING (j, qid) WHERE a.v = l.v AND b.v = '$first' AND a.res IS DISTINCT FROM b.res),
       (SELECT count(*) FROM l a JOIN l b USING (qid) WHERE a.v = l.v AND b.v = 'seq' AND a.res IS DISTINCT FROM b.res)
  FROM l WHERE v <> 'seq' GROUP BY v ORDER BY v"
	done | { echo "label,n,set,queries,index_p50_ms,index_p95_ms,paired_vs_$first,differ_from_$first,mismatches_vs_seq"; cat; } | column -t -s,
	rm -rf "$fifos"
	exit 0
fi

if [ -n "${LIBS:-}" ]; then
	libdir=$(pg -c "SELECT setting FROM pg_config() WHERE name = 'PKGLIBDIR'")
	read -r -a libs <<<"$LIBS"
	run="paired-$$"
	first=${libs[0]%%=*}
	for s in $SETS; do
		tab=k_$s
		pg -c "SELECT pg_prewarm('$tab'), pg_prewarm('${tab}_sh')" >/dev/null
		for ((j = 0; j < SEQ_SAMPLE; j++)); do
			for ((k = 0; k < ${#libs[@]}; k++)); do
				lib=${libs[$(( (j + k) % ${#libs[@]} ))]}
				cp "${lib#*=}" "$libdir/simhash.so.new" && mv "$libdir/simhash.so.new" "$libdir/simhash.so"
				pg -c "SELECT k_time('warm', '$tab', 'index', ARRAY[1, 2])" \
				   -c "SELECT k_time('$run:${lib%%=*}:$j', '$tab', 'index', (SELECT array_agg(i) FROM generate_series(1, $QUERIES) i))" >/dev/null
			done
			pg -c "SELECT k_time('$run:seq:$j', '$tab', 'seq', ARRAY[$(( j * QUERIES / SEQ_SAMPLE + 1 ))])" >/dev/null
		done
		pg -F , -c "
WITH l AS (SELECT split_part(run, ':', 2) AS v, split_part(run, ':', 3)::int AS j, qid, ms, res
             FROM k_lat WHERE run LIKE '$run:%' AND tab = '$tab'),
     s AS (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) AS p50 FROM l WHERE v = 'seq')
SELECT v AS label, $N, '$s', count(*), round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms)::numeric, 3),
       round(percentile_cont(0.95) WITHIN GROUP (ORDER BY ms)::numeric, 3),
       (SELECT count(*) FROM l WHERE v = 'seq'), round((SELECT p50 FROM s)::numeric, 1),
       round(((SELECT p50 FROM s) / percentile_cont(0.5) WITHIN GROUP (ORDER BY ms))::numeric, 1),
       (SELECT count(*) FROM l a JOIN l b USING (qid) WHERE a.v = l.v AND b.v = 'seq' AND a.res IS DISTINCT FROM b.res),
       (SELECT round(percentile_cont(0.5) WITHIN GROUP (ORDER BY a.ms / b.ms)::numeric, 3)
          FROM l a JOIN l b USING (j, qid) WHERE a.v = l.v AND b.v = '$first')
  FROM l WHERE v <> 'seq' GROUP BY v ORDER BY v"
	done | { echo "label,n,set,queries,index_p50_ms,index_p95_ms,seq_queries,seq_p50_ms,ratio_p50,mismatches,paired_vs_$first"; cat; } | column -t -s,
	exit 0
fi

mkdir -p "$BENCH_RESULTS"
csv=$BENCH_RESULTS/knn_scale.csv
[ -f "$csv" ] || echo "label,n,set,queries,index_p50_ms,index_p95_ms,seq_queries,seq_p50_ms,seq_p95_ms,ratio_p50,mismatches" > "$csv"
run="$LABEL-$$"
for s in $SETS; do
	tab=k_$s
	step "$s: prewarm, then $SEQ_SAMPLE rounds of $QUERIES index queries and 1 sequential scan"
	pg -c "SELECT pg_prewarm('$tab'), pg_prewarm('${tab}_sh')" >/dev/null
	# warm-up (plan caches, the first touches), not recorded
	pg -c "SELECT k_time('warm', '$tab', 'index', ARRAY[1, 2])" -c "SELECT k_time('warm', '$tab', 'seq', ARRAY[1])" >/dev/null
	for ((j = 1; j <= SEQ_SAMPLE; j++)); do
		seq_q=$(( (j - 1) * QUERIES / SEQ_SAMPLE + 1 ))
		pg -c "SELECT k_time('$run', '$tab', 'index', (SELECT array_agg(i) FROM generate_series(1, $QUERIES) i))" \
		   -c "SELECT k_time('$run', '$tab', 'seq', ARRAY[$seq_q])" >/dev/null
	done
	pg -F , -c "
WITH s AS (SELECT mode, count(*) AS n,
                  percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) AS p50,
                  percentile_cont(0.95) WITHIN GROUP (ORDER BY ms) AS p95
             FROM k_lat WHERE run = '$run' AND tab = '$tab' GROUP BY mode)
SELECT '$LABEL', $N, '$s', i.n, round(i.p50::numeric, 3), round(i.p95::numeric, 3),
       q.n, round(q.p50::numeric, 1), round(q.p95::numeric, 1), round((q.p50 / i.p50)::numeric, 1),
       (SELECT count(*) FROM k_lat a JOIN k_lat b USING (run, tab, qid)
         WHERE a.run = '$run' AND a.tab = '$tab' AND a.mode = 'index' AND b.mode = 'seq' AND a.res IS DISTINCT FROM b.res)
  FROM s i, s q WHERE i.mode = 'index' AND q.mode = 'seq'" | tee -a "$csv"
done
step "results: $csv"
column -t -s, "$csv"
