-- Radius probes of scans that return their rows in one batch (bitmap scans
-- and ordered passes) list every prefix within the level's flipped bits in
-- increasing order and read each run page once for all the ranges on it
-- (src/am/probe_list.c).  Here: thousands of rows sharing a prefix (a range
-- spanning run pages) beside random rows (several probed ranges on one page),
-- radius 1..20, prefixes of 16, 8 and 4 bits, probes forced
-- (simhash.debug_sweep = never); every answer must equal a sequential scan's.
SET client_min_messages = warning;
SET jit = off;
SET max_parallel_workers_per_gather = 0;
SET simhash.debug_sweep = never;

CREATE FUNCTION pl_h64(t text) RETURNS bigint LANGUAGE sql IMMUTABLE STRICT AS
  $$ SELECT ('x' || md5(t))::bit(64)::bigint $$;
-- x with 1..5 bits flipped among the 16 from bit `lo` up, chosen by seed
CREATE FUNCTION pl_flip16(x bigint, lo int, seed int) RETURNS bigint LANGUAGE sql IMMUTABLE STRICT AS $$
  SELECT x # (SELECT bit_or(1::bigint << (lo + (hashint4(seed * 8 + b) & 2147483647) % 16))
                FROM generate_series(1, 1 + seed % 5) b) $$;

CREATE TABLE pl (id int, fp simhash) WITH (autovacuum_enabled = off);
INSERT INTO pl SELECT i, pl_h64(i::text)::simhash FROM generate_series(1, 24000) i;
-- cluster A: one centre, flips in its lowest 16 bits only (the other blocks equal)
INSERT INTO pl SELECT 24000 + i, pl_flip16(pl_h64('A'), 0, i)::simhash FROM generate_series(1, 3000) i;
-- cluster B: flips in its highest 16 bits only; and 500 copies of A's centre
INSERT INTO pl SELECT 27000 + i, pl_flip16(pl_h64('B'), 48, i)::simhash FROM generate_series(1, 3000) i;
INSERT INTO pl SELECT 30000 + i, pl_h64('A')::simhash FROM generate_series(1, 500) i;
SELECT count(*) AS rows, count(DISTINCT fp) AS distinct_fp FROM pl;

CREATE TABLE plq (qid int, q simhash);
INSERT INTO plq VALUES (1, pl_h64('A')::simhash), (2, (pl_h64('A') # (1::bigint << 60))::simhash),
  (3, pl_h64('B')::simhash), (4, (pl_h64('B') # (1::bigint << 20) # 1)::simhash),
  (5, pl_h64('777')::simhash), (6, pl_h64('fresh')::simhash);

CREATE TABLE plref AS
SELECT qid, id, fp <~> q AS d FROM plq, pl WHERE fp <~> q <= 20;
SELECT count(*) AS pairs_within_20, count(*) FILTER (WHERE d <= 6) AS within_6 FROM plref;

-- Every (query, radius) through a bitmap scan (id sets) and an ordered index
-- scan (distances in order, and id sets) against plref: the plans seen, the
-- pairs compared and the mismatches.
CREATE FUNCTION pl_check(label text)
RETURNS TABLE (config text, plans text, pairs int, mismatches int) LANGUAGE plpgsql AS $$
DECLARE qr record; r int; got text; want text; gotd text; wantd text; line text;
        nodes text[] := '{}'; sql text;
BEGIN
  config := label;
  pairs := 0; mismatches := 0;
  PERFORM set_config('enable_seqscan', 'off', true);
  FOR qr IN SELECT qid, q FROM plq ORDER BY qid LOOP
    FOREACH r IN ARRAY ARRAY[1, 2, 4, 6, 8, 10, 13, 16, 20] LOOP
      SELECT array_agg(id ORDER BY id)::text, array_agg(d ORDER BY d)::text INTO want, wantd
        FROM plref WHERE qid = qr.qid AND d <= r;
      -- bitmap scan
      PERFORM set_config('enable_indexscan', 'off', true);
      PERFORM set_config('enable_bitmapscan', 'on', true);
      sql := format('SELECT array_agg(id ORDER BY id)::text FROM pl WHERE simhash_within(fp, %L, %s)', qr.q, r);
      EXECUTE sql INTO got;
      IF qr.qid = 1 AND r = 8 THEN
        FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || sql LOOP
          nodes := nodes || substring(line FROM '(Seq Scan|Bitmap Index Scan|Index Scan)');
        END LOOP;
      END IF;
      pairs := pairs + 1;
      IF got IS DISTINCT FROM want THEN
        mismatches := mismatches + 1;
        IF mismatches <= 3 THEN RAISE WARNING 'bitmap % qid % r %: got % want %', label, qr.qid, r,
          left(got, 80), left(want, 80); END IF;
      END IF;
      -- ordered index scan: a radius condition with ORDER BY distance
      PERFORM set_config('enable_indexscan', 'on', true);
      PERFORM set_config('enable_bitmapscan', 'off', true);
      sql := format('SELECT array_agg(id ORDER BY id)::text, array_agg(d ORDER BY n)::text FROM
                       (SELECT id, fp <~> %L AS d, row_number() OVER () AS n FROM
                          (SELECT id, fp FROM pl WHERE simhash_within(fp, %L, %s) ORDER BY fp <~> %L) s) s',
                    qr.q, qr.q, r, qr.q);
      EXECUTE sql INTO got, gotd;
      IF qr.qid = 1 AND r = 8 THEN
        FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) SELECT id FROM pl WHERE simhash_within(fp, '
                            || quote_literal(qr.q) || ', 8) ORDER BY fp <~> ' || quote_literal(qr.q) LOOP
          nodes := nodes || substring(line FROM '(Seq Scan|Bitmap Index Scan|Index Scan)');
        END LOOP;
      END IF;
      pairs := pairs + 1;
      IF got IS DISTINCT FROM want OR gotd IS DISTINCT FROM wantd THEN
        mismatches := mismatches + 1;
        IF mismatches <= 3 THEN RAISE WARNING 'ordered % qid % r %: got % want %', label, qr.qid, r,
          left(gotd, 80), left(wantd, 80); END IF;
      END IF;
    END LOOP;
  END LOOP;
  plans := array_to_string(ARRAY(SELECT DISTINCT unnest(nodes) ORDER BY 1), ' + ');
  RETURN NEXT;
END $$;

-- 16-bit prefixes (4 tables: a cluster's range spans run pages), 8-bit
-- (8 tables) and 4-bit (16 tables: every range spans pages)
CREATE INDEX pl_fp ON pl USING simhash (fp) WITH (bits = 3, blocks = 4);
SELECT * FROM pl_check('(3,4)');
DROP INDEX pl_fp;
CREATE INDEX pl_fp ON pl USING simhash (fp) WITH (bits = 7, blocks = 8);
SELECT * FROM pl_check('(7,8)');
DROP INDEX pl_fp;
CREATE INDEX pl_fp ON pl USING simhash (fp) WITH (bits = 15, blocks = 16);
SELECT * FROM pl_check('(15,16)');

-- after deletes and VACUUM (entries removed from run pages in place)
DELETE FROM pl WHERE id % 3 = 0;
DELETE FROM plref WHERE id % 3 = 0;
VACUUM pl;
SELECT * FROM pl_check('(15,16) vacuumed');
DROP INDEX pl_fp;
CREATE INDEX pl_fp ON pl USING simhash (fp) WITH (bits = 3, blocks = 4);
DELETE FROM pl WHERE id % 5 = 0;
DELETE FROM plref WHERE id % 5 = 0;
VACUUM pl;
SELECT * FROM pl_check('(3,4) vacuumed');

DROP TABLE pl, plq, plref;
DROP FUNCTION pl_check(text), pl_h64(text), pl_flip16(bigint, int, int);
