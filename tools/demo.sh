#!/usr/bin/env bash
# demo.sh — the README's first command: install dependencies, build and
# install the extension, start a throwaway PostgreSQL cluster, fingerprint
# the HTML pages of the PostgreSQL documentation and show near-duplicates.
set -euo pipefail
cd "$(dirname "$0")/.."
SUDO=; [ "$(id -u)" = 0 ] || SUDO=sudo

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "installing build dependencies"
bash tools/install-deps.sh

step "building and installing the extension"
make -s -j"$(nproc)"
$SUDO make -s install >/dev/null

CORPUS=${CORPUS:-/usr/share/doc/postgresql-doc-15/html}
BIN=$(pg_config --bindir)
DIR=$(mktemp -d /tmp/simhash-demo.XXXXXX)
$SUDO chown postgres: "$DIR"
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else sudo -u postgres "$@"; fi; }
cleanup() { as_pg "$BIN/pg_ctl" -D "$DIR/data" -m immediate stop >/dev/null 2>&1 || true; $SUDO rm -rf "$DIR"; }
trap cleanup EXIT

step "starting a throwaway cluster in $DIR"
as_pg "$BIN/initdb" -D "$DIR/data" -A trust -E UTF8 --locale=C.UTF-8 >/dev/null
as_pg "$BIN/pg_ctl" -D "$DIR/data" -l "$DIR/server.log" -w \
	-o "-c listen_addresses='' -k $DIR -c max_wal_size=2GB" start >/dev/null
psql_demo() { as_pg "$BIN/psql" -h "$DIR" -X -q -v ON_ERROR_STOP=1 -P pager=off "$@" postgres; }

step "loading HTML pages from $CORPUS and /usr/share/doc/*/copyright"
psql_demo -v corpus="$CORPUS" -f tools/demo.sql
