"""simhash_psycopg — psycopg 3 adapters between Python ints and the simhash type.

Copy this file next to your code (it depends only on psycopg 3, Debian's
python3-psycopg), then:

    import psycopg
    from simhash_psycopg import Simhash, register_simhash

    with psycopg.connect("dbname=mydb") as conn:
        register_simhash(conn)           # after CREATE EXTENSION simhash
        conn.execute("INSERT INTO pages (url, fp) VALUES (%s, %s)",
                     ("https://example.org/", Simhash(0x1A40201A26358020)))
        fp = conn.execute("SELECT fp FROM pages").fetchone()[0]   # a Python int

A simhash is read as an unsigned int 0 .. 2**64 - 1 (the value of its 16 hex
digits), in text and in binary results alike.  Wrap an int in Simhash(...) to
send it as a simhash (text or binary, so binary COPY works too); negative ints
-2**63 .. -1 are taken as bigint bit patterns, as the bigint -> simhash cast
does.  Plain ints are left alone: psycopg keeps sending them as numbers.

Without these adapters, write the cast in SQL: %s::simhash works for every
int since the extension casts smallint, integer, bigint and numeric.
"""

import struct

from psycopg.adapt import Dumper, Loader
from psycopg.pq import Format
from psycopg.types import TypeInfo

_MASK = (1 << 64) - 1


class Simhash(int):
    """An int to be sent to PostgreSQL as a simhash."""

    def __new__(cls, value):
        value = int(value)
        if not -(1 << 63) <= value <= _MASK:
            raise ValueError(f"{value} does not fit in 64 bits")
        return super().__new__(cls, value & _MASK)

    def __repr__(self):
        return f"Simhash(0x{int(self):016x})"


class SimhashTextDumper(Dumper):
    format = Format.TEXT

    def dump(self, obj):
        return b"%016x" % (int(obj) & _MASK)


class SimhashBinaryDumper(Dumper):
    format = Format.BINARY

    def dump(self, obj):
        return struct.pack(">Q", int(obj) & _MASK)


class SimhashTextLoader(Loader):
    format = Format.TEXT

    def load(self, data):
        return int(bytes(data), 16)


class SimhashBinaryLoader(Loader):
    format = Format.BINARY

    def load(self, data):
        return struct.unpack(">Q", bytes(data))[0]


def register_simhash(context):
    """Register the simhash type on a connection or cursor; returns its TypeInfo.

    The extension must be installed in the connection's database."""
    conn = getattr(context, "connection", context)
    info = TypeInfo.fetch(conn, "simhash")
    if info is None:
        raise LookupError("type simhash not found: run CREATE EXTENSION simhash")
    info.register(context)  # lets COPY's set_types() name "simhash"
    adapters = context.adapters
    for base in (SimhashTextDumper, SimhashBinaryDumper):
        # the type's oid differs between databases: one subclass per registration
        adapters.register_dumper(Simhash, type(base.__name__, (base,), {"oid": info.oid}))
    adapters.register_loader(info.oid, SimhashTextLoader)
    adapters.register_loader(info.oid, SimhashBinaryLoader)
    return info
