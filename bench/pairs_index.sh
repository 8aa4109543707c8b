#!/usr/bin/env bash
# pairs_index.sh — simhash_pairs through the table's simhash index (the index
# path) against the same call on a view of the table (the join path: one
# merge self-join per permuted table), on bench/scale.sh's data, radius 3.
#
#   bash bench/pairs_index.sh 1000000 10000000     # sizes; default 1000000
#   ROUNDS=3 JOIN=1 WORK_MEM=256MB bash bench/pairs_index.sh 1000000
#
# For each N: one throwaway cluster (tools/tmp-cluster.sh), N rows (id int,
# fp simhash) generated in SQL as bench/scale.sh does (90% random, 10%
# planted copies 1..6 bits away), a simhash index with default options
# (bits 3, blocks 4), VACUUM ANALYZE.  Then ROUNDS rounds, each timing the
# index path then the join path (JOIN=0: the index path alone, for sizes
# where the join takes hours), in one session, as SELECT count(*) FROM
# simhash_pairs(...); the pair counts must agree or the run fails.  Prints
# each round, the medians (min..max) and the median of the per-round ratios
# index / join.  Settings as bench/scale.sh's: shared_buffers 2GB,
# maintenance_work_mem 1GB, work_mem WORK_MEM (256MB, scale.sh's for pairs),
# fsync off, autovacuum off, no JIT, no parallel query.
set -euo pipefail
cd "$(dirname "$0")/.."
SIZES=${*:-1000000}
ROUNDS=${ROUNDS:-3}
JOIN=${JOIN:-1}
WORK_MEM=${WORK_MEM:-256MB}
source tools/tmp-cluster.sh

median() { sort -g | awk '{a[NR]=$1} END {if (NR % 2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }

for N in $SIZES; do
	tmpc_cleanup
	TMPC_DIR= TMPC_BIN=
	tmpc_start -c shared_buffers=2GB -c maintenance_work_mem=1GB -c fsync=off \
		-c full_page_writes=off -c synchronous_commit=off -c autovacuum=off -c jit=off \
		-c max_parallel_workers_per_gather=0 -c max_wal_size=20GB -c temp_file_limit=40GB
	pg() { tmpc_psql -At "$@"; }
	echo "N=$N: loading ($(uptime | sed 's/.*load/load/'))" >&2
	t0=$(date +%s)
	pg -v n="$N" <<'SQL'
CREATE EXTENSION simhash;
CREATE TABLE t (id int, fp simhash);
INSERT INTO t SELECT i, hashint8extended(i, 0)::simhash FROM generate_series(1, (:n * 9) / 10) i;
INSERT INTO t SELECT (:n * 9) / 10 + i,
       (hashint8extended(c, 0) # (SELECT bit_or(1::bigint << ((s + j * u) & 63)::int) FROM generate_series(0, i % 6) j))::simhash
  FROM (SELECT i, 1 + (hashint8extended(i, 1) & 9223372036854775807) % ((:n * 9) / 10) AS c,
               hashint8extended(i, 2) & 63 AS s, 2 * (hashint8extended(i, 3) & 31) + 1 AS u
          FROM generate_series(1, :n - (:n * 9) / 10) i) p;
CREATE INDEX t_fp ON t USING simhash (fp);
VACUUM ANALYZE t;
CREATE VIEW tv AS SELECT * FROM t;
SQL
	echo "N=$N: loaded and indexed in $(($(date +%s) - t0)) s" >&2
	[ "$(pg -c "SELECT simhash_pairs_index_for('t', 'fp', 3)")" = t_fp ] || { echo "index path not chosen" >&2; exit 1; }
	[ -z "$(pg -c "SELECT simhash_pairs_index_for('tv', 'fp', 3)")" ] || { echo "view not on the join path" >&2; exit 1; }
	timed() { # timed REL: seconds and pair count of simhash_pairs(REL, 'fp', 'id', 3)
		pg -F ' ' -c "SET work_mem = '$WORK_MEM'" -c "
CREATE TEMP TABLE pr AS SELECT clock_timestamp() AS t0, (SELECT count(*) FROM simhash_pairs('$1', 'fp', 'id', 3)) AS n;
SELECT round(extract(epoch FROM clock_timestamp() - t0), 3), n FROM pr"
	}
	idx_s=() join_s=() ratios=()
	for r in $(seq 1 "$ROUNDS"); do
		read -r si ni <<<"$(timed t)"
		idx_s+=("$si")
		if [ "$JOIN" = 1 ]; then
			read -r sj nj <<<"$(timed tv)"
			[ "$ni" = "$nj" ] || { echo "N=$N: index path $ni pairs, join path $nj" >&2; exit 1; }
			join_s+=("$sj")
			ratios+=("$(echo "scale=4; $si / $sj" | bc)")
			echo "N=$N round $r: index path $si s, join path $sj s, $ni pairs ($(uptime | sed 's/.*load/load/'))"
		else
			echo "N=$N round $r: index path $si s, $ni pairs ($(uptime | sed 's/.*load/load/'))"
		fi
	done
	mm() { printf '%s\n' "$@" | median; }
	rng() { printf '%s\n' "$@" | sort -g | sed -n '1p;$p' | paste -sd' '; }
	echo "N=$N: index path median $(mm "${idx_s[@]}") s (min max: $(rng "${idx_s[@]}"))"
	if [ "$JOIN" = 1 ]; then
		echo "N=$N: join path median $(mm "${join_s[@]}") s (min max: $(rng "${join_s[@]}"))"
		echo "N=$N: index/join ratio median $(mm "${ratios[@]}") (min max: $(rng "${ratios[@]}"))"
	fi
	echo "N=$N: index $(pg -c "SELECT pg_size_pretty(pg_relation_size('t_fp'))"), heap $(pg -c "SELECT pg_size_pretty(pg_relation_size('t'))")"
done
tmpc_cleanup
