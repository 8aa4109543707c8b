-- Smoke test of the simhash index: build, insert, query by index vs seqscan,
-- delete, vacuum, check.  (The thorough tests are index_exact, index_explain...)
CREATE TABLE ib (id int, fp simhash);
-- deterministic fingerprints, plus near copies flipped in 1..4 bits, NULLs and duplicates
INSERT INTO ib SELECT g, simhash(('x' || md5(g::text))::bit(64)::bigint) FROM generate_series(1, 3000) g;
INSERT INTO ib SELECT 10000 + id, simhash(simhash_to_bigint(fp) # ((1::bigint << (id % 60)) * (1 + 2 * (id % 8))))
  FROM ib WHERE id <= 400;
INSERT INTO ib SELECT 20000 + id, fp FROM ib WHERE id <= 50;
INSERT INTO ib VALUES (-1, NULL), (-2, NULL);
CREATE INDEX ib_fp ON ib USING simhash (fp) WITH (bits = 3, blocks = 5);
SELECT simhash_index_check('ib_fp');

-- answers of a query set by the index and by a sequential scan
CREATE TABLE ib_q AS SELECT id AS qid, fp AS q FROM ib WHERE id % 97 = 1 AND id < 10000;
CREATE FUNCTION ib_answers(radius int) RETURNS TABLE (qid int, id int) LANGUAGE sql AS $$
  SELECT qid, id FROM ib_q, ib WHERE simhash_within(ib.fp, ib_q.q, radius) $$;

CREATE TABLE ib_seq AS SELECT r, a.* FROM generate_series(0, 5) r, ib_answers(r) a
  WHERE current_setting('enable_seqscan') = 'on';
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM ib WHERE simhash_within(fp, '1a40201a26358020', 2);
EXPLAIN (COSTS OFF) SELECT id FROM ib WHERE fp % '1a40201a26358020';
EXPLAIN (COSTS OFF) SELECT id FROM ib ORDER BY fp <~> '1a40201a26358020' LIMIT 3;
-- every radius: same rows as the sequential scan, each once
SELECT r, count(*) AS rows,
       count(*) FILTER (WHERE s.id IS NULL) AS only_index,
       count(*) FILTER (WHERE i.id IS NULL) AS only_seqscan
FROM (SELECT r, a.* FROM generate_series(0, 5) r, ib_answers(r) a) i
FULL JOIN ib_seq s USING (r, qid, id)
GROUP BY r ORDER BY r;
SELECT count(*) FROM ib WHERE fp % (SELECT fp FROM ib WHERE id = 1);
SELECT id, fp <~> '1a40201a26358020' AS d FROM ib ORDER BY fp <~> '1a40201a26358020', id LIMIT 3;
RESET enable_seqscan;
RESET enable_bitmapscan;

-- writes after the build, VACUUM merges and drops dead entries
INSERT INTO ib SELECT 30000 + g, simhash(('x' || md5((g * 7)::text))::bit(64)::bigint) FROM generate_series(1, 500) g;
DELETE FROM ib WHERE id % 10 = 3;
UPDATE ib SET fp = simhash(simhash_to_bigint(fp) # 1) WHERE id % 10 = 4;
SELECT simhash_index_check('ib_fp');
-- KNN with rows in the pending list: the distances of a sort, in order
SET enable_seqscan = off;
SET enable_bitmapscan = off;
CREATE TABLE ib_knn AS SELECT array_agg(d) AS ds FROM
  (SELECT fp <~> '1a40201a26358020' AS d FROM ib ORDER BY fp <~> '1a40201a26358020' LIMIT 40) s;
RESET enable_seqscan;
RESET enable_bitmapscan;
SET enable_indexscan = off;
SELECT ds = (SELECT array_agg(d) FROM (SELECT fp <~> '1a40201a26358020' AS d FROM ib ORDER BY 1 LIMIT 40) s)
  AS same_as_sort, ds[1:5] FROM ib_knn;
RESET enable_indexscan;
VACUUM ib;
SELECT simhash_index_check('ib_fp');
SET enable_seqscan = off;
SELECT count(*) FROM ib WHERE simhash_within(fp, (SELECT fp FROM ib WHERE id = 5), 3);
RESET enable_seqscan;
SELECT count(*) FROM ib WHERE simhash_within(fp, (SELECT fp FROM ib WHERE id = 5), 3);

-- errors and NULLs
SELECT count(*) FROM ib WHERE simhash_within(fp, NULL, 3);
SELECT count(*) FROM ib WHERE simhash_within(fp, '1a40201a26358020', -1);
CREATE INDEX ON ib USING simhash (fp) WITH (bits = 4, blocks = 4);
-- KNN reaches distance 64, then the NULL keys, like a sort
CREATE TABLE ib_far (fp simhash);
INSERT INTO ib_far VALUES ('ffffffffffffffff'), ('fffffffffffffffe'), ('0000000000000000'), (NULL);
CREATE INDEX ON ib_far USING simhash (fp);
SET enable_seqscan = off;
SELECT fp, fp <~> '0000000000000000' AS d FROM ib_far ORDER BY fp <~> '0000000000000000';
RESET enable_seqscan;
-- a build larger than maintenance_work_mem spills and sorts per table: same answers
CREATE TABLE ib_big AS SELECT g AS id, simhash(('x' || md5(g::text))::bit(64)::bigint) AS fp
  FROM generate_series(1, 40000) g;
INSERT INTO ib_big SELECT 100000 + id, simhash(simhash_to_bigint(fp) # (3::bigint << (id % 62))) FROM ib_big WHERE id % 100 = 0;
SET maintenance_work_mem = '1MB';
CREATE INDEX ib_big_fp ON ib_big USING simhash (fp);
RESET maintenance_work_mem;
SELECT simhash_index_check('ib_big_fp');
SET enable_seqscan = off;
SELECT sum((SELECT count(*) FROM ib_big b WHERE simhash_within(b.fp, q.fp, 2))) AS index_rows
  FROM ib_big q WHERE q.id % 1000 = 0;
RESET enable_seqscan;
SET enable_indexscan = off;
SET enable_bitmapscan = off;
SELECT sum((SELECT count(*) FROM ib_big b WHERE simhash_within(b.fp, q.fp, 2))) AS seqscan_rows
  FROM ib_big q WHERE q.id % 1000 = 0;
RESET enable_indexscan;
RESET enable_bitmapscan;
DROP TABLE ib, ib_q, ib_seq, ib_knn, ib_far, ib_big;
DROP FUNCTION ib_answers;
