-- simhash 1.1 -> 1.2 (ALTER EXTENSION simhash UPDATE TO '1.2').
--
-- Every change made to the SQL objects of src/sql/*.sql since 1.1 is repeated
-- here, in the order of the pieces; t/090_extension_upgrade.pl checks that an
-- updated 1.1 (and 1.0) has exactly the objects, definitions, comments and
-- privileges of a fresh 1.2 install.
\echo Use "ALTER EXTENSION simhash UPDATE TO '1.2'" to load this file. \quit
