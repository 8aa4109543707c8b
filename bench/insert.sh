#!/usr/bin/env bash
# insert.sh — single-row INSERT rate (one client, pgbench) into a table of N
# fingerprints without index, with a btree on the column, and with the
# simhash index; ratios against no index.  Before that, the bulk build of the
# btree and the simhash index on the same N rows: time and size per row.  synchronous_commit is off, so the
# figure is the cost of the insert itself rather than of the WAL flush.
source "$(dirname "$0")/lib.sh"
bench_setup_sql
have_am || skip "no index access method simhash in this build"
N=$((${INSERT_ROWS:-100000} * SCALE))
T=${BENCH_SECONDS:-6}
out=$BENCH_RESULTS/insert.csv
W=$(mktemp -d /tmp/simhash-pgbench.XXXXXX)
trap 'rm -rf "$W"' EXIT
chmod 777 "$W"

sql -v n="$N" <<'SQL'
SET client_min_messages = warning;
DROP TABLE IF EXISTS ins_none, ins_btree, ins_simhash;
CREATE TABLE ins_none (fp simhash NOT NULL);
INSERT INTO ins_none SELECT bench_fp(i) FROM generate_series(1, :n) i;
CREATE TABLE ins_btree AS SELECT * FROM ins_none;
CREATE TABLE ins_simhash AS SELECT * FROM ins_none;
VACUUM ANALYZE ins_none, ins_btree, ins_simhash;
SQL
# Bulk build of each index on the same N rows: time and size per row.
echo "index,rows,seconds,bytes,bytes_per_row" > "$BENCH_RESULTS/insert_build.csv.tmp"
for idx in "btree|ins_btree|btree" "simhash|ins_simhash|simhash"; do
	IFS='|' read -r name tbl am <<< "$idx"
	secs=$(val "SELECT bench_seconds('CREATE INDEX ${tbl}_fp ON $tbl USING $am (fp)', 1)")
	bytes=$(val "SELECT pg_relation_size('${tbl}_fp')")
	printf 'CREATE INDEX %-8s %8.3f s %12s bytes %6.1f B/row\n' "$name" "$secs" "$bytes" "$(awk -v b="$bytes" -v n="$N" 'BEGIN{print b/n}')"
	echo "$name,$N,$secs,$bytes,$(awk -v b="$bytes" -v n="$N" 'BEGIN{printf "%.1f", b/n}')" >> "$BENCH_RESULTS/insert_build.csv.tmp"
done
mv "$BENCH_RESULTS/insert_build.csv.tmp" "$BENCH_RESULTS/insert_build.csv"
val "VACUUM ANALYZE ins_btree, ins_simhash" >/dev/null
cat > "$W/insert.sql" <<'SQL'
\set hi random(-2147483648, 2147483647)
\set lo random(0, 4294967295)
INSERT INTO :tbl (fp) VALUES ((((:hi)::bigint << 32) | (:lo)::bigint)::simhash);
SQL
# ROUNDS rounds alternate the three tables, so load from other processes hits
# them alike; each keeps its best round.
ROUNDS=${ROUNDS:-3}
declare -A best
for ((r = 1; r <= ROUNDS; r++)); do
	for tbl in ins_none ins_btree ins_simhash; do
		res=$(PGOPTIONS='-c synchronous_commit=off' "$PGBENCH" -n -c 1 -T "$T" -D tbl="$tbl" -f "$W/insert.sql" 2>&1) ||
			{ echo "$res"; exit 1; }
		tps=$(echo "$res" | sed -n 's/^tps = \([0-9.]*\) .*/\1/p' | head -1)
		lat=$(echo "$res" | sed -n 's/^latency average = \([0-9.]*\) ms/\1/p')
		xacts=$(echo "$res" | sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p')
		printf 'round %d %-12s %10s rows/s\n' "$r" "$tbl" "$tps"
		if [ -z "${best[$tbl]:-}" ] || awk -v a="$tps" -v b="${best[$tbl]%%,*}" 'BEGIN { exit !(a > b) }'; then
			best[$tbl]="$tps,$xacts,$lat"
		fi
	done
done
echo "table,index,rows_before,seconds,rows_inserted,rows_per_s,lat_avg_ms" > "$out.tmp"
for tbl in ins_none ins_btree ins_simhash; do
	IFS=, read -r tps xacts lat <<< "${best[$tbl]}"
	echo "$tbl,${tbl#ins_},$N,$T,$xacts,$tps,$lat" >> "$out.tmp"
done
mv "$out.tmp" "$out"
