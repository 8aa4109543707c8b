#!/usr/bin/env bash
# html_throughput.sh — throughput of simhash_html, html_text, simhash(text)
# and simhash_seomoz beside md5() on the same table of real web pages (the
# PostgreSQL documentation's HTML, Debian package postgresql-doc-15), in one
# backend (no parallel workers), measured in the same run.  Prints MB/s and
# the ratio to md5(html).  Not part of `make test`.
#
#   bash bench/html_throughput.sh [ROUNDS]      (default 5; run as root or postgres-capable sudo)
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-5}
CORPUS=${CORPUS:-/usr/share/doc/postgresql-doc-15/html}
source tools/tmp-cluster.sh
tmpc_install htmlbench
tmpc_start

tmpc_psql -v corpus="$CORPUS" -v rounds="$ROUNDS" <<'SQL'
CREATE EXTENSION simhash;
CREATE TABLE pages AS
  SELECT f AS url, pg_read_file(:'corpus' || '/' || f) AS html
    FROM pg_ls_dir(:'corpus') f WHERE f LIKE '%.html';
ALTER TABLE pages ALTER html SET STORAGE EXTERNAL;  -- no decompression in the timings
VACUUM FULL pages; ANALYZE pages;
SET max_parallel_workers_per_gather = 0;
SET jit = off;
SELECT count(*) AS pages, round(sum(octet_length(html)) / 1e6, 1) AS mb FROM pages;
-- each function over the whole table, best of :rounds runs
CREATE TEMP TABLE timing (what text, seconds float8);
CREATE FUNCTION best(expr text, rounds int) RETURNS float8 LANGUAGE plpgsql AS $$
DECLARE t0 timestamptz; best float8 := 'Infinity';
BEGIN
  FOR i IN 1..rounds LOOP
    t0 := clock_timestamp();
    EXECUTE format('SELECT count(%s) FROM pages', expr);
    best := least(best, extract(epoch FROM clock_timestamp() - t0));
  END LOOP;
  RETURN best;
END $$;
INSERT INTO timing SELECT e, best(e, :rounds) FROM unnest(ARRAY[
  'octet_length(html)', 'md5(html)', 'html_text(html)', 'simhash_html(html)',
  'simhash(html)', 'simhash_seomoz(html)']) e;
SELECT what, round(seconds::numeric, 3) AS seconds,
       round((SELECT sum(octet_length(html)) FROM pages) / 1e6 / seconds::numeric) AS "MB/s",
       round(((SELECT seconds FROM timing WHERE what = 'md5(html)') / seconds)::numeric, 3) AS "vs md5"
  FROM timing ORDER BY seconds;
SQL
