# lib.sh — sourced by the parts of bench/run.sh.  They run with a cluster
# already up (PG* variables exported by tools/tmp-cluster.sh) and write CSV
# files into $BENCH_RESULTS.  A part that cannot run prints "SKIP: why" and
# exits 0, so the report says what was skipped instead of failing.
set -euo pipefail
BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SCALE=${SCALE:-1}
BENCH_RESULTS=${BENCH_RESULTS:-$BENCH_DIR/results}
PSQL=${TMPC_BIN:+$TMPC_BIN/}psql
PGBENCH=${TMPC_BIN:+$TMPC_BIN/}pgbench

sql() { "$PSQL" -X -q -v ON_ERROR_STOP=1 -P pager=off "$@"; }
# One value (or unaligned rows) from a query.
val() { "$PSQL" -X -q -v ON_ERROR_STOP=1 -At -c "$1"; }

skip() { echo "SKIP: $*"; exit 0; }
have_proc() { [ "$(val "SELECT count(*) FROM pg_proc WHERE proname = '$1'")" != 0 ]; }
have_am() { [ "$(val "SELECT count(*) FROM pg_am WHERE amname = 'simhash' AND amtype = 'i'")" != 0 ]; }

# The helpers every part uses: the extension and a timing function that runs
# a statement REPS times and returns the best wall time (the machine is shared,
# the minimum is the least disturbed run).
bench_setup_sql() {
	sql <<'SQL'
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS simhash;
CREATE OR REPLACE FUNCTION bench_seconds(q text, reps int DEFAULT 3) RETURNS float8
LANGUAGE plpgsql AS $$
DECLARE t0 timestamptz; best float8 := 'Infinity'; e float8;
BEGIN
  FOR i IN 1..reps LOOP
    t0 := clock_timestamp();
    EXECUTE q;
    e := extract(epoch FROM clock_timestamp() - t0);
    best := least(best, e);
  END LOOP;
  RETURN best;
END $$;
-- A deterministic pseudo-random 64-bit fingerprint of an integer (the first
-- 64 bits of its md5), so every run uses the same data set.
CREATE OR REPLACE FUNCTION bench_fp(i bigint) RETURNS simhash LANGUAGE sql IMMUTABLE AS $$
  SELECT (('x' || substr(md5(i::text), 1, 16))::bit(64)::bigint)::simhash
$$;
-- fp with `flips` distinct bits flipped, chosen by seed: bits s, s+t, s+2t, ...
-- (mod 64) with an odd stride t, so they are distinct.
CREATE OR REPLACE FUNCTION bench_flip(fp simhash, flips int, seed bigint) RETURNS simhash
LANGUAGE sql IMMUTABLE AS $$
  SELECT (fp::bigint # coalesce((SELECT bit_or(1::bigint << ((h.s + j * h.t) & 63))
            FROM (SELECT ('x' || substr(m, 1, 2))::bit(8)::int AS s,
                         2 * ('x' || substr(m, 3, 2))::bit(8)::int + 1 AS t
                    FROM md5(seed::text) m) h, generate_series(0, flips - 1) j), 0))::simhash
$$;
SQL
}
