#!/usr/bin/env bash
# ingest_reads.sh — radius-3 query latency while a table is being written to,
# against a freshly built index over the same rows, measured in the same run
# (issue 23, item 2).  One session, IR_BATCHES rounds (default 600), each:
#   - one INSERT of IR_BATCH rows (default 1000) into the btree-indexed table
#     and the same INSERT into the simhash-indexed table (in alternating
#     order), each timed;
#   - IR_QUERIES radius-3 queries (default 10; near copies, 2 bits flipped,
#     of stored rows) on the simhash table being ingested, each paired with
#     the same query on a table holding the final rows (base + every batch)
#     whose simhash index was built fresh by CREATE INDEX: one after the
#     other, in both orders in turn, so that load from other processes and
#     cold caches after the INSERT hit both alike.
# Tables of IR_BASE rows (default 2,000,000), SCALE times.  Autovacuum is off
# on the ingested tables: the index's runs are what the INSERTs left (the
# worst case; a VACUUM compacts them).  Timings are taken inside the server
# (clock_timestamp() around EXECUTE: planning and execution, no client round
# trip), and of the same queries prepared with one generic plan (execution
# alone).  Prints p50/p99 of each and their ratios, INSERT rows/s of simhash vs
# btree, the runs a query met (mean, max); writes $BENCH_RESULTS/ingest_reads.csv.
source "$(dirname "$0")/lib.sh"
bench_setup_sql
have_am || skip "no index access method simhash in this build"
have_proc simhash_index_runs || skip "no simhash_index_runs in this build"
BASE=$((${IR_BASE:-2000000} * SCALE))
BATCHES=${IR_BATCHES:-600}
BATCH=${IR_BATCH:-1000}
QUERIES=${IR_QUERIES:-10}
OPTS=${IR_OPTIONS:-}
out=$BENCH_RESULTS/ingest_reads.csv

echo "ingest_reads: $BASE rows, then $BATCHES INSERTs of $BATCH rows, $QUERIES radius-3 queries after each${OPTS:+, index WITH ($OPTS)}"
with=${OPTS:+WITH ($OPTS)}
sql -v n="$BASE" -v total="$((BASE + BATCHES * BATCH))" <<SQL
SET client_min_messages = warning;
SET maintenance_work_mem = '512MB';
DROP TABLE IF EXISTS ir_sim, ir_bt, ir_fresh, ir_new, ir_q, ir_lat;
CREATE TABLE ir_sim (fp simhash NOT NULL) WITH (autovacuum_enabled = off);
INSERT INTO ir_sim SELECT bench_fp(i) FROM generate_series(1, :n) i;
CREATE TABLE ir_bt WITH (autovacuum_enabled = off) AS SELECT * FROM ir_sim;
-- the rows the INSERTs add, computed beforehand so that an INSERT's time is
-- the table's and its index's, not the generator's
CREATE TABLE ir_new (i bigint PRIMARY KEY, fp simhash NOT NULL);
INSERT INTO ir_new SELECT i, bench_fp(i) FROM generate_series(:n + 1, :total) i;
CREATE TABLE ir_fresh AS SELECT * FROM ir_sim;
INSERT INTO ir_fresh SELECT fp FROM ir_new;
CREATE INDEX ir_sim_fp ON ir_sim USING simhash (fp) $with;
CREATE INDEX ir_fresh_fp ON ir_fresh USING simhash (fp) $with;
CREATE INDEX ir_bt_fp ON ir_bt USING btree (fp);
-- queries: near copies (2 bits flipped) of stored rows
CREATE TABLE ir_q AS SELECT k, bench_flip(bench_fp(k * 997 % :n + 1), 2, k) AS q
  FROM generate_series(1, 1000) k;
CREATE UNLOGGED TABLE ir_lat (kind text, round int, us float8, runs int);
VACUUM ANALYZE ir_sim, ir_bt, ir_fresh, ir_new, ir_q;
CREATE OR REPLACE PROCEDURE ir_run(n bigint, batches int, batch int, queries int)
LANGUAGE plpgsql AS \$\$
DECLARE
  t0 timestamptz; t1 timestamptz; t2 timestamptz; t3 timestamptz; t4 timestamptz;
  us_ing float8; us_fresh float8; ep_ing float8; ep_fresh float8; c bigint; lo bigint; qv simhash; nr int;
  ins_sim float8; ins_bt float8;
BEGIN
  -- the static queries below keep one generic plan: execution alone
  PERFORM set_config('plan_cache_mode', 'force_generic_plan', false);
  FOR b IN 1..batches LOOP
    lo := n + (b - 1)::bigint * batch;
    IF b % 2 = 0 THEN
      t0 := clock_timestamp();
      INSERT INTO ir_bt SELECT fp FROM ir_new WHERE i > lo AND i <= lo + batch;
      t1 := clock_timestamp();
      ins_bt := extract(epoch FROM t1 - t0) * 1e6;
      INSERT INTO ir_sim SELECT fp FROM ir_new WHERE i > lo AND i <= lo + batch;
      ins_sim := extract(epoch FROM clock_timestamp() - t1) * 1e6;
    ELSE
      t0 := clock_timestamp();
      INSERT INTO ir_sim SELECT fp FROM ir_new WHERE i > lo AND i <= lo + batch;
      t1 := clock_timestamp();
      ins_sim := extract(epoch FROM t1 - t0) * 1e6;
      INSERT INTO ir_bt SELECT fp FROM ir_new WHERE i > lo AND i <= lo + batch;
      ins_bt := extract(epoch FROM clock_timestamp() - t1) * 1e6;
    END IF;
    COMMIT;
    SELECT count(*) INTO nr FROM simhash_index_runs('ir_sim_fp') WHERE kind = 'run';
    INSERT INTO ir_lat VALUES ('insert_sim', b, ins_sim, nr), ('insert_bt', b, ins_bt, nr);
    FOR j IN 1..queries LOOP
      SELECT q INTO qv FROM ir_q WHERE k = 1 + ((b * queries + j) * 7919) % 1000;
      -- each pair in both orders in turn, and the first query after an
      -- INSERT (colder caches) on either side in turn
      IF (b + j) % 2 = 1 THEN
        t0 := clock_timestamp();
        EXECUTE 'SELECT count(*) FROM ir_sim WHERE simhash_within(fp, \$1, 3)' INTO c USING qv;
        t1 := clock_timestamp();
        EXECUTE 'SELECT count(*) FROM ir_fresh WHERE simhash_within(fp, \$1, 3)' INTO c USING qv;
        t2 := clock_timestamp();
        SELECT count(*) INTO c FROM ir_sim WHERE simhash_within(fp, qv, 3);
        t3 := clock_timestamp();
        SELECT count(*) INTO c FROM ir_fresh WHERE simhash_within(fp, qv, 3);
        t4 := clock_timestamp();
        us_ing := extract(epoch FROM t1 - t0) * 1e6; us_fresh := extract(epoch FROM t2 - t1) * 1e6;
        ep_ing := extract(epoch FROM t3 - t2) * 1e6; ep_fresh := extract(epoch FROM t4 - t3) * 1e6;
      ELSE
        t0 := clock_timestamp();
        EXECUTE 'SELECT count(*) FROM ir_fresh WHERE simhash_within(fp, \$1, 3)' INTO c USING qv;
        t1 := clock_timestamp();
        EXECUTE 'SELECT count(*) FROM ir_sim WHERE simhash_within(fp, \$1, 3)' INTO c USING qv;
        t2 := clock_timestamp();
        SELECT count(*) INTO c FROM ir_fresh WHERE simhash_within(fp, qv, 3);
        t3 := clock_timestamp();
        SELECT count(*) INTO c FROM ir_sim WHERE simhash_within(fp, qv, 3);
        t4 := clock_timestamp();
        us_fresh := extract(epoch FROM t1 - t0) * 1e6; us_ing := extract(epoch FROM t2 - t1) * 1e6;
        ep_fresh := extract(epoch FROM t3 - t2) * 1e6; ep_ing := extract(epoch FROM t4 - t3) * 1e6;
      END IF;
      INSERT INTO ir_lat VALUES ('query_ing', b, us_ing, nr), ('query_fresh', b, us_fresh, nr),
        ('prep_ing', b, ep_ing, nr), ('prep_fresh', b, ep_fresh, nr);
    END LOOP;
    COMMIT;
  END LOOP;
END \$\$;
SQL

t0=$(date +%s)
sql -c "CALL ir_run($BASE, $BATCHES, $BATCH, $QUERIES)"
echo "ingestion and queries: $(($(date +%s) - t0)) s"
sql -c "SELECT kind, level, entries, pages FROM simhash_index_runs('ir_sim_fp')"

# p50/p99 of each kind of query in microseconds, and the ratios
pcts() {  # pcts KIND: "p50,p99"
	val "SELECT concat_ws(',', percentile_disc(0.5) WITHIN GROUP (ORDER BY us),
		percentile_disc(0.99) WITHIN GROUP (ORDER BY us)) FROM ir_lat WHERE kind = '$1'"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "" }'; }
IFS=, read -r p50i p99i < <(pcts query_ing)
IFS=, read -r p50f p99f < <(pcts query_fresh)
IFS=, read -r e50i e99i < <(pcts prep_ing)
IFS=, read -r e50f e99f < <(pcts prep_fresh)
IFS=, read -r ins_sim ins_bt runs_mean runs_max < <(val "
SELECT concat_ws(',', round($BATCHES::float8 * $BATCH / (sum(us) FILTER (WHERE kind = 'insert_sim') / 1e6)),
  round($BATCHES::float8 * $BATCH / (sum(us) FILTER (WHERE kind = 'insert_bt') / 1e6)),
  round(avg(runs) FILTER (WHERE kind = 'query_ing'), 1), max(runs)) FROM ir_lat")
r50=$(ratio "$p50i" "$p50f"); r99=$(ratio "$p99i" "$p99f")
e50=$(ratio "$e50i" "$e50f"); e99=$(ratio "$e99i" "$e99f")
rate_ratio=$(ratio "$ins_sim" "$ins_bt")
echo "radius-3, planned each time: ingesting p50 $p50i us, p99 $p99i us; fresh p50 $p50f us, p99 $p99f us"
echo "radius-3, prepared (one generic plan): ingesting p50 $e50i us, p99 $e99i us; fresh p50 $e50f us, p99 $e99f us"
echo "ratio ingesting / fresh: planned p50 $r50, p99 $r99; prepared p50 $e50, p99 $e99 (target <= 2, <= 4)"
echo "INSERT rate: simhash $ins_sim rows/s, btree $ins_bt rows/s, ratio $rate_ratio"
echo "runs a query met: mean $runs_mean, max $runs_max"
# the ratios by thirds of the ingestion (the runs accumulate)
sql -c "SELECT (round - 1) * 3 / $BATCHES + 1 AS third,
  round((percentile_disc(0.5) WITHIN GROUP (ORDER BY us) FILTER (WHERE kind = 'query_ing') /
   percentile_disc(0.5) WITHIN GROUP (ORDER BY us) FILTER (WHERE kind = 'query_fresh'))::numeric, 2) AS p50_planned,
  round((percentile_disc(0.5) WITHIN GROUP (ORDER BY us) FILTER (WHERE kind = 'prep_ing') /
   percentile_disc(0.5) WITHIN GROUP (ORDER BY us) FILTER (WHERE kind = 'prep_fresh'))::numeric, 2) AS p50_prepared,
  round(avg(runs) FILTER (WHERE kind = 'query_ing'), 1) AS runs
  FROM ir_lat GROUP BY 1 ORDER BY 1"
[ -n "${IR_KEEP:-}" ] || val "DROP TABLE ir_sim, ir_bt, ir_fresh, ir_new, ir_q, ir_lat" > /dev/null
{
	echo "base_rows,batches,batch_rows,queries,options,p50_ing_us,p99_ing_us,p50_fresh_us,p99_fresh_us,p50_ratio,p99_ratio,prep_p50_ing_us,prep_p99_ing_us,prep_p50_fresh_us,prep_p99_fresh_us,prep_p50_ratio,prep_p99_ratio,insert_rows_s_simhash,insert_rows_s_btree,insert_rate_ratio,runs_mean,runs_max"
	echo "$BASE,$BATCHES,$BATCH,$QUERIES,\"$OPTS\",$p50i,$p99i,$p50f,$p99f,$r50,$r99,$e50i,$e99i,$e50f,$e99f,$e50,$e99,$ins_sim,$ins_bt,$rate_ratio,$runs_mean,$runs_max"
} > "$out"
column -s, -t < "$out"
