#!/usr/bin/env bash
# near_duplicates_parallel.sh — simhash_near_duplicates on disk with 0, 1 and
# 2 parallel workers, in interleaved rounds (0 1 2 0 1 2 ...), so that the
# machine's drift hits each alike.
#
#   bench/near_duplicates_parallel.sh [DOCS] [ROUNDS] [WORK_MEM]
#
# DOCS texts (default 40,000) of 100 to 400 Zipf-distributed words, plus
# edited copies of 2 in 5 of them (a word added, the end cut), so that pairs
# exist at 0.8.  Each call is timed from the client by the NOTICEs as they
# arrive: "read" is until the join starts (reading and shingling, serial),
# "join" the rest (the part workers share).  Prints a row per run, the medians
# per worker count and each run's ratio to the serial run of its round, with
# the load average before and after.  Starts a throwaway cluster
# (tools/tmp-cluster.sh) unless PGHOST is set.
set -euo pipefail
cd "$(dirname "$0")/.."
DOCS=${1:-40000}
ROUNDS=${2:-3}
MEM=${3:-16MB}

if [ -z "${PGHOST:-}" ]; then
	# shellcheck source=tools/tmp-cluster.sh
	source tools/tmp-cluster.sh
	tmpc_install >/dev/null
	tmpc_start -c max_worker_processes=8 -c max_parallel_workers=8 >/dev/null
fi
PSQL=${TMPC_BIN:+$TMPC_BIN/}psql
sql() { "$PSQL" -X -q -v ON_ERROR_STOP=1 "$@"; }

sql -c "CREATE EXTENSION IF NOT EXISTS simhash"
sql -v n="$DOCS" <<'SQL'
DROP TABLE IF EXISTS nd_bench;
CREATE TABLE nd_bench AS
  SELECT g AS id,
         (SELECT string_agg('w' || floor(exp(random() * ln(50000)))::int, ' ')
            FROM generate_series(1, 100 + (g * 7919) % 300)) AS body
    FROM generate_series(1, :n) g;
INSERT INTO nd_bench SELECT id + :n, 'edited ' || body FROM nd_bench WHERE id % 5 = 0 AND id <= :n;
INSERT INTO nd_bench SELECT id + 2 * :n, left(body, length(body) * 9 / 10) FROM nd_bench WHERE id % 5 = 1 AND id <= :n;
ALTER TABLE nd_bench ADD COLUMN fp bigint DEFAULT 0;
VACUUM ANALYZE nd_bench;
SQL
echo "corpus: $(sql -At -c "SELECT count(*) || ' texts, ' || pg_size_pretty(sum(length(body))) FROM nd_bench")," \
	"work_mem $MEM, $ROUNDS rounds; load before: $(cut -d' ' -f1-3 /proc/loadavg)"

# one call: prints "workers total_s read_s join_s pairs"
run() {
	local w=$1
	sql -v w="$w" -v mem="$MEM" 2>&1 <<'SQL' |
SET simhash.near_duplicates_progress = 0;
SET work_mem = :'mem';
SET max_parallel_workers_per_gather = :w;
SELECT 'start';
SELECT count(*) AS pairs FROM simhash_near_duplicates('nd_bench', 'fp', 'body', 'id', 0.8);
SQL
		while IFS= read -r line; do echo "$(date +%s.%N) $line"; done |
		awk -v w="$w" '
			/ start$/ { t0 = $1 }
			/joining/ { tj = $1 }
			/pairs of rows/ { t1 = $1; pairs = $0; sub(/.*: /, "", pairs); sub(/ pairs.*/, "", pairs) }
			END { printf "%d %.2f %.2f %.2f %s\n", w, t1 - t0, tj - t0, t1 - tj, pairs }'
}

out=$(mktemp)
for r in $(seq 1 "$ROUNDS"); do
	for w in 0 1 2; do
		run "$w" | tee -a "$out"
	done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
awk '
	{ tot[$1] = tot[$1] " " $2; rd[$1] = rd[$1] " " $3; jn[$1] = jn[$1] " " $4; pairs[$1] = $5
	  n = ++cnt[$1]; T[$1, n] = $2; J[$1, n] = $4 }
	function median(s,   a, k, i, j, t) {
		k = split(s, a, " ")
		for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
		return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
	}
	END {
		print "| workers | total s (median) | read s | join s | join ratio to serial (median of rounds) | total ratio | pairs |"
		print "|---|---|---|---|---|---|---|"
		for (w = 0; w <= 2; w++) {
			rj = ""; rt = ""
			for (i = 1; i <= cnt[w]; i++) { rj = rj " " J[w, i] / J[0, i]; rt = rt " " T[w, i] / T[0, i] }
			printf "| %d | %.2f | %.2f | %.2f | %.2f | %.2f | %s |\n", w, median(tot[w]), median(rd[w]), median(jn[w]), median(rj), median(rt), pairs[w]
		}
	}' "$out"
rm -f "$out"
