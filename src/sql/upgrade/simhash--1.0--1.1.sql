-- simhash 1.0 -> 1.1 (ALTER EXTENSION simhash UPDATE TO '1.1').
--
-- Every change made to the SQL objects of src/sql/*.sql since 1.0 is repeated
-- here; t/090_extension_upgrade.pl checks that an updated 1.0 has exactly the
-- objects, definitions, comments and privileges of a fresh 1.1 install and
-- prints what is missing or extra.
\echo Use "ALTER EXTENSION simhash UPDATE TO '1.1'" to load this file. \quit
