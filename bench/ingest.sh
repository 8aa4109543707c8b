#!/usr/bin/env bash
# ingest.sh — the simhash index under continuous ingestion, as ratios
# against baselines measured in the same run:
#   - single-row INSERTs from INGEST_CLIENTS clients into a table of
#     INGEST_BASE rows: rows/s with the simhash index vs with a btree on the
#     same column, and the slowest INSERT statement of each;
#   - radius-3 query latency (p50, p99) from one more client during that
#     ingestion vs the same queries on a bulk-built index of INGEST_BASE rows
#     (idle, and under the load of the btree's ingestion), and p50 on the
#     ingested index once idle (the cost of its runs alone);
#   - peak private memory (RssAnon, sampled every 10 ms) of a backend running
#     VACUUM at maintenance_work_mem = 16MB after 1% of the rows were deleted
#     (every run is rewritten by streaming merges), above its idle level;
#   - index size after the ingestion and a VACUUM vs a bulk build of the same
#     rows; and with a REPEATABLE READ transaction held open in the same
#     database through 5 rounds of "insert 1%; VACUUM", the same ratio.
# Sizes: INGEST_BASE (default 1000000) and INGEST_ROWS (default 100000),
# both times SCALE.  Writes $BENCH_RESULTS/ingest.csv.
source "$(dirname "$0")/lib.sh"
bench_setup_sql
have_am || skip "no index access method simhash in this build"
have_proc simhash_index_runs || skip "no simhash_index_runs in this build"
BASE=$((${INGEST_BASE:-1000000} * SCALE))
ROWS=$((${INGEST_ROWS:-100000} * SCALE))
CLIENTS=${INGEST_CLIENTS:-2}
out=$BENCH_RESULTS/ingest.csv
W=$(mktemp -d /tmp/simhash-ingest.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$W"' EXIT
chmod 777 "$W"

echo "ingest: $BASE rows, then $ROWS single-row INSERTs from $CLIENTS clients"
sql -v n="$BASE" <<'SQL'
SET client_min_messages = warning;
DROP TABLE IF EXISTS ing_bulk, ing_sim, ing_bt, ing_rr, ing_copy, ing_q;
CREATE TABLE ing_bulk (fp simhash NOT NULL);
INSERT INTO ing_bulk SELECT bench_fp(i) FROM generate_series(1, :n) i;
CREATE TABLE ing_sim AS SELECT * FROM ing_bulk;
CREATE TABLE ing_bt AS SELECT * FROM ing_bulk;
CREATE TABLE ing_rr AS SELECT * FROM ing_bulk;
CREATE INDEX ing_bulk_fp ON ing_bulk USING simhash (fp);
CREATE INDEX ing_sim_fp ON ing_sim USING simhash (fp);
CREATE INDEX ing_rr_fp ON ing_rr USING simhash (fp);
CREATE INDEX ing_bt_fp ON ing_bt USING btree (fp);
-- queries: near copies (2 bits flipped) of stored rows
CREATE TABLE ing_q AS SELECT k, bench_flip(bench_fp(k * 997 % :n + 1), 2, k) AS q FROM generate_series(1, 1000) k;
VACUUM ANALYZE ing_bulk, ing_sim, ing_bt, ing_rr, ing_q;
SQL

cat > "$W/insert.sql" <<'SQL'
\set hi random(-2147483648, 2147483647)
\set lo random(0, 4294967295)
INSERT INTO :tbl (fp) VALUES ((((:hi)::bigint << 32) | (:lo)::bigint)::simhash);
SQL
cat > "$W/query.sql" <<'SQL'
\set k random(1, 1000)
SELECT count(*) FROM :tbl WHERE simhash_within(fp, (SELECT q FROM ing_q WHERE k = :k), 3);
SQL

# percentile P (0..100) of the latencies (µs, 3rd column) of pgbench logs, in ms
pct() { cat "$@" | awk '{print $3}' | sort -n | awk -v p="$P" '{a[NR]=$1} END {i=int(NR*p/100); if (i<1) i=1; printf "%.3f", a[i]/1000}'; }
maxlat() { cat "$@" | awk 'BEGIN{m=0} {if ($3>m) m=$3} END {printf "%.1f", m/1000}'; }

# 1. queries on the bulk-built index
(cd "$W" && "$PGBENCH" -n -c 1 -T "${QUERY_SECONDS:-10}" -D tbl=ing_bulk -f query.sql -l --log-prefix=qbulk > qbulk.out 2>&1)
P=50; q50_bulk=$(pct "$W"/qbulk.*[0-9]); P=99; q99_bulk=$(pct "$W"/qbulk.*[0-9])
echo "radius-3 on the bulk-built index: p50 $q50_bulk ms, p99 $q99_bulk ms"

# 2./3. ingestion: ROUNDS rounds alternate the btree table and the simhash
# table, so load from other processes hits both alike; rates are total rows /
# total time.
ROUNDS=${ROUNDS:-2}
per=$((ROWS / CLIENTS / ROUNDS))
secs_bt=0; secs_sim=0; q=0
ingest() {  # ingest TABLE PREFIX: one round; prints its seconds
	local t0 t1
	t0=$(date +%s.%N)
	(cd "$W" && PGOPTIONS='-c synchronous_commit=off' "$PGBENCH" -n -c "$CLIENTS" -j "$CLIENTS" -t "$per" \
		-D tbl="$1" -f insert.sql -l --log-prefix="$2" > "$2.out" 2>&1)
	t1=$(date +%s.%N)
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }'
}
# the query client runs during the btree's ingestion too (on ing_bulk, not
# recorded), so both ingestions share the machine with the same load
queries_while() {  # queries_while PID TABLE PREFIX
	while kill -0 "$1" 2>/dev/null; do
		q=$((q + 1))
		(cd "$W" && "$PGBENCH" -n -c 1 -T 2 -D tbl="$2" -f query.sql -l --log-prefix="$3$q" > "$3$q.out" 2>&1)
	done
}
for ((round = 1; round <= ROUNDS; round++)); do
	ingest ing_bt "ibt$round" > "$W/ibt$round.secs" &
	queries_while $! ing_bulk qother
	wait
	ingest ing_sim "isim$round" > "$W/isim$round.secs" &
	queries_while $! ing_sim qing
	wait
	secs_bt=$(awk -v a="$secs_bt" -v b="$(cat "$W/ibt$round.secs")" 'BEGIN { print a + b }')
	secs_sim=$(awk -v a="$secs_sim" -v b="$(cat "$W/isim$round.secs")" 'BEGIN { print a + b }')
done
done_rows=$((per * CLIENTS * ROUNDS))
tps_bt=$(awk -v n="$done_rows" -v s="$secs_bt" 'BEGIN { printf "%.0f", n / s }')
tps_sim=$(awk -v n="$done_rows" -v s="$secs_sim" 'BEGIN { printf "%.0f", n / s }')
max_bt=$(maxlat "$W"/ibt*.*[0-9]); max_sim=$(maxlat "$W"/isim*.*[0-9])
P=50; q50_ing=$(pct "$W"/qing*.*[0-9]); P=99; q99_ing=$(pct "$W"/qing*.*[0-9])
# the bulk-built index under the same load (queries during the btree's ingestion)
P=50; q50_load=$(pct "$W"/qother*.*[0-9])
# the ingested index (runs and pending buffer as the ingestion left them), idle
(cd "$W" && "$PGBENCH" -n -c 1 -T "${QUERY_SECONDS:-10}" -D tbl=ing_sim -f query.sql -l --log-prefix=qafter > qafter.out 2>&1)
P=50; q50_after=$(pct "$W"/qafter.*[0-9])
echo "btree:   $tps_bt rows/s, slowest INSERT $max_bt ms"
echo "simhash: $tps_sim rows/s, slowest INSERT $max_sim ms"
echo "radius-3 during ingestion: p50 $q50_ing ms, p99 $q99_ing ms (bulk-built index under the same load: p50 $q50_load ms)"
echo "radius-3 on the ingested index, idle: p50 $q50_after ms"
sql -c "SELECT kind, level, entries, pages FROM simhash_index_runs('ing_sim_fp')"

# 4. size after the ingestion and a VACUUM vs a bulk build of the same rows
val "VACUUM ing_sim" > /dev/null
size_ing=$(val "SELECT pg_relation_size('ing_sim_fp')")
val "CREATE TABLE ing_copy AS SELECT * FROM ing_sim" > /dev/null
val "CREATE INDEX ing_copy_fp ON ing_copy USING simhash (fp)" > /dev/null
size_bulk=$(val "SELECT pg_relation_size('ing_copy_fp')")
echo "size after ingestion + VACUUM: $size_ing bytes, bulk build $size_bulk bytes"

# 5. peak memory of VACUUM (streaming merges of every run) at maintenance_work_mem = 16MB
val "DELETE FROM ing_sim WHERE ctid IN (SELECT ctid FROM ing_sim TABLESAMPLE BERNOULLI (1) REPEATABLE (7))" > /dev/null
"$PSQL" -X -At -c "SELECT pg_backend_pid()" -c "SELECT pg_sleep(0.5)" -c "SET maintenance_work_mem = '16MB'" \
	-c "VACUUM ing_sim" > "$W/vac.out" 2>&1 &
vac=$!
while [ ! -s "$W/vac.out" ]; do sleep 0.01; done
pid=$(head -1 "$W/vac.out")
sleep 0.2
idle=$(awk '/^RssAnon/ {print $2}' "/proc/$pid/status")
peak=$idle
while kill -0 "$vac" 2>/dev/null; do
	v=$(awk '/^RssAnon/ {print $2}' "/proc/$pid/status" 2>/dev/null || echo 0)
	[ -n "$v" ] && [ "$v" -gt "$peak" ] && peak=$v
	sleep 0.01
done
wait "$vac"
vac_kb=$((peak - idle))
echo "VACUUM at maintenance_work_mem = 16MB: peak RssAnon $peak kB, $vac_kb kB above idle ($idle kB)"

# 6. a REPEATABLE READ transaction open through 5 rounds of "insert 1%; VACUUM"
"$PSQL" -X -At -c "BEGIN ISOLATION LEVEL REPEATABLE READ" -c "SELECT count(*) FROM ing_rr" \
	-c "SELECT pg_backend_pid()" -c "SELECT pg_sleep(100000)" > "$W/rr.out" 2>&1 &
while [ "$(wc -l < "$W/rr.out")" -lt 3 ]; do sleep 0.05; done
rrpid=$(sed -n 3p "$W/rr.out")
pct1=$((BASE / 100))
for round in 1 2 3 4 5; do
	val "INSERT INTO ing_rr SELECT bench_fp(i) FROM generate_series($((BASE + (round - 1) * pct1 + 1)), $((BASE + round * pct1))) i" > /dev/null
	val "VACUUM ing_rr" > /dev/null
done
size_rr=$(val "SELECT pg_relation_size('ing_rr_fp')")
val "SELECT pg_terminate_backend($rrpid)" > /dev/null
val "DROP TABLE ing_copy" > /dev/null
val "CREATE TABLE ing_copy AS SELECT * FROM ing_rr" > /dev/null
val "CREATE INDEX ing_copy_fp ON ing_copy USING simhash (fp)" > /dev/null
size_rr_bulk=$(val "SELECT pg_relation_size('ing_copy_fp')")
echo "with a REPEATABLE READ snapshot open: $size_rr bytes, bulk build $size_rr_bulk bytes"
val "DROP TABLE ing_bulk, ing_sim, ing_bt, ing_rr, ing_copy, ing_q" > /dev/null

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "" }'; }
{
	echo "metric,value,baseline,ratio,target,base_rows,ingested_rows"
	echo "insert_rows_per_s_vs_btree,$tps_sim,$tps_bt,$(ratio "$tps_sim" "$tps_bt"),>= 0.8,$BASE,$ROWS"
	echo "slowest_insert_ms_vs_btree,$max_sim,$max_bt,$(ratio "$max_sim" "$max_bt"),<= 1000 ms,$BASE,$ROWS"
	echo "radius3_p50_ms_ingesting_vs_bulk,$q50_ing,$q50_bulk,$(ratio "$q50_ing" "$q50_bulk"),<= 3,$BASE,$ROWS"
	echo "radius3_p50_ms_ingesting_vs_bulk_same_load,$q50_ing,$q50_load,$(ratio "$q50_ing" "$q50_load"),,$BASE,$ROWS"
	echo "radius3_p50_ms_ingested_idle_vs_bulk,$q50_after,$q50_bulk,$(ratio "$q50_after" "$q50_bulk"),,$BASE,$ROWS"
	echo "radius3_p99_ms_ingesting_vs_bulk,$q99_ing,$q99_bulk,$(ratio "$q99_ing" "$q99_bulk"),<= 10 ms,$BASE,$ROWS"
	echo "vacuum_peak_kb_vs_mwm_16mb,$vac_kb,16384,$(ratio "$vac_kb" 16384),<= 1 + small,$BASE,$ROWS"
	echo "size_after_ingest_vacuum_vs_bulk,$size_ing,$size_bulk,$(ratio "$size_ing" "$size_bulk"),<= 1.5,$BASE,$ROWS"
	echo "size_rr_5_rounds_vs_bulk,$size_rr,$size_rr_bulk,$(ratio "$size_rr" "$size_rr_bulk"),<= 2,$BASE,$((5 * pct1))"
} > "$out"
column -s, -t < "$out"
