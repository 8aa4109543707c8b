#!/usr/bin/env bash
# vacuum_stream.sh — VACUUM of a simhash index read from a cold cache, with
# and without read streams (src/am/readahead.c).  Run as root: before every
# timed VACUUM the cluster is restarted and the OS page cache dropped, so the
# index's pages come from the disk; the heap is then read once (count(*)) so
# that what differs between the builds is the index's reads.
#
#   sudo bench/vacuum_stream.sh                        # PostgreSQL 15: block by block only
#   sudo PG_CONFIG=/usr/local/pgsql-18.6/bin/pg_config bench/vacuum_stream.sh
#
# On 17+ two builds of this tree are installed side by side, "stream" and
# "nostream" (-DSIMHASH_NO_READ_STREAM, the block-by-block path 15 runs),
# and swapped between restarts; each trial runs every scenario with both,
# in alternating order, on a fresh copy of the same database.  Scenarios on
# a ROWS-row table (default 2,000,000) with a simhash index (one run of
# ROWS/500 pages per table): "sweep" (no deletes: cleanup reads every page),
# "del5" (5% of the rows deleted: bulk delete reads every run page, then the
# sweep) and "del60" (60% deleted: as del5, then cleanup rewrites the
# sparse run, a merge reading every run page again).
# SERVER_OPTS adds server options (e.g. "-c io_method=sync" on 18).
# Prints, per scenario and build, the median VACUUM seconds with min..max,
# and the median of the paired ratios nostream/stream; writes
# $BENCH_RESULTS/vacuum_stream.csv.  Never fails on time.
set -euo pipefail
[ "$(id -u)" = 0 ] || { echo "run as root (drops the OS page cache)" >&2; exit 1; }
ROOT=$(cd "$(dirname "$0")/.." && pwd)
ROWS=${ROWS:-2000000}
TRIALS=${TRIALS:-5}
SCENARIOS=${SCENARIOS:-sweep del5 del60}
BENCH_RESULTS=${BENCH_RESULTS:-$ROOT/bench/results}
PG_CONFIG=${PG_CONFIG:-pg_config}
export PG_CONFIG
mkdir -p "$BENCH_RESULTS"
out=$BENCH_RESULTS/vacuum_stream.csv
source "$ROOT/tools/tmp-cluster.sh"

major=$("$PG_CONFIG" --version | sed -E 's/^PostgreSQL ([0-9]+).*/\1/')
tmpc_install vacstream
pkglib=$TMPC_DIR/install$("$PG_CONFIG" --pkglibdir)
if [ "$major" -ge 17 ]; then
	VARIANTS="stream nostream"
	cp "$pkglib/simhash.so" "$TMPC_DIR/simhash.so.stream"
	# the same tree built with the block-by-block path
	B=$TMPC_DIR/nostream-build
	mkdir -p "$B"
	(cd "$ROOT" && { git ls-files -z; git ls-files -z --others --exclude-standard; } |
		xargs -0 cp --parents -t "$B")
	# the C++ core as tmpc_install built it (no PostgreSQL header: same objects)
	(cd "$ROOT" && cp .pg-build "$B"/ && find src/core -name '*.o' -exec cp --parents -t "$B" {} +)
	make -s -C "$B" -j2 PG_CONFIG="$PG_CONFIG" COPT=-DSIMHASH_NO_READ_STREAM >/dev/null
	cp "$B/simhash.so" "$TMPC_DIR/simhash.so.nostream"
else
	VARIANTS="nostream"
	cp "$pkglib/simhash.so" "$TMPC_DIR/simhash.so.nostream"
fi

OPTS="-c shared_buffers=512MB -c autovacuum=off -c max_wal_size=8GB -c checkpoint_timeout=1h ${SERVER_OPTS:-}"
tmpc_start $OPTS
psql_db() { local db=$1; shift; tmpc_psql -d "$db" "$@"; }

echo "loading $ROWS rows ($("$PG_CONFIG" --version))"
psql_db postgres -v n="$ROWS" <<'SQL'
SET client_min_messages = warning;
CREATE DATABASE base;
\c base
CREATE EXTENSION simhash;
CREATE TABLE t (id int, fp simhash);
INSERT INTO t SELECT i, (('x' || substr(md5(i::text), 1, 16))::bit(64)::bigint)::simhash
  FROM generate_series(1, :n) i;
CREATE INDEX t_fp ON t USING simhash (fp);
SQL
for s in $SCENARIOS; do
	psql_db postgres -c "CREATE DATABASE tmpl_$s TEMPLATE base STRATEGY FILE_COPY"
	case $s in
		del5) psql_db "tmpl_$s" -c 'DELETE FROM t WHERE id % 20 = 0' ;;
		del60) psql_db "tmpl_$s" -c 'DELETE FROM t WHERE id % 5 < 3' ;;
	esac
	# hint bits and pruning now, not in the timed VACUUM
	psql_db "tmpl_$s" -At -c 'SELECT count(*) FROM t' >/dev/null
done
psql_db postgres -c CHECKPOINT
index_pages=$(psql_db base -At -c "SELECT pg_relation_size('t_fp') / 8192")
echo "index: $index_pages pages"

restart_cold() {  # restart with build $1 and nothing of the index in any cache
	tmpc_as_pg "$TMPC_BIN/pg_ctl" -D "$TMPC_DIR/data" -m fast -w stop >/dev/null
	cp "$TMPC_DIR/simhash.so.$1" "$pkglib/simhash.so"
	sync
	echo 3 > /proc/sys/vm/drop_caches
	tmpc_as_pg "$TMPC_BIN/pg_ctl" -D "$TMPC_DIR/data" -l "$TMPC_DIR/server.log" -w \
		-o "-c listen_addresses='' -k $TMPC_DIR $OPTS" start >/dev/null
}

echo "server,scenario,build,trial,rows,index_pages,seconds" > "$out"
for trial in $(seq 1 "$TRIALS"); do
	order=$VARIANTS
	[ $((trial % 2)) = 0 ] && order=$(echo "$VARIANTS" | tr ' ' '\n' | tac | tr '\n' ' ')
	for s in $SCENARIOS; do
		for v in $order; do
			psql_db postgres -c "CREATE DATABASE trial TEMPLATE tmpl_$s STRATEGY FILE_COPY"
			restart_cold "$v"
			psql_db trial -At -c 'SELECT count(*) FROM t' >/dev/null # the heap, into the OS cache
			secs=$(psql_db trial -At <<'SQL'
SET client_min_messages = warning;
CREATE TEMP TABLE t0 AS SELECT clock_timestamp() AS t0;
VACUUM t;
SELECT round(extract(epoch FROM clock_timestamp() - t0)::numeric, 3) FROM t0;
SQL
)
			# the index is whole afterwards (an error stops the script)
			psql_db trial -At -c "SELECT simhash_index_check('t_fp')" >/dev/null
			echo "$major,$s,$v,$trial,$ROWS,$index_pages,$secs" >> "$out"
			echo "trial $trial $s $v: $secs s"
			psql_db postgres -c 'DROP DATABASE trial'
		done
	done
done

python3 - "$out" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
by = {}
for r in rows:
    by.setdefault((r['scenario'], r['build']), {})[r['trial']] = float(r['seconds'])
print(f"PostgreSQL {rows[0]['server']}, {rows[0]['rows']} rows, index {rows[0]['index_pages']} pages, cold cache")
print(f"{'scenario':8} {'build':9} {'median s':>9} {'min..max':>14}   nostream/stream (paired)")
for s in dict.fromkeys(r['scenario'] for r in rows):
    for b in dict.fromkeys(r['build'] for r in rows):
        v = list(by.get((s, b), {}).values())
        if not v:
            continue
        ratio = ''
        if b == 'nostream' and (s, 'stream') in by:
            st = by[(s, 'stream')]
            rs = sorted(by[(s, b)][t] / st[t] for t in st if t in by[(s, b)])
            ratio = f"{statistics.median(rs):.2f} ({rs[0]:.2f}..{rs[-1]:.2f})"
        print(f"{s:8} {b:9} {statistics.median(v):9.2f} {min(v):6.2f}..{max(v):6.2f}   {ratio}")
PY
