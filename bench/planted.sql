-- planted.sql — the benchmark data set of bench/index_bench.sh and bench/index_sweep.sh,
-- read on psql's standard input with -v n=ROWS -v queries=QUERIES.
-- t: n fingerprints, 90% random (md5 of the row number) and 10% planted near
-- duplicates: row c's fingerprint with 1..6 bits flipped (c = a random earlier row).
-- bq: the query set, half the sources of planted rows 2, 4, 6, ... (each has a
-- near copy at distance <= 1, 3 or 5), half fresh random values.
CREATE TABLE t (id int, fp simhash);
INSERT INTO t SELECT i, ('x' || md5(i::text))::bit(64)::simhash FROM generate_series(1, (:n * 9) / 10) i;
INSERT INTO t SELECT (:n * 9) / 10 + i,
       (('x' || md5(c::text))::bit(64)::bigint # m)::simhash
  FROM (SELECT i, 1 + (hashint4(i) & 2147483647) % ((:n * 9) / 10) AS c,
               (SELECT bit_or(1::bigint << ((hashint4(i * 64 + b) & 2147483647) % 64))
                  FROM generate_series(1, 1 + i % 6) b) AS m
          FROM generate_series(1, :n - (:n * 9) / 10) i) s;
CREATE TABLE bq (qid int, q simhash);
INSERT INTO bq SELECT i, ('x' || md5((1 + (hashint4(i * 2) & 2147483647) % ((:n * 9) / 10))::text))::bit(64)::simhash
  FROM generate_series(1, :queries / 2) i;
INSERT INTO bq SELECT :queries / 2 + i, ('x' || md5('fresh' || i))::bit(64)::simhash FROM generate_series(1, :queries - :queries / 2) i;
