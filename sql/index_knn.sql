-- Exact KNN and radius search through probe levels, for several layouts
-- (bits, blocks), with several runs and rows in the pending buffer: every answer equals a
-- sequential scan's (ORDER BY distance, then ctid: the index returns ties in
-- heap TID order).
SET client_min_messages = warning;
SET jit = off;
SET max_parallel_workers_per_gather = 0;
CREATE TABLE kp (id int, fp simhash);
INSERT INTO kp SELECT i, ('x' || md5(i::text))::bit(64)::simhash FROM generate_series(1, 12000) i;
-- 10 centres with 40 copies each at 1..12 flipped bits (positions from a hash)
INSERT INTO kp SELECT 100000 + c * 100 + j,
       (('x' || md5('centre' || c))::bit(64)::bigint #
        (SELECT bit_or(1::bigint << ((hashint4(c * 10000 + j * 64 + b) & 2147483647) % 64))
           FROM generate_series(1, 1 + j % 12) b))::simhash
  FROM generate_series(1, 10) c, generate_series(1, 40) j;
INSERT INTO kp VALUES (200001, NULL), (200002, NULL);
CREATE TABLE kq (qid int, q simhash);
INSERT INTO kq SELECT c, ('x' || md5('centre' || c))::bit(64)::simhash FROM generate_series(1, 10) c;
INSERT INTO kq SELECT 10 + i, ('x' || md5('fresh' || i))::bit(64)::simhash FROM generate_series(1, 10) i;

-- Reference by sequential scan: for every query, the ids in (distance, ctid) order
-- (the first 2500, and all within 24).
CREATE TABLE kref (qid int, rn int, id int, d int);
CREATE FUNCTION fill_ref() RETURNS void LANGUAGE sql AS $$
  DELETE FROM kref;
  INSERT INTO kref SELECT * FROM (
    SELECT qid, row_number() OVER (PARTITION BY qid ORDER BY fp <~> q, kp.ctid) AS rn, id, fp <~> q AS d
      FROM kq, kp WHERE fp IS NOT NULL) s WHERE rn <= 2500 OR d <= 24;
$$;
CREATE INDEX ON kref (qid, rn);

-- For one layout: build the index, add pending rows, and compare
--   knn_k:       ORDER BY fp <~> q LIMIT k through the index, k = 1, 10, 100, 2500
--                (2500 > one linear pass's first batch), ids and order
--   radius:      simhash_within(fp, q, r) for r = 0..24, ids
-- with the reference.  Returns the scans seen and the number of mismatches.
CREATE FUNCTION check_layout(bits int, blocks int)
RETURNS TABLE (layout text, runs bigint, pending bigint, knn_plan text, knn_checked int,
               knn_mismatches int, radius_checked int, radius_mismatches int) LANGUAGE plpgsql AS $$
DECLARE qr record; k int; r int; got int[]; want int[]; plan text;
BEGIN
  layout := format('bits %s, blocks %s', bits, blocks);
  EXECUTE format('CREATE INDEX kp_fp ON kp USING simhash (fp) WITH (bits = %s, blocks = %s, pending_pages = 1)',
                 bits, blocks);
  -- rows inserted after the build: flushed into small runs, the last ones pending
  INSERT INTO kp SELECT 300000 + i, ('x' || md5('late' || i))::bit(64)::simhash FROM generate_series(1, 2000) i;
  INSERT INTO kp SELECT 310000 + c, (('x' || md5('centre' || c))::bit(64)::bigint # (7::bigint << c))::simhash
    FROM generate_series(1, 10) c;
  PERFORM set_config('enable_seqscan', 'on', true);
  PERFORM set_config('enable_indexscan', 'off', true);
  PERFORM set_config('enable_bitmapscan', 'off', true);
  PERFORM fill_ref();
  PERFORM set_config('enable_seqscan', 'off', true);
  PERFORM set_config('enable_indexscan', 'on', true);
  PERFORM set_config('enable_bitmapscan', 'on', true);
  FOR plan IN EXECUTE 'EXPLAIN (COSTS OFF) SELECT id FROM kp ORDER BY fp <~> ''0123456789abcdef''::simhash LIMIT 10' LOOP
    IF plan ~ 'Scan' THEN knn_plan := regexp_replace(plan, '^[ ->]*', ''); END IF;
  END LOOP;
  SELECT count(*) FILTER (WHERE kind = 'run'), sum(entries) FILTER (WHERE kind = 'pending')
    INTO runs, pending FROM simhash_index_runs('kp_fp');
  knn_checked := 0; knn_mismatches := 0; radius_checked := 0; radius_mismatches := 0;
  FOR qr IN SELECT qid, q FROM kq ORDER BY qid LOOP
    FOREACH k IN ARRAY ARRAY[1, 10, 100, 2500] LOOP
      SELECT array_agg(id) INTO got FROM (SELECT id FROM kp ORDER BY fp <~> qr.q LIMIT k) s;
      SELECT array_agg(id ORDER BY rn) INTO want FROM kref WHERE qid = qr.qid AND rn <= k;
      knn_checked := knn_checked + 1;
      IF got IS DISTINCT FROM want THEN knn_mismatches := knn_mismatches + 1; END IF;
    END LOOP;
    FOR r IN 0..24 LOOP
      SELECT array_agg(id ORDER BY id) INTO got FROM kp WHERE simhash_within(fp, qr.q, r);
      SELECT array_agg(id ORDER BY id) INTO want FROM kref WHERE qid = qr.qid AND d <= r;
      radius_checked := radius_checked + 1;
      IF got IS DISTINCT FROM want THEN radius_mismatches := radius_mismatches + 1; END IF;
    END LOOP;
  END LOOP;
  DELETE FROM kp WHERE id >= 300000;
  DROP INDEX kp_fp;
  RETURN NEXT;
END $$;

SELECT * FROM check_layout(3, 4);
SELECT * FROM check_layout(3, 6);
SELECT * FROM check_layout(6, 7);
SELECT * FROM check_layout(1, 2);
SELECT * FROM check_layout(2, 9);

-- the reference is not trivial: planted centres have near neighbours, fresh queries do not
SELECT qid <= 10 AS planted, min(d) FILTER (WHERE rn = 10) AS min_d10, max(d) FILTER (WHERE rn = 10) AS max_d10
  FROM kref GROUP BY 1 ORDER BY 1;

-- The whole order through the index: every row once, in order, NULLs last
CREATE INDEX kp_fp ON kp USING simhash (fp) WITH (bits = 3);
SET enable_seqscan = off;
SELECT count(*) AS rows, count(DISTINCT id) AS distinct_ids,
       bool_and(d >= prev) AS ordered, bool_and(d IS NULL) FILTER (WHERE rn > 12400) AS nulls_last
  FROM (SELECT id, d, rn, lag(d) OVER (ORDER BY rn) AS prev
          FROM (SELECT id, fp <~> '0123456789abcdef' AS d, row_number() OVER () AS rn
                  FROM (SELECT id, fp FROM kp ORDER BY fp <~> '0123456789abcdef') o) o2) s;
RESET enable_seqscan;
