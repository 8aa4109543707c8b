#!/usr/bin/env bash
# work_mem.sh — peak memory of the batch functions (simhash_find_all,
# simhash_find_clusters, window simhash_cluster) on N equal fingerprints
# (default 100000: 5*10^9 pairs at distance 0) at WORK_MEM (default 64MB).
# Each query runs in a fresh session; the backend's peak resident memory
# (VmHWM of /proc/PID/status, so the server must be local and readable) is
# read before and after it, and the growth is printed beside work_mem.
# simhash_find_all streams its 5*10^9 pairs into a spilling tuplestore until
# STREAM_SECONDS (default 20) of statement_timeout: the growth, the time from
# the timeout to the error (interrupt latency) and the pairs written per
# second (from a 10^4-fingerprint run to completion) are printed.
# A part of bench/run.sh (PARTS=work_mem) or standalone with PG* set.
source "$(dirname "$0")/lib.sh"
N=${N:-100000}
WORK_MEM=${WORK_MEM:-64MB}
STREAM_SECONDS=${STREAM_SECONDS:-20}
have_proc simhash_find_all || skip "simhash_find_all is not installed"
out=$BENCH_RESULTS/work_mem.csv
wm_kb=$(val "SET work_mem = '$WORK_MEM'; SELECT setting FROM pg_settings WHERE name = 'work_mem'")

# peak LABEL SETTINGS QUERY -> prints and appends a CSV line
peak() {
	local label=$1 settings=$2 query=$3 log
	log=$(mktemp)
	"$PSQL" -X -q -At -v ON_ERROR_STOP=0 > "$log" 2>&1 <<SQL
SET work_mem = '$WORK_MEM';
$settings
SELECT pg_backend_pid() AS pid \gset
\setenv BPID :pid
SELECT 1 FROM simhash_find_all(ARRAY[1, 2]::bigint[], 1) LIMIT 0;
\! awk '/^VmHWM/ { print "before", \$2 }' /proc/\$BPID/status
\! date +start\ %s.%N
$query;
\! date +end\ %s.%N
\! awk '/^VmHWM/ { print "after", \$2 }' /proc/\$BPID/status
SQL
	local before after t0 t1 result
	before=$(sed -n 's/^before //p' "$log"); after=$(sed -n 's/^after //p' "$log")
	t0=$(sed -n 's/^start //p' "$log"); t1=$(sed -n 's/^end //p' "$log")
	result=$(grep -m1 '^ERROR' "$log" || grep -vE '^(before|after|start|end) ' "$log" | tail -1)
	result=$(echo "$result" | tr ',' ';')
	rm -f "$log"
	[ -n "$before" ] && [ -n "$after" ] || { echo "cannot read /proc/PID/status of the backend"; exit 1; }
	local grow=$((after - before)) secs
	secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
	printf '%-34s peak +%7d kB = %5.2f x work_mem (%d kB)  %6s s  %s\n' "$label" "$grow" \
		"$(awk -v g="$grow" -v w="$wm_kb" 'BEGIN { print g / w }')" "$wm_kb" "$secs" "$result"
	echo "$label,$N,$wm_kb,$before,$after,$grow,$secs,$result" >> "$out.tmp"
}

echo "query,fingerprints,work_mem_kb,vmhwm_before_kb,vmhwm_after_kb,growth_kb,seconds,result" > "$out.tmp"
A="array_fill('1'::simhash, ARRAY[$N])"
peak "find_clusters d=0" "" "SELECT count(*) FROM simhash_find_clusters($A, 0)"
peak "find_clusters d=3" "" "SELECT count(*) FROM simhash_find_clusters($A, 3)"
peak "cluster (window) d=3" "" \
	"SELECT count(DISTINCT c) FROM (SELECT simhash_cluster('1'::simhash, 3) OVER () AS c FROM generate_series(1, $N)) s"
peak "find_all 10^4 equal d=0 (all)" "" "SELECT count(*) FROM simhash_find_all(array_fill('1'::simhash, ARRAY[10000]), 0)"
peak "find_all d=0 (timeout ${STREAM_SECONDS}s)" "SET statement_timeout = '${STREAM_SECONDS}s';" \
	"SELECT count(*) FROM simhash_find_all($A, 0)"
# below the ~7 MB that 10^5 fingerprints need: fails at once (53200)
peak "find_all at work_mem 4MB (53200)" "SET work_mem = '4MB'; SET statement_timeout = '${STREAM_SECONDS}s';" \
	"SELECT count(*) FROM simhash_find_all($A, 0)"
mv "$out.tmp" "$out"
awk -F, -v t="$STREAM_SECONDS" '
	NR > 1 && $1 ~ /^find_all 10/ { printf "find_all writes %.1f M pairs/s into its spilling result (49995000 pairs of 10^4 equal fingerprints)\n", 49.995 / $7 }
	NR > 1 && $1 ~ /timeout/ { printf "find_all stopped %.2f s after its %d s statement_timeout\n", $7 - t, t }' "$out"
