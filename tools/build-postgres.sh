#!/bin/bash
# build-postgres.sh: build and install a PostgreSQL source tarball into PREFIX with assertions
# and debug symbols, for the assert-enabled server the CI runs the server suites on (a release
# build lets lock-order and memory-context mistakes pass; --enable-cassert catches them).
#
#   sudo tools/build-postgres.sh TARBALL PREFIX [extra configure flags...]
#   e.g. tools/build-postgres.sh ../shared/deps/postgresql/postgresql-18.6.tar.bz2 \
#            /usr/local/pgsql-18.6-cassert
#
# Configured with --enable-cassert --enable-debug --enable-tap-tests --with-icu --without-llvm
# plus the extra flags. Idempotent: skips the build when PREFIX/bin/pg_config exists and reports
# the tarball's version. Installs the build tools it needs (Debian packages) when run as root.
# About 10 minutes on 2 cores. Prints PREFIX/bin/pg_config last.
set -eu
[ $# -ge 2 ] || { echo "usage: $0 TARBALL PREFIX [configure flags...]" >&2; exit 2; }
TARBALL=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
PREFIX=$2
shift 2
[ -f "$TARBALL" ] || { echo "$TARBALL: no such file" >&2; exit 1; }
# postgresql-18.6.tar.bz2 or postgresql-18_18.6.orig.tar.bz2 -> 18.6
VERSION=$(basename "$TARBALL" | sed -E 's/^postgresql-([0-9]+_)?([0-9]+(\.[0-9]+)?).*$/\2/')
case "$VERSION" in
[0-9]*) ;;
*) echo "$TARBALL: cannot tell the PostgreSQL version from the file name" >&2; exit 1 ;;
esac
if [ -x "$PREFIX/bin/pg_config" ] && "$PREFIX/bin/pg_config" --version | grep -qF " $VERSION"; then
	echo "$PREFIX/bin/pg_config"
	exit 0
fi
need=""
for p in build-essential bison flex pkg-config libicu-dev zlib1g-dev libreadline-dev perl libipc-run-perl; do
	dpkg -s "$p" >/dev/null 2>&1 || need="$need $p"
done
if [ -n "$need" ]; then
	[ "$(id -u)" = 0 ] || { echo "missing Debian packages:$need (run as root to install them)" >&2; exit 1; }
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q >/dev/null
	apt-get install -y -q --no-install-recommends $need >/dev/null
fi
W=$(mktemp -d /tmp/pg-build.XXXXXX)
trap 'rm -rf "$W"' EXIT
tar -xf "$TARBALL" -C "$W"
SRC=$(find "$W" -mindepth 1 -maxdepth 1 -type d -name 'postgresql-*' | head -1)
[ -n "$SRC" ] || { echo "$TARBALL: no postgresql-* directory inside" >&2; exit 1; }
cd "$SRC"
{ ./configure -q --prefix="$PREFIX" --enable-cassert --enable-debug --enable-tap-tests \
	--with-icu --without-llvm "$@" &&
	make -s -j"$(nproc)" world-bin && make -s install-world-bin; } >"$W/build.log" 2>&1 ||
	{ tail -30 "$W/build.log"; echo "postgresql $VERSION build failed" >&2; exit 1; }
"$PREFIX/bin/pg_config" --version | grep -qF " $VERSION" ||
	{ echo "$PREFIX/bin/pg_config does not report $VERSION" >&2; exit 1; }
echo "$PREFIX/bin/pg_config"
