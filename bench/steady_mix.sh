#!/usr/bin/env bash
# steady_mix.sh — does the index hold its throughput under a long mixed load?
# 4 pgbench clients for MIX_SECONDS (default 180) mix single-row inserts,
# deletes and radius-3 queries on a MIX_ROWS-row table (default 1,000,000)
# with the simhash index, autovacuum on; pgbench reports tps every 10 s.
# Prints the tps of the first and the last 30 s and their ratio, and the
# index's runs and size at the end and after a VACUUM, as ratios to its size
# after the bulk build and to a bulk build of the rows the table holds then
# (deletes of random ids miss rows deleted before, so the table grows a
# little); writes steady_mix.csv.
source "$(dirname "$0")/lib.sh"
bench_setup_sql
have_am || skip "no index access method simhash in this build"
N=$((${MIX_ROWS:-1000000} * SCALE))
T=${MIX_SECONDS:-180}
C=${MIX_CLIENTS:-4}
out=$BENCH_RESULTS/steady_mix.csv
W=$(mktemp -d /tmp/simhash-mix.XXXXXX)
trap 'rm -rf "$W"' EXIT
chmod 777 "$W"

echo "loading $N fingerprints"
sql -v n="$N" <<'SQL'
SET client_min_messages = warning;
DROP TABLE IF EXISTS mix;
CREATE TABLE mix (id bigserial PRIMARY KEY, fp simhash NOT NULL);
INSERT INTO mix (fp) SELECT bench_fp(i) FROM generate_series(1, :n) i;
CREATE INDEX mix_fp ON mix USING simhash (fp);
VACUUM ANALYZE mix;
SQL
size0=$(val "SELECT pg_relation_size('mix_fp')")

# 2 radius queries : 1 insert : 1 delete
cat > "$W/read.sql" <<'SQL'
\set id random(1, :n)
SELECT count(*) FROM mix WHERE simhash_within(fp, bench_fp(:id), 3);
SQL
cat > "$W/insert.sql" <<'SQL'
\set i random(1, 1000000000)
INSERT INTO mix (fp) VALUES (bench_flip(bench_fp(:i % :n + 1), 1 + :i % 3, :i));
SQL
cat > "$W/delete.sql" <<'SQL'
\set id random(1, :n)
DELETE FROM mix WHERE id = :id;
SQL

echo "pgbench: $C clients, $T s"
"$PGBENCH" -n -c "$C" -j "$C" -T "$T" -P 10 -D n="$N" \
	-f "$W/read.sql@2" -f "$W/insert.sql@1" -f "$W/delete.sql@1" > "$W/out" 2> "$W/progress" || {
	cat "$W/out" "$W/progress"; exit 1; }
grep -E '^progress' "$W/progress"
# progress lines: "progress: 10.0 s, 1234.5 tps, lat ..."
read -r first last < <(sed -n 's/^progress: \([0-9.]*\) s, \([0-9.]*\) tps.*/\1 \2/p' "$W/progress" |
	awk -v T="$T" '$1 <= 30 {f += $2; nf++} $1 > T - 30 {l += $2; nl++}
		END {printf "%.1f %.1f\n", (nf ? f / nf : 0), (nl ? l / nl : 0)}')
ratio=$(awk -v a="$last" -v b="$first" 'BEGIN {printf "%.2f", (b > 0 ? a / b : 0)}')
runs=$(val "SELECT count(*) FROM simhash_index_runs('mix_fp') WHERE kind = 'run'")
size1=$(val "SELECT pg_relation_size('mix_fp')")
sql -c 'VACUUM mix'
size2=$(val "SELECT pg_relation_size('mix_fp')")
sql -c 'CREATE EXTENSION IF NOT EXISTS pg_freespacemap' >/dev/null 2>&1 || true
fsm=$(val "SELECT count(*) FROM generate_series(1, pg_relation_size('mix_fp') / 8192 - 1) b WHERE pg_freespace('mix_fp', b) > 0" 2>/dev/null || echo "")
echo "tps first 30 s $first, last 30 s $last: ratio $ratio; runs at the end $runs"
r1=$(awk -v a="$size1" -v b="$size0" 'BEGIN {printf "%.2f", a / b}')
r2=$(awk -v a="$size2" -v b="$size0" 'BEGIN {printf "%.2f", a / b}')
rows_end=$(val "SELECT count(*) FROM mix")
sql -c 'CREATE INDEX mix_fp_rebuilt ON mix USING simhash (fp)'
size3=$(val "SELECT pg_relation_size('mix_fp_rebuilt')")
sql -c 'DROP INDEX mix_fp_rebuilt'
r3=$(awk -v a="$size2" -v b="$size3" 'BEGIN {printf "%.2f", a / b}')
echo "index bytes: $size0 after the bulk build, $size1 after the mix, $size2 after a VACUUM (${fsm:-?} free pages)"
echo "index size vs the bulk build: ${r1}x after the mix, ${r2}x after a VACUUM"
echo "after the VACUUM vs a bulk build of the $rows_end rows the table holds then ($size3 bytes): ${r3}x"
echo "rows,clients,seconds,tps_first30,tps_last30,ratio,runs_end,index_bytes_start,index_bytes_end,index_bytes_vacuumed,free_pages,size_ratio_end,size_ratio_vacuumed,rows_end,index_bytes_rebuilt,size_ratio_vacuumed_rebuilt" > "$out"
echo "$N,$C,$T,$first,$last,$ratio,$runs,$size0,$size1,$size2,$fsm,$r1,$r2,$rows_end,$size3,$r3" >> "$out"
