-- postgres_fdw: with simhash in the server's "extensions" option, its
-- immutable operators and functions (<~> with ORDER BY ... LIMIT,
-- simhash_within, %@) are shipped to the remote side (Remote SQL), where the
-- index answers them; % is STABLE (it reads simhash.max_distance), so
-- postgres_fdw never ships it and filters locally.  Answers equal the local
-- ones.  A loopback server on this instance (through its first socket directory).
CREATE EXTENSION postgres_fdw;
DO $d$
BEGIN
    EXECUTE format('CREATE SERVER loopback FOREIGN DATA WRAPPER postgres_fdw OPTIONS (dbname %L, port %L, host %L)',
                   current_database(), current_setting('port'),
                   coalesce(nullif(trim(split_part(current_setting('unix_socket_directories'), ',', 1)), ''),
                            'localhost'));
END
$d$;
CREATE USER MAPPING FOR CURRENT_USER SERVER loopback;

CREATE TABLE fdw_pages (id int PRIMARY KEY, fp simhash);
INSERT INTO fdw_pages
SELECT i, (('x' || md5((i / 4)::text))::bit(64)::bigint # (7::bigint << (i % 60)))::simhash
  FROM generate_series(1, 4000) i;
CREATE INDEX ON fdw_pages USING simhash (fp);
ANALYZE fdw_pages;
CREATE FOREIGN TABLE fdw_remote (id int, fp simhash)
    SERVER loopback OPTIONS (table_name 'fdw_pages', use_remote_estimate 'true');

-- Without the option, everything is evaluated locally after fetching every row.
EXPLAIN (VERBOSE, COSTS OFF)
SELECT id FROM fdw_remote WHERE simhash_within(fp, 'c81e728d9d4c2163', 4);

ALTER SERVER loopback OPTIONS (ADD extensions 'simhash');
EXPLAIN (VERBOSE, COSTS OFF)
SELECT id FROM fdw_remote WHERE fp % 'c81e728d9d4c2163';
EXPLAIN (VERBOSE, COSTS OFF)
SELECT id FROM fdw_remote WHERE simhash_within(fp, 'c81e728d9d4c2163', 4);
EXPLAIN (VERBOSE, COSTS OFF)
SELECT id FROM fdw_remote WHERE fp %@ simhash_query('c81e728d9d4c2163'::simhash, 4);
EXPLAIN (VERBOSE, COSTS OFF)
SELECT id, fp <~> 'c81e728d9d4c2163' FROM fdw_remote ORDER BY fp <~> 'c81e728d9d4c2163' LIMIT 3;

-- The same answers as the local table.
SELECT array_agg(id ORDER BY id) FROM fdw_remote WHERE fp % 'c81e728d9d4c2163';
SELECT array_agg(id ORDER BY id) FROM fdw_pages WHERE fp % 'c81e728d9d4c2163';
SELECT id, fp <~> 'c81e728d9d4c2163' AS d FROM fdw_remote ORDER BY fp <~> 'c81e728d9d4c2163', id LIMIT 5;
SELECT id, fp <~> 'c81e728d9d4c2163' AS d FROM fdw_pages ORDER BY fp <~> 'c81e728d9d4c2163', id LIMIT 5;
SELECT count(*) AS differences FROM (
    (SELECT q.id, p.id FROM fdw_pages q, fdw_remote p WHERE q.id % 97 = 0 AND simhash_within(p.fp, q.fp, 5)
     EXCEPT ALL
     SELECT q.id, p.id FROM fdw_pages q, fdw_pages p WHERE q.id % 97 = 0 AND simhash_within(p.fp, q.fp, 5))
    UNION ALL
    (SELECT q.id, p.id FROM fdw_pages q, fdw_pages p WHERE q.id % 97 = 0 AND simhash_within(p.fp, q.fp, 5)
     EXCEPT ALL
     SELECT q.id, p.id FROM fdw_pages q, fdw_remote p WHERE q.id % 97 = 0 AND simhash_within(p.fp, q.fp, 5))) s;

-- % is filtered here, so it follows this session's simhash.max_distance.
SET simhash.max_distance = 5;
SELECT count(*) AS local_5 FROM fdw_pages WHERE fp % 'c81e728d9d4c2163';
SELECT count(*) AS foreign_5 FROM fdw_remote WHERE fp % 'c81e728d9d4c2163';
SELECT count(*) AS within_5 FROM fdw_remote WHERE simhash_within(fp, 'c81e728d9d4c2163', 5);
SELECT count(*) AS within_3 FROM fdw_remote WHERE simhash_within(fp, 'c81e728d9d4c2163', 3);
RESET simhash.max_distance;

-- simhash_pairs reads a foreign table like any other relation.
SELECT count(*) AS differences FROM (
    (SELECT * FROM simhash_pairs('fdw_remote', 'fp', 'id', 3) EXCEPT ALL SELECT * FROM simhash_pairs('fdw_pages', 'fp', 'id', 3))
    UNION ALL
    (SELECT * FROM simhash_pairs('fdw_pages', 'fp', 'id', 3) EXCEPT ALL SELECT * FROM simhash_pairs('fdw_remote', 'fp', 'id', 3))) s;

DROP FOREIGN TABLE fdw_remote;
DROP TABLE fdw_pages;
DROP USER MAPPING FOR CURRENT_USER SERVER loopback;
DROP SERVER loopback;
DROP EXTENSION postgres_fdw;
