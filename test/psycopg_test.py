#!/usr/bin/env python3
"""Using simhash from Python with psycopg 3 (Debian's python3-psycopg).

Run as `python3 test/psycopg_test.py "CONNINFO"` against a database where the
extension can be created; test/t/011_psycopg.pl runs it in `make test`.  Every step
is an assertion; the script prints "N passed, 0 failed" or stops at the first
failure with its traceback.
"""

import os
import sys

import psycopg

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
from simhash_psycopg import Simhash, register_simhash  # noqa: E402

passed = 0


def check(what, got, expected):
    global passed
    if got != expected:
        raise AssertionError(f"{what}: got {got!r}, expected {expected!r}")
    passed += 1


def main(conninfo):
    with psycopg.connect(conninfo, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS simhash")
        conn.execute("DROP TABLE IF EXISTS py_pages")
        conn.execute("CREATE TABLE py_pages (id int PRIMARY KEY, body text,"
                     " fp simhash GENERATED ALWAYS AS (simhash(body)) STORED)")

        # 1. Without adapters: bind any Python int with an explicit cast.
        #    psycopg sends 7 as smallint, 70000 as integer, 2**40 as bigint and
        #    2**64 - 1 as numeric; the extension casts each of them.
        for value, hexa in [(7, "0000000000000007"), (70000, "0000000000011170"),
                            (2**40, "0000010000000000"), (2**64 - 1, "ffffffffffffffff"),
                            (-1, "ffffffffffffffff")]:
            check(f"%s::simhash of {value}",
                  conn.execute("SELECT %s::simhash::text", (value,)).fetchone()[0], hexa)
        # ... and read one back as an unsigned int through numeric.
        check("simhash::numeric", conn.execute(
            "SELECT 'ffffffffffffffff'::simhash::numeric").fetchone()[0], 2**64 - 1)

        # 2. Fingerprints computed by the server from a generated column.
        conn.execute("INSERT INTO py_pages (id, body) VALUES (1, 'hello world'), (2, 'hello world!')")
        rows = conn.execute("SELECT id, fp::text FROM py_pages ORDER BY id").fetchall()
        check("generated column", rows[0][1], rows[1][1])

        # 3. With the adapters: simhash values come back as Python ints,
        #    Simhash(...) goes out as a simhash, in text and binary format.
        register_simhash(conn)
        fp = conn.execute("SELECT simhash(text 'hello world')").fetchone()[0]
        check("text loader", (type(fp), fp), (int, int(rows[0][1], 16)))
        cur = conn.cursor(binary=True)
        check("binary loader", cur.execute("SELECT 'ffffffffffffffff'::simhash").fetchone()[0],
              2**64 - 1)
        for placeholder in ("%s", "%t", "%b"):
            got = conn.execute(f"SELECT {placeholder} <~> '0'::simhash, pg_typeof({placeholder})::text",
                               (Simhash(0xF0), Simhash(0xF0))).fetchone()
            check(f"dumper {placeholder}", got, (4, "simhash"))
        check("negative int as bigint bits",
              conn.execute("SELECT %b::text", (Simhash(-1),)).fetchone()[0], "ffffffffffffffff")
        near = conn.execute("SELECT id FROM py_pages WHERE simhash_within(fp, %s, 3) ORDER BY id",
                            (Simhash(fp),)).fetchall()
        check("query by a bound fingerprint", near, [(1,), (2,)])

        # 4. Binary COPY in and out, with simhash values as Python ints.
        conn.execute("CREATE TEMP TABLE py_hashes (id int, fp simhash)")
        data = [(i, (i * 0x9E3779B97F4A7C15) & (2**64 - 1)) for i in range(1, 1001)]
        with conn.cursor() as cur:
            with cur.copy("COPY py_hashes (id, fp) FROM STDIN (FORMAT BINARY)") as copy:
                copy.set_types(["int4", "simhash"])
                for i, h in data:
                    copy.write_row((i, Simhash(h)))
            check("binary COPY FROM row count",
                  cur.execute("SELECT count(*) FROM py_hashes").fetchone()[0], len(data))
            check("binary COPY FROM value", cur.execute(
                "SELECT fp::numeric FROM py_hashes WHERE id = 1000").fetchone()[0], data[-1][1])
            with cur.copy("COPY (SELECT id, fp FROM py_hashes ORDER BY id) TO STDOUT (FORMAT BINARY)") as copy:
                copy.set_types(["int4", "simhash"])
                back = list(copy.rows())
            check("binary COPY TO", back, data)
    print(f"{passed} passed, 0 failed")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "")
