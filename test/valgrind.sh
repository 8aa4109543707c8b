#!/usr/bin/env bash
# valgrind.sh — the pg_regress and isolation suites once, with every server
# process under valgrind memcheck (`make valgrind`; slow, not part of make test).
#
# The server is the stock one (a copy in tmp_install/, as in run-all.sh): it is
# not built with USE_VALGRIND, so memcheck cannot see inside palloc's blocks.
# It sees malloc'ed memory: reads of uninitialised bytes that reach a system
# call or a branch, out-of-bounds accesses past a malloc'ed block, and any use
# of a block after free().  The extension creates its own memory contexts with
# sizes outside the allocator's free-list classes (SIMHASH_CONTEXT_SIZES in
# src/simhash.h), so deleting one returns its blocks to malloc at once and a
# use after MemoryContextDelete() is reported as a read of freed memory.
#
# The postmaster runs under valgrind; its backends are fork()ed copies and
# stay under it (--trace-children=yes also follows anything exec()ed).
# Known reports of the stock server itself are suppressed by
# test/valgrind.supp.  Any other report fails the run; the reports are
# printed and kept in tmp_valgrind/ (VALGRIND_KEEP=1 keeps the whole cluster).
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PG_CONFIG=${PG_CONFIG:-pg_config}
JOBS=${JOBS:-$(nproc)}

make -s -j"$JOBS" all || { echo "build failed"; exit 1; }

bindir=$($PG_CONFIG --bindir)
pkgdir=$(dirname "$bindir")
sharedir=$($PG_CONFIG --sharedir)
T=$ROOT/tmp_install
rm -rf "$T"
mkdir -p "$T$(dirname "$pkgdir")" "$T$(dirname "$sharedir")"
cp -a "$pkgdir" "$T$(dirname "$pkgdir")/"
cp -a "$sharedir" "$T$(dirname "$sharedir")/"
make -s install DESTDIR="$T" >/dev/null || { echo "install failed"; exit 1; }

memcheck_suites() {
	# Runs in a tree writable by the current (non-root) user.
	local tbin=$1 D=$PWD/tmp_valgrind port=55432 rc=0 vpid
	rm -rf "$D"; mkdir -p "$D/logs" "$D/sock"
	"$tbin/initdb" -D "$D/data" -A trust --no-sync -E UTF8 --locale=C >"$D/initdb.log" 2>&1 ||
		{ cat "$D/initdb.log"; return 1; }
	cat >>"$D/data/postgresql.conf" <<-EOF
	listen_addresses = ''
	unix_socket_directories = '$D/sock'
	port = $port
	max_connections = 20
	shared_buffers = 16MB
	autovacuum = off
	jit = off
	fsync = off
	max_parallel_workers_per_gather = 0
	EOF
	valgrind --quiet --tool=memcheck --trace-children=yes --leak-check=no \
		--num-callers=30 --error-markers=VALGRINDERROR-BEGIN,VALGRINDERROR-END \
		--gen-suppressions=all --suppressions="$PWD/test/valgrind.supp" \
		--log-file="$D/logs/%p.log" \
		"$tbin/postgres" -D "$D/data" >"$D/server.log" 2>&1 &
	vpid=$!
	for _ in $(seq 1 600); do
		"$tbin/pg_isready" -q -h "$D/sock" -p $port && break
		sleep 1
	done
	"$tbin/pg_isready" -q -h "$D/sock" -p $port || { echo "server did not start"; cat "$D/server.log"; kill $vpid; return 1; }
	PGHOST=$D/sock PGPORT=$port make -s installcheck bindir="$tbin" TAP_TESTS= 2>&1 || rc=1
	kill -INT $vpid
	wait $vpid
	return $rc
}

if [ "$(id -u)" = 0 ]; then
	W=/tmp/simhash-valgrind-$(printf %s "$ROOT" | md5sum | cut -c1-8)
	rm -rf "$W"; mkdir -p "$W"
	cp -a "$ROOT/." "$W/"
	chown -R postgres:postgres "$W"
	(cd "$W" && runuser -u postgres -- env HOME=/tmp PATH="$PATH" \
		bash -c "$(declare -f memcheck_suites); memcheck_suites '$W/tmp_install$bindir'"); rc=$?
	rm -rf "$ROOT/tmp_valgrind"; mkdir -p "$ROOT/tmp_valgrind"
	cp -a "$W/tmp_valgrind/logs" "$W/tmp_valgrind/server.log" "$ROOT/tmp_valgrind/"
	for f in regression.diffs output_iso/regression.diffs; do
		[ -f "$W/$f" ] && mkdir -p "$ROOT/$(dirname "$f")" && cp "$W/$f" "$ROOT/$f"
	done
	[ -n "${VALGRIND_KEEP:-}" ] || rm -rf "$W"
else
	memcheck_suites "$T$bindir"; rc=$?
fi

L=$ROOT/tmp_valgrind/logs
nproc=$(ls "$L" | wc -l)
nerr=$(cat "$L"/*.log 2>/dev/null | grep -c '^==[0-9]*== VALGRINDERROR-BEGIN' || true)
if [ "$nerr" -gt 0 ]; then
	grep -l VALGRINDERROR-BEGIN "$L"/*.log | while read -r f; do
		echo "---- $f"
		sed -n '/VALGRINDERROR-BEGIN/,/VALGRINDERROR-END/p' "$f" | head -120
	done
fi
echo "valgrind: $nproc server processes, $nerr memcheck errors; suites $([ $rc = 0 ] && echo passed || echo FAILED)"
[ "$rc" = 0 ] && [ "$nerr" = 0 ]
