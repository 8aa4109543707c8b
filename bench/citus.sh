#!/usr/bin/env bash
# citus.sh — the same N rows on one node and on a Citus coordinator + 2
# workers (three instances on this machine, unix sockets): index build,
# radius-3 latency, KNN latency, simhash_pairs time, index bytes per row, and
# a paper estimate for 8 billion pages from the measured figures.  Writes
# $BENCH_RESULTS/citus.csv and citus.md (bench/results/ when run alone).
#
#   N=1000000 QUERIES=200 SHARDS=8 bash bench/citus.sh
#
# Needs Citus in the server's installation (../shared/deps/citus/install.sh
# builds it); prints SKIP otherwise.  Data: bench/planted.sql (90% random,
# 10% near copies).  "One node" is a local table on the coordinator, so both
# sides run the same server build on the same machine; the three instances
# share its cores, so the distributed side has no more CPU than the local one
# and the ratios show the overhead of distribution, not its speed-up.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
N=${N:-$((1000000 * ${SCALE:-1}))}
QUERIES=${QUERIES:-200}
SHARDS=${SHARDS:-8}
RADIUS=${RADIUS:-3}
RES=${BENCH_RESULTS:-$ROOT/bench/results}
mkdir -p "$RES"

if [ -z "${TMPC_BIN:-}" ]; then
	source tools/tmp-cluster.sh
	tmpc_install citus-bench
	OWN_INSTALL=1
fi
LIBDIR=$("$TMPC_BIN/pg_config" --pkglibdir)
[ -e "$LIBDIR/citus.so" ] || { echo "SKIP: Citus is not installed ($LIBDIR/citus.so absent)"; exit 0; }

as_pg() { if [ "$(id -un)" = postgres ]; then "$@"; elif [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else sudo -u postgres "$@"; fi; }
D=$(mktemp -d /tmp/simhash-citus.XXXXXX)
chmod 755 "$D"; chown postgres: "$D" 2>/dev/null || sudo chown postgres: "$D"
PORTS=(5441 5442 5443)
stop_all() {
	for p in "${PORTS[@]}"; do as_pg "$TMPC_BIN/pg_ctl" -D "$D/n$p" -m immediate stop >/dev/null 2>&1 || true; done
	rm -rf "$D" 2>/dev/null || sudo rm -rf "$D"
	# our own private installation, when we made one (this trap replaces its own)
	if [ -n "${OWN_INSTALL:-}" ]; then tmpc_cleanup; fi
}
trap stop_all EXIT
for p in "${PORTS[@]}"; do
	as_pg "$TMPC_BIN/initdb" -D "$D/n$p" -A trust -U postgres -E UTF8 --locale=C.UTF-8 >/dev/null
	as_pg "$TMPC_BIN/pg_ctl" -D "$D/n$p" -l "$D/n$p.log" -w -o "-p $p -k $D -c listen_addresses='' \
		-c shared_preload_libraries=citus -c shared_buffers=512MB -c work_mem=64MB \
		-c maintenance_work_mem=512MB -c max_parallel_workers_per_gather=0 -c jit=off \
		-c max_wal_size=4GB -c synchronous_commit=off -c max_connections=60" start >/dev/null
done
pg() { local p=$1; shift; "$TMPC_BIN/psql" -X -q -A -t -v ON_ERROR_STOP=1 -h "$D" -p "$p" -U postgres -d postgres "$@"; }
C=${PORTS[0]}
for p in "${PORTS[@]}"; do pg "$p" -c 'CREATE EXTENSION citus' >/dev/null; done
pg $C -c "SELECT citus_set_coordinator_host('$D', $C)" >/dev/null
for p in "${PORTS[@]:1}"; do pg $C -c "SELECT citus_add_node('$D', $p)" >/dev/null; done
pg $C -c 'CREATE EXTENSION simhash'

echo "== loading $N planted rows, $QUERIES queries" >&2
pg $C -v n="$N" -v queries="$QUERIES" < bench/planted.sql
pg $C <<SQL
ALTER TABLE t ADD PRIMARY KEY (id);
CREATE TABLE td (LIKE t INCLUDING ALL);
SELECT create_distributed_table('td', 'id', shard_count => $SHARDS);
INSERT INTO td SELECT * FROM t;
CREATE OR REPLACE FUNCTION bench_seconds(q text) RETURNS float8 LANGUAGE plpgsql AS \$\$
DECLARE t0 timestamptz := clock_timestamp();
BEGIN EXECUTE q; RETURN extract(epoch FROM clock_timestamp() - t0); END \$\$;
-- every query of bq against table tab, one statement each; returns seconds
CREATE OR REPLACE FUNCTION bench_queries(tab text, tmpl text) RETURNS float8 LANGUAGE plpgsql AS \$\$
DECLARE t0 timestamptz := clock_timestamp(); r record; n bigint;
BEGIN
  FOR r IN SELECT q FROM bq ORDER BY qid LOOP
    EXECUTE format(tmpl, tab, r.q) INTO n;
  END LOOP;
  RETURN extract(epoch FROM clock_timestamp() - t0);
END \$\$;
SQL

echo "metric,one_node,citus_2_workers,unit" > "$RES/citus.csv"
fmt() { case $1 in *.*) awk -v x="$1" 'BEGIN{printf "%.3f", x}' ;; *) echo "$1" ;; esac; }
row() {
	local a b; a=$(fmt "$2"); b=$(fmt "$3")
	echo "$1,$a,$b,$4" >> "$RES/citus.csv"; printf '%-30s %14s %14s %s\n' "$1" "$a" "$b" "$4" >&2
}

echo "== index build" >&2
pg $C -c 'VACUUM ANALYZE t' -c 'VACUUM ANALYZE td'   # hint bits set before either build
b1=$(pg $C -c "SELECT bench_seconds('CREATE INDEX t_fp ON t USING simhash (fp)')")
b2=$(pg $C -c "SELECT bench_seconds('CREATE INDEX td_fp ON td USING simhash (fp)')")
pg $C -c 'ANALYZE t' -c 'ANALYZE td'
row index_build_s "$b1" "$b2" s
i1=$(pg $C -c "SELECT pg_relation_size('t_fp')")
i2=$(pg $C -c "SELECT sum(result::bigint) FROM run_command_on_shards('td', \$\$SELECT sum(pg_relation_size(indexrelid)) FROM pg_index WHERE indrelid = '%s'::regclass AND indexrelid::regclass::text LIKE 'td_fp%%'\$\$)")
h1=$(pg $C -c "SELECT pg_relation_size('t')")
row index_bytes "$i1" "$i2" bytes
row index_bytes_per_row "$(( i1 / N ))" "$(( i2 / N ))" bytes
row heap_bytes_per_row "$(( h1 / N ))" "" bytes

echo "== radius $RADIUS and KNN latency" >&2
for what in within knn; do
	case $what in
		within) tmpl="SELECT count(*) FROM %s WHERE simhash_within(fp, %L, $RADIUS)" ;;
		knn) tmpl="SELECT count(*) FROM (SELECT id FROM %s ORDER BY fp <~> %L LIMIT 10) s" ;;
	esac
	best1=; best2=
	for rep in 1 2; do
		s1=$(pg $C -c "SELECT bench_queries('t', \$\$$tmpl\$\$)")
		s2=$(pg $C -c "SELECT bench_queries('td', \$\$$tmpl\$\$)")
		best1=$(echo "$s1 ${best1:-$s1}" | awk '{print ($1 < $2) ? $1 : $2}')
		best2=$(echo "$s2 ${best2:-$s2}" | awk '{print ($1 < $2) ? $1 : $2}')
	done
	row "${what}_ms_per_query" "$(awk -v s="$best1" -v q="$QUERIES" 'BEGIN{printf "%.3f", 1000*s/q}')" \
		"$(awk -v s="$best2" -v q="$QUERIES" 'BEGIN{printf "%.3f", 1000*s/q}')" ms
done

echo "== simhash_pairs radius $RADIUS" >&2
p1=$(pg $C -c "SELECT count(*) FROM simhash_pairs('t', 'fp', 'id', $RADIUS)")
p2=$(pg $C -c "SELECT count(*) FROM simhash_pairs('td', 'fp', 'id', $RADIUS)")
[ "$p1" = "$p2" ] || { echo "simhash_pairs differs: $p1 local, $p2 distributed" >&2; exit 1; }
# the in-memory path (work_mem 64MB holds 1M rows) and the per-table joins (small work_mem)
s_mem=$(pg $C -c "SET work_mem = '256MB'" -c "SELECT bench_seconds('SELECT count(*) FROM simhash_pairs(''t'', ''fp'', ''id'', $RADIUS)')")
s_join=$(pg $C -c "SET work_mem = '4MB'" -c "SELECT bench_seconds('SELECT count(*) FROM simhash_pairs(''t'', ''fp'', ''id'', $RADIUS)')")
s_dist=$(pg $C -c "SELECT bench_seconds('SELECT count(*) FROM simhash_pairs(''td'', ''fp'', ''id'', $RADIUS)')")
# one index probe per row, timed on 1% of the rows and scaled
s_inl=$(pg $C -c "SET enable_seqscan = off" -c "SELECT 100 * bench_seconds('SELECT count(*) FROM t a JOIN t b ON simhash_within(b.fp, a.fp, $RADIUS) AND a.id::text COLLATE \"C\" < b.id::text COLLATE \"C\" WHERE a.id % 100 = 0')")
ntab=$(pg $C -c "SELECT cardinality(simhash_prefix_masks($RADIUS, $N))")
row pairs_found "$p1" "$p2" pairs
row pairs_tables "$ntab" "$ntab" tables
row pairs_in_memory_s "$s_mem" "" s
row pairs_join_s "$s_join" "$s_dist" s
row pairs_index_nested_loop_s_est "$s_inl" "" s

# Paper estimate: 8e9 pages on nodes that keep the index in RAM.
awk -F, -v n="$N" -v ntab8="$(pg $C -c "SELECT cardinality(simhash_prefix_masks($RADIUS, 8000000000))")" \
	-v ntab="$ntab" -v sdist="$s_dist" -v ibytes="$i1" -v hbytes="$h1" -v cores="$(nproc)" '
BEGIN {
	P = 8e9; ram = 128 * 2^30; node_cores = 16
	ib = ibytes / n; hb = hbytes / n
	nodes = int((P * ib) / (0.5 * ram)) + 1
	# distributed all-pairs throughput: row-tables per second per core here
	rate = n * ntab / sdist / cores
	secs = P * ntab8 / (rate * node_cores * nodes)
	printf "estimate_index_bytes_8e9,%.3g,,bytes\n", P * ib
	printf "estimate_heap_bytes_8e9,%.3g,,bytes\n", P * hb
	printf "estimate_nodes_128GB,%d,,nodes (index in half the RAM)\n", nodes
	printf "row_tables_per_core_s,%.0f,,rows x tables / s / core\n", rate
	printf "estimate_all_pairs_8e9_h,%.1f,,hours on those nodes x 16 cores (%d tables)\n", secs / 3600, ntab8
}' | tee -a "$RES/citus.csv" >&2

{
	echo "Same $N planted rows (bench/planted.sql) in a local table and in a table distributed over"
	echo "a Citus coordinator + 2 workers, $SHARDS shards, all three instances on this $(nproc)-core machine"
	echo "(so the distributed side has no extra CPU: ratios show the cost of distribution)."
	echo "Latencies: best of 2 passes over $QUERIES queries, one statement each, server-side."
	echo "simhash_pairs at radius $RADIUS found $p1 pairs on both."
	echo
	echo "| metric | one node | Citus, 2 workers | unit |"
	echo "|---|---:|---:|---|"
	tail -n +2 "$RES/citus.csv" | awk -F, '{printf "| %s | %s | %s | %s |\n", $1, $2, $3, $4}'
	echo
	echo "Estimate for 8e9 pages: index and heap bytes per row as measured here; nodes of 128 GB"
	echo "RAM keeping the index in half of it; all-pairs time from the distributed simhash_pairs"
	echo "throughput measured here (rows x tables per second per core), on 16-core nodes, with the"
	echo "table count the layout picks for 8e9 rows."
} > "$RES/citus.md"
cat "$RES/citus.md"
