#!/usr/bin/env bash
# parallel_build.sh — CREATE INDEX time, serial and with 2 parallel workers,
# simhash beside btree on the same column, same run, interleaved.
#
#   ROWS=4000000 ROUNDS=3 PG_CONFIGS="pg_config /usr/local/pgsql-18.6/bin/pg_config" \
#       bash bench/parallel_build.sh
#
# Each round builds, in turn, btree serial, btree with 2 workers, simhash
# serial, simhash with 2 workers (maintenance_work_mem MWM, default 1GB, so
# that the planner's 32 MB per participant allows 2 workers and both fit in
# memory), each followed by DROP INDEX and CHECKPOINT so that no build pays
# for the previous one's dirty pages.  Data: ROWS random fingerprints (md5
# of the row number), as bench/lib.sh's bench_fp.  Workers are planned by
# the server (max_parallel_maintenance_workers = 2, table size); the build's
# DEBUG1 line is checked to say 2 were planned.  Printed per server: median,
# min and max seconds per variant, and the per-round ratios' medians.
# Under bench/run.sh (SIMHASH_BENCH_CLUSTER=1) it uses that cluster;
# otherwise it starts a throwaway cluster per pg_config in PG_CONFIGS.
# BASELINE=<git revision> (throwaway clusters only) also builds that
# revision's library and measures its simhash builds in the same rounds,
# as "simhash@<rev>" (the installed simhash.so is swapped between builds;
# each build is a new session, so it loads the file then in place), to
# compare before and after a change paired round by round.
# SERIAL_ONLY=1 measures the serial builds only (no check that 2 workers
# are planned): e.g. MWM=64MB SERIAL_ONLY=1 for the spilled serial build.
# PARALLEL_ONLY=1 measures the 2-worker builds only (more rounds in the
# same time when only the parallel path changed).
# Each build also records its CPU seconds (the session and its workers, as
# the postmaster's reaped children) and the 1-minute load average after it.
# MWM below 96MB plans 1 worker (32MB a participant), for btree as well.
# NO_CHECKPOINT=1 skips the CHECKPOINT after each build (bench/scale.sh does
# not checkpoint between its builds); SERVER_OPTS adds server options to a
# throwaway cluster, e.g. bench/scale.sh's "-c fsync=off -c
# full_page_writes=off -c synchronous_commit=off".
# Writes $BENCH_RESULTS/parallel_build.csv.
set -euo pipefail
cd "$(dirname "$0")/.."
ROWS=${ROWS:-$((4000000 * ${SCALE:-1}))}
ROUNDS=${ROUNDS:-3}
MWM=${MWM:-1GB}
PG_CONFIGS=${PG_CONFIGS:-pg_config}
BASELINE=${BASELINE:-}
SERIAL_ONLY=${SERIAL_ONLY:-}
PARALLEL_ONLY=${PARALLEL_ONLY:-}
NO_CHECKPOINT=${NO_CHECKPOINT:-}
SERVER_OPTS=${SERVER_OPTS:-}
BENCH_RESULTS=${BENCH_RESULTS:-$PWD/bench/results}
OUT=$BENCH_RESULTS/parallel_build.csv
mkdir -p "$BENCH_RESULTS"

run_server() {  # the rounds on the cluster at $PGHOST; appends to $OUT
	local label=$1 psql="${TMPC_BIN:+$TMPC_BIN/}psql -X -q -v ON_ERROR_STOP=1 -At"
	$psql <<SQL
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS simhash;
DROP TABLE IF EXISTS pbench;
CREATE TABLE pbench WITH (autovacuum_enabled = off) AS
  SELECT i AS id, (('x' || substr(md5(i::text), 1, 16))::bit(64)::bigint)::simhash AS fp
    FROM generate_series(1, $ROWS) i;
VACUUM ANALYZE pbench;
CHECKPOINT;
-- Seconds one CREATE INDEX takes with the given workers allowed.
CREATE OR REPLACE FUNCTION pbench_build(am text, workers int) RETURNS float8 LANGUAGE plpgsql AS \$\$
DECLARE t0 timestamptz;
BEGIN
  PERFORM set_config('max_parallel_maintenance_workers', workers::text, true);
  PERFORM set_config('maintenance_work_mem', '$MWM', true);
  t0 := clock_timestamp();
  EXECUTE format('CREATE INDEX pbench_idx ON pbench USING %s (fp)', am);
  RETURN extract(epoch FROM clock_timestamp() - t0);
END \$\$;
SQL
	local variants=("btree 0" "btree 2" "simhash 0" "simhash 2")
	[ -z "${BASE_LIB:-}" ] || variants+=("simhash@$BASELINE 0" "simhash@$BASELINE 2")
	[ -z "$SERIAL_ONLY" ] || variants=("btree 0" "simhash 0")
	[ -z "$SERIAL_ONLY" ] || [ -z "${BASE_LIB:-}" ] || variants+=("simhash@$BASELINE 0")
	[ -z "$PARALLEL_ONLY" ] || variants=("btree 2" "simhash 2")
	[ -z "$PARALLEL_ONLY" ] || [ -z "${BASE_LIB:-}" ] || variants+=("simhash@$BASELINE 2")
	# the parallel builds are planned with 2 workers (1 when maintenance_work_mem
	# is below 96MB: the server wants 32MB a participant, for btree too)
	local planned=1 want=2
	[ "$(mwm_mb)" -ge 96 ] || want=1
	[ -n "$SERIAL_ONLY" ] || planned=$($psql -c "SET client_min_messages = debug1" \
		-c "SET max_parallel_maintenance_workers = 2" -c "SET maintenance_work_mem = '$MWM'" \
		-c "CREATE INDEX pbench_idx ON pbench USING simhash (fp)" 2>&1 | grep -c "$want workers planned" || true)
	[ -n "$SERIAL_ONLY" ] || $psql -c "DROP INDEX pbench_idx" -c CHECKPOINT
	[ "$planned" = 1 ] || { echo "the simhash build did not plan $want workers" >&2; exit 1; }
	# CPU seconds of the postmaster's reaped children: a build's session and its
	# workers once they have exited (autovacuum is off for the table)
	local pm
	pm=$(awk '{print $4}' "/proc/$($psql -c "SELECT pid FROM pg_stat_activity WHERE backend_type = 'checkpointer'")/stat")
	reaped_cpu() { awk -v hz="$(getconf CLK_TCK)" '{printf "%.2f", ($16 + $17) / hz}' "/proc/$pm/stat"; }
	for r in $(seq 1 "$ROUNDS"); do
		for v in "${variants[@]}"; do
			set -- $v
			case $1 in  # the library this build loads
			simhash@*) use_lib "$BASE_LIB" ;;
			simhash) [ -z "${BASE_LIB:-}" ] || use_lib "$CAND_LIB" ;;
			esac
			c0=$(reaped_cpu)
			read -r s bpid < <($psql -F ' ' -c "SELECT pbench_build('${1%@*}', $2), pg_backend_pid()")
			# the session's CPU counts once the postmaster has reaped it
			for _ in $(seq 100); do [ -e "/proc/$bpid" ] || break; sleep 0.05; done
			cpu=$(echo "$(reaped_cpu) - $c0" | bc)
			load=$(cut -d' ' -f1 /proc/loadavg)
			$psql -c "DROP INDEX pbench_idx"
			[ -n "$NO_CHECKPOINT" ] || $psql -c CHECKPOINT
			echo "$label,$ROWS,$MWM,$r,$1,$2,$s,$cpu,$load" >> "$OUT"
			printf '   %s round %d: %-16s %d workers %8.2f s  CPU %6.2f s  (load %s)\n' "$label" "$r" "$1" "$2" "$s" \
				"$cpu" "$load"
		done
	done
	[ -z "${BASE_LIB:-}" ] || use_lib "$CAND_LIB"
	$psql -c "DROP TABLE pbench" -c "DROP FUNCTION pbench_build"
}

mwm_mb() {  # maintenance_work_mem MWM in MB
	case $MWM in
	*GB) echo $((${MWM%GB} * 1024)) ;;
	*MB) echo "${MWM%MB}" ;;
	*kB) echo $((${MWM%kB} / 1024)) ;;
	*) echo $((MWM / 1024)) ;;
	esac
}

use_lib() {  # install library $1 as the cluster's simhash.so (rename: atomic)
	cp "$1" "$PKGLIB/simhash.so.new" && mv "$PKGLIB/simhash.so.new" "$PKGLIB/simhash.so"
}

echo "server,rows,mwm,round,am,workers,seconds,cpu_s,load" > "$OUT"
if [ "${SIMHASH_BENCH_CLUSTER:-}" = 1 ]; then
	run_server "$("${TMPC_BIN:+$TMPC_BIN/}psql" -X -At -c 'SHOW server_version' | cut -d' ' -f1)"
else
	for pgc in $PG_CONFIGS; do
		(
			export PG_CONFIG=$pgc
			source tools/tmp-cluster.sh
			tmpc_install parbuild
			if [ -n "$BASELINE" ]; then
				PKGLIB=$TMPC_DIR/install$("$pgc" --pkglibdir)
				CAND_LIB=$TMPC_DIR/candidate.so
				BASE_LIB=$TMPC_DIR/base/simhash.so
				cp "$PKGLIB/simhash.so" "$CAND_LIB"
				mkdir "$TMPC_DIR/base"
				git archive "$BASELINE" | tar -x -C "$TMPC_DIR/base"
				make -s -C "$TMPC_DIR/base" -j"$(nproc)" PG_CONFIG="$pgc" simhash.so >/dev/null
			fi
			tmpc_start -c shared_buffers=1GB -c max_wal_size=8GB -c checkpoint_timeout=30min \
				-c max_worker_processes=8 -c max_parallel_workers=8 $SERVER_OPTS
			run_server "$("$pgc" --version | sed 's/^PostgreSQL \([0-9.]*\).*/\1/')"
		)
	done
fi

# medians per server and variant, and of the per-round ratios
python3 - "$OUT" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
servers = sorted({r["server"] for r in rows})
print("\n| server | rows | mwm | index | workers | median s | min | max | median CPU s | load |")
print("|---|---|---|---|---|---|---|---|---|---|")
t, c, ld = {}, {}, {}
for r in rows:
    k = (r["server"], r["am"], r["workers"])
    t.setdefault(k, {})[r["round"]] = float(r["seconds"])
    c.setdefault(k, {})[r["round"]] = float(r["cpu_s"])
    ld.setdefault(r["server"], []).append(float(r["load"]))
variants = list(dict.fromkeys((r["am"], r["workers"]) for r in rows))
base = next((am for am, w in variants if am.startswith("simhash@")), None)
for s in servers:
    for am, w in variants:
        v = list(t[(s, am, w)].values())
        cv = list(c[(s, am, w)].values())
        print(f"| {s} | {rows[0]['rows']} | {rows[0]['mwm']} | {am} | {w} | {statistics.median(v):.2f} | {min(v):.2f} | {max(v):.2f} "
              f"| {statistics.median(cv):.2f} | {min(ld[s]):.1f}-{max(ld[s]):.1f} |")
print("\n| server | ratio (median of the rounds' ratios) | value | min | max | CPU ratio |")
print("|---|---|---|---|---|---|")
for s in servers:
    def ratio(a, b, name):
        if (s,) + a not in t or (s,) + b not in t:
            return
        x = [t[(s,) + a][k] / t[(s,) + b][k] for k in t[(s,) + a]]
        y = [c[(s,) + a][k] / c[(s,) + b][k] for k in c[(s,) + a] if c[(s,) + b][k] > 0]
        cr = f"{statistics.median(y):.2f}" if y else "-"
        print(f"| {s} | {name} | {statistics.median(x):.2f} | {min(x):.2f} | {max(x):.2f} | {cr} |")
    ratio(("simhash", "2"), ("btree", "2"), "simhash 2 workers / btree 2 workers")
    ratio(("simhash", "0"), ("btree", "0"), "simhash serial / btree serial")
    ratio(("simhash", "2"), ("simhash", "0"), "simhash 2 workers / simhash serial")
    ratio(("btree", "2"), ("btree", "0"), "btree 2 workers / btree serial")
    if base:
        ratio(("simhash", "2"), (base, "2"), f"simhash 2 workers / {base} 2 workers")
        ratio(("simhash", "0"), (base, "0"), f"simhash serial / {base} serial")
        ratio((base, "2"), ("btree", "2"), f"{base} 2 workers / btree 2 workers")
PY
