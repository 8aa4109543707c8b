#!/usr/bin/env bash
# insert.sh — single-row INSERT rate (one client, pgbench) into a table of N
# fingerprints without index, with a btree on the column, and with the
# simhash index; ratios against no index.  synchronous_commit is off, so the
# figure is the cost of the insert itself rather than of the WAL flush.
source "$(dirname "$0")/lib.sh"
bench_setup_sql
have_am || skip "no index access method simhash in this build"
N=$((${INSERT_ROWS:-100000} * SCALE))
T=${BENCH_SECONDS:-8}
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
CREATE INDEX ON ins_btree (fp);
CREATE INDEX ON ins_simhash USING simhash (fp);
VACUUM ANALYZE ins_none, ins_btree, ins_simhash;
SQL
cat > "$W/insert.sql" <<'SQL'
\set hi random(-2147483648, 2147483647)
\set lo random(0, 4294967295)
INSERT INTO :tbl (fp) VALUES ((((:hi)::bigint << 32) | (:lo)::bigint)::simhash);
SQL
echo "table,index,rows_before,seconds,rows_inserted,rows_per_s,lat_avg_ms" > "$out.tmp"
for tbl in ins_none ins_btree ins_simhash; do
	res=$(PGOPTIONS='-c synchronous_commit=off' "$PGBENCH" -n -c 1 -T "$T" -D tbl="$tbl" -f "$W/insert.sql" 2>&1) ||
		{ echo "$res"; exit 1; }
	tps=$(echo "$res" | sed -n 's/^tps = \([0-9.]*\) .*/\1/p' | head -1)
	lat=$(echo "$res" | sed -n 's/^latency average = \([0-9.]*\) ms/\1/p')
	xacts=$(echo "$res" | sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p')
	printf '%-12s %10s rows/s\n' "$tbl" "$tps"
	echo "$tbl,${tbl#ins_},$N,$T,$xacts,$tps,$lat" >> "$out.tmp"
done
mv "$out.tmp" "$out"
