-- demo.sql — run by tools/demo.sh against a throwaway cluster.
\timing off
CREATE EXTENSION simhash;
CREATE TABLE pages (url text PRIMARY KEY, html text NOT NULL, fp simhash);
INSERT INTO pages (url, html)
  SELECT 'pgdoc/' || f, pg_read_file(:'corpus' || '/' || f)
    FROM pg_ls_dir(:'corpus') f WHERE f LIKE '%.html';
-- Debian's license files: many packages ship the same license with another header.
DO $$
DECLARE pkg text;
BEGIN
  FOR pkg IN SELECT * FROM pg_ls_dir('/usr/share/doc') ORDER BY 1 LOOP
    BEGIN
      INSERT INTO pages SELECT 'copyright/' || pkg, body FROM
        pg_read_file('/usr/share/doc/' || pkg || '/copyright', 0, 10000000, true) body
       WHERE body IS NOT NULL;
    EXCEPTION WHEN character_not_in_repertoire OR untranslatable_character THEN
      NULL;  -- not valid UTF-8: skipped
    END;
  END LOOP;
END $$;
SELECT count(*) FILTER (WHERE url LIKE 'pgdoc/%') AS html_pages,
       count(*) FILTER (WHERE url LIKE 'copyright/%') AS license_files FROM pages;
\echo fingerprinting...
\timing on
-- The visible text: tags, scripts and entities removed.
UPDATE pages SET fp = simhash(regexp_replace(regexp_replace(html,
         '<(script|style)[^>]*>.*?</\1>|<[^>]*>', ' ', 'gs'), '&[a-z#0-9]+;', ' ', 'g'));
\timing off

\echo
\echo '== identical fingerprints (distance 0): the largest groups'
SELECT fp, n AS pages, string_agg(url, ' ' ORDER BY url) AS sample
  FROM (SELECT fp, url, count(*) OVER (PARTITION BY fp) AS n,
               row_number() OVER (PARTITION BY fp ORDER BY url) AS r FROM pages) s
 WHERE r <= 3 AND n > 1 GROUP BY fp, n ORDER BY n DESC, fp LIMIT 10;

\echo '== near-duplicate pairs (distance 1..3)'
SELECT a.url, b.url, a.fp <~> b.fp AS bits
  FROM pages a JOIN pages b ON a.url < b.url AND a.fp <~> b.fp BETWEEN 1 AND 3
 ORDER BY bits, a.url, b.url LIMIT 15;

\echo '== the pages nearest to copyright/libpq5'
SELECT url, fp <~> (SELECT fp FROM pages WHERE url = 'copyright/libpq5') AS bits
  FROM pages ORDER BY 2, 1 LIMIT 8;

\echo '== distance histogram over all pairs'
SELECT d AS bits, count(*) AS pairs, repeat('#', (40 * count(*) / max(count(*)) OVER ())::int) AS histogram
  FROM (SELECT a.fp <~> b.fp AS d FROM pages a JOIN pages b ON a.url < b.url) s
 GROUP BY d ORDER BY d;
