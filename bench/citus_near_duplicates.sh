#!/usr/bin/env bash
# citus_near_duplicates.sh — simhash_near_duplicates of the same real-text
# documents in a local table and in a table distributed over a Citus
# coordinator + 2 workers (three instances on this machine): wall time,
# pairs, and the CPU seconds of the coordinator's backend against those of
# each worker's processes (utime + stime from /proc: the live processes plus
# the children their postmaster has reaped, before and after the call).
#
#   CSV=docs.csv THRESHOLD=0.8 SHARDS=8 ROUNDS=2 bash bench/citus_near_duplicates.sh
#
# On the distributed table simhash_near_duplicates joins on the workers
# (simhash_near_duplicates_distributed); the two tables alternate ROUNDS
# times, each line with the load average at its start.
# CSV holds (key, body) rows, e.g. the corpus of bench/neardup_quality.py.
# Needs Citus in the server's installation; prints SKIP otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
CSV=${CSV:?CSV=file of key,body rows}
THRESHOLD=${THRESHOLD:-0.8}
SHARDS=${SHARDS:-8}
ROUNDS=${ROUNDS:-1}

if [ -z "${TMPC_BIN:-}" ]; then
	source tools/tmp-cluster.sh
	tmpc_install citus-nd-bench
	OWN_INSTALL=1
fi
LIBDIR=$("$TMPC_BIN/pg_config" --pkglibdir)
[ -e "$LIBDIR/citus.so" ] || { echo "SKIP: Citus is not installed ($LIBDIR/citus.so absent)"; exit 0; }

as_pg() { if [ "$(id -un)" = postgres ]; then "$@"; elif [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else sudo -u postgres "$@"; fi; }
D=$(mktemp -d /tmp/simhash-citus-nd.XXXXXX)
chmod 755 "$D"; chown postgres: "$D" 2>/dev/null || sudo chown postgres: "$D"
PORTS=(5461 5462 5463)
stop_all() {
	for p in "${PORTS[@]}"; do as_pg "$TMPC_BIN/pg_ctl" -D "$D/n$p" -m immediate stop >/dev/null 2>&1 || true; done
	rm -rf "$D" 2>/dev/null || sudo rm -rf "$D"
	if [ -n "${OWN_INSTALL:-}" ]; then tmpc_cleanup; fi
}
trap stop_all EXIT
for p in "${PORTS[@]}"; do
	as_pg "$TMPC_BIN/initdb" -D "$D/n$p" -A trust -U postgres -E UTF8 --locale=C.UTF-8 >/dev/null
	as_pg "$TMPC_BIN/pg_ctl" -D "$D/n$p" -l "$D/n$p.log" -w -o "-p $p -k $D -c listen_addresses='' \
		-c shared_preload_libraries=citus -c shared_buffers=256MB -c work_mem=64MB \
		-c max_parallel_workers_per_gather=0 -c jit=off -c synchronous_commit=off \
		-c max_connections=60" start >/dev/null
done
pg() { local p=$1; shift; "$TMPC_BIN/psql" -X -q -A -t -v ON_ERROR_STOP=1 -h "$D" -p "$p" -U postgres -d postgres "$@"; }
C=${PORTS[0]}
for p in "${PORTS[@]}"; do pg "$p" -c 'CREATE EXTENSION citus' >/dev/null; done
pg $C -c "SELECT citus_set_coordinator_host('$D', $C)" >/dev/null
for p in "${PORTS[@]:1}"; do pg $C -c "SELECT citus_add_node('$D', $p)" >/dev/null; done
pg $C -c 'CREATE EXTENSION simhash'

pg $C -c 'CREATE TABLE nd (k text PRIMARY KEY, body text NOT NULL, fp simhash)'
pg $C -c '\copy nd (k, body) FROM STDIN WITH (FORMAT csv)' < "$CSV"
pg $C -c 'UPDATE nd SET fp = simhash(body)' -c 'VACUUM ANALYZE nd'
pg $C -c 'CREATE TABLE ndd (LIKE nd INCLUDING ALL)' \
	-c "SELECT create_distributed_table('ndd', 'k', shard_count => $SHARDS)" -c 'INSERT INTO ndd SELECT * FROM nd' \
	-c 'VACUUM ANALYZE ndd' >/dev/null
echo "rows: $(pg $C -c 'SELECT count(*) FROM ndd')" >&2

# CPU seconds (utime + stime, children reaped included) of a server's processes
ticks=$(getconf CLK_TCK)
node_cpu() {
	local pm; pm=$(head -1 "$D/n$1/postmaster.pid")
	{ awk '{print $14 + $15 + $16 + $17}' "/proc/$pm/stat"
	  for c in $(pgrep -P "$pm"); do awk '{print $14 + $15}' "/proc/$c/stat" 2>/dev/null || true; done
	} | awk -v t="$ticks" '{s += $1} END {printf "%.2f", s / t}'
}
# one session: its own CPU before and after, the call timed in between
run() {
	local tab=$1 wm=$2
	pg $C <<SQL
SET work_mem = '$wm';
SET client_min_messages = notice;
CREATE TEMP TABLE cpu0 AS SELECT pg_read_file('/proc/' || pg_backend_pid() || '/stat') AS s, clock_timestamp() AS t0;
CREATE TEMP TABLE res_$tab AS SELECT * FROM simhash_near_duplicates('$tab', 'fp', 'body', 'k', $THRESHOLD);
SELECT count(*), round(extract(epoch FROM clock_timestamp() - t0)::numeric, 2),
       round(((split_part(split_part(pg_read_file('/proc/' || pg_backend_pid() || '/stat'), ') ', 2), ' ', 12)::bigint
             + split_part(split_part(pg_read_file('/proc/' || pg_backend_pid() || '/stat'), ') ', 2), ' ', 13)::bigint)
            - (split_part(split_part(s, ') ', 2), ' ', 12)::bigint + split_part(split_part(s, ') ', 2), ' ', 13)::bigint))
            / $ticks.0, 2)
  FROM cpu0, res_$tab GROUP BY t0, s;
\copy res_$tab TO '$D/res_$tab.txt'
SQL
}
for _ in $(seq "$ROUNDS"); do
for tab in nd ndd; do
	load=$(cut -d' ' -f1 /proc/loadavg)
	w1a=$(node_cpu "${PORTS[1]}"); w2a=$(node_cpu "${PORTS[2]}"); ca=$(node_cpu $C)
	IFS='|' read -r pairs secs backend < <(run "$tab" 4GB)
	sleep 2 # the backends Citus closes at the end of the call are reaped: their CPU counts
	w1b=$(node_cpu "${PORTS[1]}"); w2b=$(node_cpu "${PORTS[2]}"); cb=$(node_cpu $C)
	printf '%-4s pairs %s  wall %ss  coordinator backend %ss  coordinator all %ss  worker1 %ss  worker2 %ss  load %s\n' \
		"$tab" "$pairs" "$secs" "$backend" "$(awk -v a="$ca" -v b="$cb" 'BEGIN{printf "%.2f", b-a}')" \
		"$(awk -v a="$w1a" -v b="$w1b" 'BEGIN{printf "%.2f", b-a}')" \
		"$(awk -v a="$w2a" -v b="$w2b" 'BEGIN{printf "%.2f", b-a}')" "$load"
done
done
if cmp -s <(sort "$D/res_nd.txt") <(sort "$D/res_ndd.txt"); then
	echo "same pairs and similarities on both"
else
	echo "pairs DIFFER"; diff <(sort "$D/res_nd.txt") <(sort "$D/res_ndd.txt") | head; exit 1
fi
