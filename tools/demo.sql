-- demo.sql — run by tools/demo.sh against a throwaway cluster.
\timing off
\set VERBOSITY terse
CREATE EXTENSION simhash;
CREATE TABLE pages (url text PRIMARY KEY, html text NOT NULL, fp simhash);

SET demo.corpus = :'corpus';  -- psql variables do not reach inside $$ quotes
-- Load the files one by one, with a progress line every 10 %, and say what
-- was skipped and why: a package directory without a copyright file, or a
-- file that is not valid UTF-8.
DO $$
DECLARE
  files text[];
  f text;
  t text;
  total int;
  i int := 0;
  loaded int := 0;
  missing int := 0;
  not_utf8 int := 0;
  bytes bigint := 0;
  started timestamptz := clock_timestamp();
BEGIN
  SELECT array_agg(p ORDER BY p) INTO files FROM (
      SELECT current_setting('demo.corpus') || '/' || n AS p
        FROM pg_ls_dir(current_setting('demo.corpus')) n WHERE n LIKE '%.html'
      UNION ALL
      SELECT '/usr/share/doc/' || d || '/copyright' FROM pg_ls_dir('/usr/share/doc') d) s;
  total := cardinality(files);
  FOREACH f IN ARRAY files LOOP
    i := i + 1;
    BEGIN
      t := pg_read_file(f, 0, 10000000, true);   -- NULL when the file is missing
      IF t IS NULL THEN
        missing := missing + 1;
      ELSE
        INSERT INTO pages (url, html) VALUES (
          CASE WHEN f LIKE '%/copyright' THEN 'copyright/' || split_part(f, '/', 5)
               ELSE 'pgdoc/' || regexp_replace(f, '^.*/', '') END, t);
        bytes := bytes + octet_length(t);
        loaded := loaded + 1;
      END IF;
    EXCEPTION WHEN character_not_in_repertoire OR untranslatable_character THEN
      not_utf8 := not_utf8 + 1;
    END;
    IF i % greatest(total / 10, 1) = 0 OR i = total THEN
      RAISE NOTICE 'read % / % files (% MB, % s)', i, total, round(bytes / 1e6, 1),
        round(extract(epoch FROM clock_timestamp() - started)::numeric, 1);
    END IF;
  END LOOP;
  RAISE NOTICE 'loaded % of % files; skipped %: % package directories without a copyright file, % files not valid UTF-8',
    loaded, total, missing + not_utf8, missing, not_utf8;
END $$;

SELECT count(*) FILTER (WHERE url LIKE 'pgdoc/%') AS html_pages,
       count(*) FILTER (WHERE url LIKE 'copyright/%') AS license_files,
       pg_size_pretty(sum(length(html))) AS text FROM pages;

\echo 'fingerprinting the visible text of every page (simhash_html) ...'
\timing on
UPDATE pages SET fp = simhash_html(html);
\echo 'building the index (USING simhash, radius up to 3 answered by probing) ...'
CREATE INDEX pages_fp ON pages USING simhash (fp) WITH (bits = 3);
\timing off
ANALYZE pages;

\echo
\echo '== near-duplicate clusters (connected components at distance <= 3): the largest'
WITH c AS (SELECT url, simhash_cluster(fp, 3) OVER (ORDER BY url) AS cluster FROM pages),
     s AS (SELECT cluster, count(*) AS pages,
                  string_agg(url, ' ' ORDER BY url) FILTER (WHERE r <= 3) AS sample_urls
             FROM (SELECT *, row_number() OVER (PARTITION BY cluster ORDER BY url) AS r FROM c) x
            GROUP BY cluster)
SELECT pages, sample_urls FROM s WHERE pages > 1 ORDER BY pages DESC, sample_urls LIMIT 12;

SELECT count(*) AS pages_in_clusters, count(DISTINCT cluster) AS clusters,
       round(100.0 * (count(*) - count(DISTINCT cluster)) / (SELECT count(*) FROM pages), 1)
         AS "redundant pages %"
  FROM (SELECT cluster, count(*) OVER (PARTITION BY cluster) AS n
          FROM (SELECT simhash_cluster(fp, 3) OVER (ORDER BY url) AS cluster FROM pages) c) s
 WHERE n > 1;

\echo '== the pages nearest to pgdoc/sql-createindex.html (exact KNN through the index)'
SET enable_seqscan = off;
EXPLAIN (COSTS OFF)
SELECT url FROM pages ORDER BY fp <~> (SELECT fp FROM pages WHERE url = 'pgdoc/sql-createindex.html') LIMIT 8;
SELECT url, fp <~> q AS bits
  FROM pages, (SELECT fp AS q FROM pages WHERE url = 'pgdoc/sql-createindex.html') q
 ORDER BY fp <~> q LIMIT 8;
RESET enable_seqscan;

\echo '== pages within 3 bits of copyright/libpq5 (indexed radius search)'
SELECT url, fp <~> q AS bits
  FROM pages, (SELECT fp AS q FROM pages WHERE url = 'copyright/libpq5') q
 WHERE simhash_within(fp, q, 3) ORDER BY 2, 1 LIMIT 10;

\echo '== near-duplicate pairs by an index nested-loop self-join (distance 1..3: exact copies left out here)'
\echo '   (the key inequality is written IS TRUE so that no btree on url can take the inner side; see the README)'
EXPLAIN (COSTS OFF)
SELECT a.url, b.url, a.fp <~> b.fp AS bits
  FROM pages a JOIN pages b ON simhash_within(b.fp, a.fp, 3)
 WHERE (a.url < b.url) IS TRUE AND a.fp <> b.fp;
SELECT a.url, b.url, a.fp <~> b.fp AS bits
  FROM pages a JOIN pages b ON simhash_within(b.fp, a.fp, 3)
 WHERE (a.url < b.url) IS TRUE AND a.fp <> b.fp ORDER BY bits, a.url, b.url LIMIT 12;

\echo '== distance histogram over all pairs'
SELECT d AS bits, count(*) AS pairs,
       repeat('#', ceil(40 * ln(1 + count(*)) / max(ln(1 + count(*))) OVER ())::int) AS "log scale"
  FROM (SELECT a.fp <~> b.fp AS d FROM pages a JOIN pages b ON a.url < b.url) s
 GROUP BY d ORDER BY d;
