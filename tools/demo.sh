#!/usr/bin/env bash
# demo.sh — the README's first command: install dependencies, build and
# install the extension, start a throwaway PostgreSQL cluster, fingerprint
# the HTML pages of the PostgreSQL documentation and show near-duplicates.
# DEMO_KEEP=1 leaves the cluster running and prints how to connect to it.
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
source tools/tmp-cluster.sh
TMPC_BIN=$(pg_config --bindir)   # the server the extension was just installed into
tmpc_mkdir demo

step "starting a throwaway cluster in $TMPC_DIR"
tmpc_start -c max_wal_size=2GB

step "loading HTML pages from $CORPUS and /usr/share/doc/*/copyright"
tmpc_psql -v corpus="$CORPUS" -f tools/demo.sql

if [ "${DEMO_KEEP:-0}" = 1 ]; then
	trap - EXIT   # keep the cluster: no cleanup
	step "the cluster keeps running (DEMO_KEEP=1)"
	echo "connect:  $TMPC_BIN/psql -h $TMPC_DIR -p 5432 -U postgres postgres"
	echo "stop it:  ${SUDO:+sudo }runuser -u postgres -- $TMPC_BIN/pg_ctl -D $TMPC_DIR/data stop && ${SUDO:+sudo }rm -rf $TMPC_DIR"
else
	echo
	echo "(DEMO_KEEP=1 make demo keeps the cluster running to explore the table pages.)"
fi
