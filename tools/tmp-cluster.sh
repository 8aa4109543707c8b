# tmp-cluster.sh — sourced (not run) by the scripts that need a throwaway
# PostgreSQL cluster: tools/demo.sh, bench/run.sh, bench/quality.sh and
# bench/index_sweep.sh.  test/run-all.sh uses only tmpc_install_into, since
# pg_regress --temp-instance starts its own server.
#
#   source tools/tmp-cluster.sh
#   tmpc_install            # build, install into $TMPC_DIR/install (never the system)
#   tmpc_start [-c name=value ...]
#   tmpc_psql -c 'SELECT 1' # psql on the cluster (ON_ERROR_STOP, no psqlrc)
#   pgbench ...             # PG* variables are exported: any client tool works
#
# The extension goes into a private copy of the server's installation, so
# parallel checkouts and the system never see each other's builds; a caller
# that installed the extension itself sets TMPC_BIN (the server's bindir) and
# skips tmpc_install.  The server runs as "postgres" (PostgreSQL refuses root)
# in a directory under /tmp, on a unix socket only; clients connect as
# database user postgres with trust authentication, so they may run as any OS
# user.  The cluster and its directory are removed on exit by an EXIT trap
# that this file sets when the caller has none (TMPC_KEEP=1 keeps them); a
# caller with its own EXIT trap calls tmpc_cleanup from it, and keeps it.
#
# After tmpc_start: TMPC_DIR (the directory), TMPC_BIN (bindir holding the
# server, the client tools and our CLI tools), PGHOST/PGPORT/PGUSER/PGDATABASE.

TMPC_ROOT=${TMPC_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
TMPC_PG_CONFIG=${PG_CONFIG:-pg_config}
TMPC_SUDO=; [ "$(id -u)" = 0 ] || TMPC_SUDO=sudo

tmpc_as_pg() {  # run a command as the postgres OS user
	if [ "$(id -un)" = postgres ]; then "$@"
	elif [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"
	else sudo -u postgres "$@"; fi
}

tmpc_mkdir() {  # tmpc_mkdir NAME: creates TMPC_DIR once
	[ -n "${TMPC_DIR:-}" ] && return 0
	TMPC_DIR=$(mktemp -d "/tmp/simhash-${1:-cluster}.XXXXXX")
	chmod 755 "$TMPC_DIR"
	# a caller's own EXIT trap stays (it calls tmpc_cleanup, as said above)
	[ -n "$(trap -p EXIT)" ] || trap tmpc_cleanup EXIT
}

tmpc_install_into() {  # tmpc_install_into DEST: install this tree's build under DEST
	local dest=$1 bindir pkgdir sharedir
	bindir=$($TMPC_PG_CONFIG --bindir)     # e.g. /usr/lib/postgresql/15/bin
	pkgdir=$(dirname "$bindir")            # e.g. /usr/lib/postgresql/15
	sharedir=$($TMPC_PG_CONFIG --sharedir) # e.g. /usr/share/postgresql/15
	mkdir -p "$dest$(dirname "$pkgdir")" "$dest$(dirname "$sharedir")"
	cp -a "$pkgdir" "$dest$(dirname "$pkgdir")/"
	cp -a "$sharedir" "$dest$(dirname "$sharedir")/"
	make -s -C "$TMPC_ROOT" install PG_CONFIG="$TMPC_PG_CONFIG" DESTDIR="$dest" >/dev/null
}

tmpc_install() {  # build this tree and install it into a private prefix
	tmpc_mkdir "${1:-cluster}"
	make -s -C "$TMPC_ROOT" -j"$(nproc)" PG_CONFIG="$TMPC_PG_CONFIG" >/dev/null
	tmpc_install_into "$TMPC_DIR/install"
	TMPC_BIN=$TMPC_DIR/install$($TMPC_PG_CONFIG --bindir)
	export TMPC_DIR TMPC_BIN
}

tmpc_start() {  # start the cluster; arguments are extra postgres options
	tmpc_mkdir cluster
	[ -n "${TMPC_BIN:-}" ] || tmpc_install
	mkdir -p "$TMPC_DIR/data"
	$TMPC_SUDO chown postgres: "$TMPC_DIR" "$TMPC_DIR/data"
	tmpc_as_pg "$TMPC_BIN/initdb" -D "$TMPC_DIR/data" -A trust -U postgres -E UTF8 \
		--locale=C.UTF-8 >/dev/null
	tmpc_as_pg "$TMPC_BIN/pg_ctl" -D "$TMPC_DIR/data" -l "$TMPC_DIR/server.log" -w \
		-o "-c listen_addresses='' -k $TMPC_DIR -c max_wal_size=4GB $*" start >/dev/null
	export PGHOST=$TMPC_DIR PGPORT=5432 PGUSER=postgres PGDATABASE=postgres
	TMPC_STARTED=1
}

tmpc_psql() {  # psql on the cluster: stops at the first error, reads no psqlrc
	"$TMPC_BIN/psql" -X -q -v ON_ERROR_STOP=1 -P pager=off "$@"
}

tmpc_stop() {  # stop the cluster if this file started it
	if [ -n "${TMPC_STARTED:-}" ]; then
		tmpc_as_pg "$TMPC_BIN/pg_ctl" -D "$TMPC_DIR/data" -m fast stop >/dev/null 2>&1 || true
		TMPC_STARTED=
	fi
}

tmpc_cleanup() {  # stop, and remove the directory unless TMPC_KEEP is set
	tmpc_stop
	if [ -n "${TMPC_DIR:-}" ] && [ -z "${TMPC_KEEP:-}" ]; then
		$TMPC_SUDO rm -rf "$TMPC_DIR"
	fi
}
