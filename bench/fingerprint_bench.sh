#!/usr/bin/env bash
# fingerprint_bench.sh — SQL throughput of simhash(text) and simhash(tsvector)
# against md5(text) in the same run, on a throwaway cluster.
#
#   bash bench/fingerprint_bench.sh [REPS]
#
# Builds the tree and starts a throwaway cluster on a private installation
# (tools/tmp-cluster.sh, so the system is untouched), loads the PostgreSQL
# HTML documentation (raw pages and their visible text) and times each query
# REPS times (default 5), printing the best time (the backend's CPU time, from
# /proc/self/schedstat) and the ratio md5 time / query time (>= 1: at least as
# fast as md5).  One backend, no parallel workers, no JIT.
# Not part of `make test`.
set -euo pipefail
cd "$(dirname "$0")/.."
REPS=${1:-5}
CORPUS=${CORPUS:-/usr/share/doc/postgresql-doc-15/html}
source tools/tmp-cluster.sh
tmpc_install fpbench
tmpc_start -c shared_buffers=256MB -c jit=off -c max_parallel_workers_per_gather=0
psql_b() { tmpc_psql "$@"; }

psql_b -v corpus="$CORPUS" -v reps="$REPS" <<'SQL'
CREATE EXTENSION simhash;
CREATE TABLE html (body text NOT NULL);
INSERT INTO html SELECT pg_read_file(:'corpus' || '/' || f)
  FROM pg_ls_dir(:'corpus') f WHERE f LIKE '%.html';
CREATE TABLE visible (body text NOT NULL);
INSERT INTO visible SELECT regexp_replace(regexp_replace(body,
         '<(script|style)[^>]*>.*?</\1>|<[^>]*>', ' ', 'gs'), '&[a-z#0-9]+;', ' ', 'g') FROM html;
CREATE TABLE lexemes (tsv tsvector NOT NULL);
INSERT INTO lexemes SELECT to_tsvector('english', body) FROM visible;
VACUUM ANALYZE html, visible, lexemes;
SELECT 'html' AS corpus, count(*) AS docs, round(sum(octet_length(body)) / 1e6, 2) AS mb FROM html
UNION ALL SELECT 'visible', count(*), round(sum(octet_length(body)) / 1e6, 2) FROM visible;

-- CPU time of this backend (first field of /proc/self/schedstat, in ns): on
-- a shared machine, time spent waiting for a core is not the query's.  It
-- advances by scheduler ticks (4 ms here), so a measurement runs the query
-- 8 times and reports the mean.
CREATE FUNCTION pg_temp.cpu_ns() RETURNS bigint LANGUAGE sql AS
  $$ SELECT split_part(pg_read_file('/proc/self/schedstat'), ' ', 1)::bigint $$;
CREATE FUNCTION pg_temp.run_ms(q text) RETURNS float8 LANGUAGE plpgsql AS $$
DECLARE t0 bigint; dummy bigint;
BEGIN
  t0 := pg_temp.cpu_ns();
  FOR i IN 1 .. 8 LOOP
    EXECUTE q INTO dummy;
  END LOOP;
  RETURN (pg_temp.cpu_ns() - t0) / 8e6;
END $$;

CREATE TEMP TABLE q (corpus text, name text, sql text, pos serial);
INSERT INTO q (corpus, name, sql) VALUES
  ('html', 'md5(body)', 'SELECT sum(length(md5(body))) FROM html'),
  ('html', 'simhash(body)', 'SELECT sum(length(simhash(body)::text)) FROM html'),
  ('html', 'simhash(body, tokens=>chars)', 'SELECT sum(length(simhash(body, tokens=>''chars'')::text)) FROM html'),
  ('html', 'strpos(body, chr(1)) (detoast + memchr)', 'SELECT sum(strpos(body, chr(1))) FROM html'),
  ('visible', 'md5(body)', 'SELECT sum(length(md5(body))) FROM visible'),
  ('visible', 'simhash(body)', 'SELECT sum(length(simhash(body)::text)) FROM visible'),
  ('visible', 'simhash(body, tokens=>chars)', 'SELECT sum(length(simhash(body, tokens=>''chars'')::text)) FROM visible'),
  ('visible', 'strpos(body, chr(1)) (detoast + memchr)', 'SELECT sum(strpos(body, chr(1))) FROM visible'),
  ('tsvector', 'simhash(tsv)', 'SELECT sum(length(simhash(tsv)::text)) FROM lexemes'),
  ('tsvector', 'length(tsv) (detoast only)', 'SELECT sum(length(tsv)) FROM lexemes');

-- Rounds interleave the queries so a busy machine slows them alike; round 0
-- only warms the caches.
CREATE TEMP TABLE best (pos int PRIMARY KEY, ms float8);
INSERT INTO best SELECT pos, 'Infinity' FROM q;
SET fpbench.reps = :reps;
DO $$
DECLARE r record; t_ms float8;
BEGIN
  FOR round IN 0 .. current_setting('fpbench.reps')::int LOOP
    FOR r IN SELECT * FROM q ORDER BY pos LOOP
      t_ms := pg_temp.run_ms(r.sql);
      IF round > 0 THEN
        UPDATE best SET ms = least(best.ms, t_ms) WHERE best.pos = r.pos;
      END IF;
    END LOOP;
  END LOOP;
END $$;

\pset footer off
SELECT q.corpus, q.name, round(b.ms::numeric, 1) AS best_ms,
       round((sz.mb / (b.ms / 1000))::numeric, 1) AS "MB/s",
       round((m.ms / b.ms)::numeric, 2) AS vs_md5
  FROM q JOIN best b USING (pos)
  LEFT JOIN (SELECT 'html' AS corpus, sum(octet_length(body)) / 1e6 AS mb FROM html
             UNION ALL SELECT 'visible', sum(octet_length(body)) / 1e6 FROM visible) sz USING (corpus)
  LEFT JOIN q qm ON qm.corpus = q.corpus AND qm.name LIKE 'md5%'
  LEFT JOIN best m ON m.pos = qm.pos
 ORDER BY q.pos;
SQL
