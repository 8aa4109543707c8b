#!/usr/bin/env bash
# scan_memory.sh — memory and time of the two index scans whose rows were once
# all held: a radius query with ORDER BY, and the NULL keys at the end of a
# scan without conditions; this tree against a base commit (default 1b6cfe3,
# the one before they were bounded).
#
#   bench/scan_memory.sh                     # PostgreSQL 15, against 1b6cfe3
#   BASE=1b6cfe3 PG_CONFIG=/usr/local/pgsql-18.6/bin/pg_config bench/scan_memory.sh
#
# Both builds are installed side by side in one throwaway cluster; the
# library file is swapped before each session (a new backend loads the file it
# finds).  Table: RANDOM random fingerprints (default 500,000), NEAR rows 1..6
# bits from the query point Q (default 200,000) and NULLS rows whose key is
# NULL (default 200,000); the default simhash index; work_mem WORK_MEM
# (default 4MB).  Per query: the scan's memory context ("simhash scan",
# pg_backend_memory_contexts) once a cursor has read every row, for each
# build, then TRIALS (default 5) paired timings (EXPLAIN ANALYZE's execution
# time, builds alternating, first one alternating too): medians with min..max
# and the median of the per-pair ratios this/base.  The sequential scan (with
# its Sort) is timed once per trial as the yardstick.  Never fails on time;
# says so when the two builds return different row counts.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BASE=${BASE:-1b6cfe3} # the commit before the bounded scans
RANDOM_ROWS=${RANDOM_ROWS:-500000}
NEAR=${NEAR:-200000}
NULLS=${NULLS:-200000}
WORK_MEM=${WORK_MEM:-4MB}
TRIALS=${TRIALS:-5}
PG_CONFIG=${PG_CONFIG:-pg_config}
export PG_CONFIG
source "$ROOT/tools/tmp-cluster.sh"

tmpc_install scanmem
pkglib=$TMPC_DIR/install$("$PG_CONFIG" --pkglibdir)
cp "$pkglib/simhash.so" "$pkglib/simhash.so.this"
# the base build, from a clean export of BASE
basesrc=$TMPC_DIR/base
mkdir -p "$basesrc"
git -C "$ROOT" archive "$BASE" | tar -x -C "$basesrc"
nice make -s -C "$basesrc" -j2 PG_CONFIG="$PG_CONFIG" simhash.so > /dev/null
cp "$basesrc/simhash.so" "$pkglib/simhash.so.base"
use() { cp "$pkglib/simhash.so.$1" "$pkglib/simhash.so.tmp" && mv "$pkglib/simhash.so.tmp" "$pkglib/simhash.so"; }

tmpc_start
P() { "$TMPC_BIN/psql" -X -q -v ON_ERROR_STOP=1 -At "$@"; }
Q=0123456789abcdef
use this
P <<SQL
SET client_min_messages = warning;
CREATE EXTENSION simhash;
CREATE TABLE t (id int, fp simhash) WITH (autovacuum_enabled = off);
INSERT INTO t SELECT i, (('x' || substr(md5(i::text), 1, 16))::bit(64)::bigint)::simhash
  FROM generate_series(1, $RANDOM_ROWS) i;
-- 1..6 bits flipped from Q: bits i, i*7, ... (mod 64), distinct for a stride of 7
INSERT INTO t SELECT 10000000 + i, ('$Q'::simhash::bigint #
    (SELECT bit_or(1::bigint << ((i + 7 * j) % 64)) FROM generate_series(0, i % 6) j))::simhash
  FROM generate_series(1, $NEAR) i;
INSERT INTO t SELECT 20000000 + i, NULL FROM generate_series(1, $NULLS) i;
CREATE INDEX t_fp ON t USING simhash (fp);
VACUUM ANALYZE t;
SQL

declare -A QUERY=(
	[radius6_order]="SELECT fp FROM t WHERE fp %@ simhash_query('$Q', 6) ORDER BY fp <~> '$Q'"
	[radius6_order_limit10]="SELECT fp FROM t WHERE fp %@ simhash_query('$Q', 6) ORDER BY fp <~> '$Q' LIMIT 10"
	[radius2_order]="SELECT fp FROM t WHERE fp %@ simhash_query('$Q', 2) ORDER BY fp <~> '$Q'"
	[full_with_nulls]="SELECT fp FROM t"
)
NAMES="radius6_order radius6_order_limit10 radius2_order full_with_nulls"
IDX="SET work_mem = '$WORK_MEM'; SET enable_seqscan = off; SET enable_bitmapscan = off; SET max_parallel_workers_per_gather = 0;"
SEQ="SET work_mem = '$WORK_MEM'; SET enable_indexscan = off; SET enable_indexonlyscan = off; SET enable_bitmapscan = off; SET max_parallel_workers_per_gather = 0;"

# rows and the scan context's bytes once the cursor has read them all
memory() {
	P -c "$IDX" -c "BEGIN" -c "DECLARE c CURSOR FOR $1" -c "MOVE ALL IN c" \
		-c "SELECT (SELECT count(*) FROM ($1) s) || ' rows, ' || total_bytes / 1024 || ' kB'
		      FROM pg_backend_memory_contexts WHERE name = 'simhash scan'" -c "COMMIT"
}
# execution time in ms
ms() { P -c "$1" -c "EXPLAIN (ANALYZE, TIMING OFF) $2" | sed -n 's/^Execution Time: \([0-9.]*\) ms/\1/p'; }
stats() { sort -g | awk '{ v[NR] = $1 } END { printf "%.1f (%.1f..%.1f)", v[int((NR + 1) / 2)], v[1], v[NR] }'; }

echo "scan_memory: $("$PG_CONFIG" --version), base $(git -C "$ROOT" rev-parse --short "$BASE"), this $(git -C "$ROOT" rev-parse --short HEAD)$(git -C "$ROOT" diff --quiet HEAD -- src || echo '+changes'), work_mem $WORK_MEM"
echo "rows: $RANDOM_ROWS random, $NEAR near the query point, $NULLS NULL keys"
for name in $NAMES; do
	q=${QUERY[$name]}
	use base; mb=$(memory "$q")
	use this; mt=$(memory "$q")
	tb=(); tt=(); ts=(); ratios=()
	for ((i = 0; i < TRIALS; i++)); do
		if ((i % 2 == 0)); then
			use base; b=$(ms "$IDX" "$q"); use this; t=$(ms "$IDX" "$q")
		else
			use this; t=$(ms "$IDX" "$q"); use base; b=$(ms "$IDX" "$q")
		fi
		s=$(ms "$SEQ" "$q")
		tb+=("$b"); tt+=("$t"); ts+=("$s")
		ratios+=("$(awk -v a="$t" -v b="$b" 'BEGIN { print a / b }')")
	done
	printf '%-22s base: %-22s this: %s\n' "$name" "$mb" "$mt"
	[ "${mb%% rows*}" = "${mt%% rows*}" ] || echo "$name: THE BUILDS RETURN DIFFERENT ROW COUNTS"
	printf '%-22s ms base %s, this %s, this/base %s; seqscan+sort %s\n' "" \
		"$(printf '%s\n' "${tb[@]}" | stats)" "$(printf '%s\n' "${tt[@]}" | stats)" \
		"$(printf '%s\n' "${ratios[@]}" | sort -g | awk '{ v[NR] = $1 } END { printf "%.2f (%.2f..%.2f)", v[int((NR + 1) / 2)], v[1], v[NR] }')" \
		"$(printf '%s\n' "${ts[@]}" | stats)"
done
