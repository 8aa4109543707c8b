#!/usr/bin/env bash
# make dist builds the release tarball simhash-VERSION.tar.gz with git archive,
# and that tarball stands on its own: unpacked into an empty directory it
# builds, installs (into a private copy of the server's installation, never
# the system) and passes make installcheck against a temporary instance.
# By default installcheck runs a few pg_regress tests and one isolation spec
# (DIST_TEST_FULL=1: the tarball's whole installcheck, TAP included).
# Skipped, saying why, outside a git checkout (a tarball has no history to
# archive).
set -u
cd "$(dirname "$0")/.."
ROOT=$PWD
PG_CONFIG=${PG_CONFIG:-pg_config}
JOBS=${JOBS:-$(nproc)}
pass=0 fail=0
check() {  # check NAME EXPECTED ACTUAL
	if [ "$2" == "$3" ]; then pass=$((pass + 1)); else fail=$((fail + 1)); printf 'FAIL %s\n  expected: %q\n  actual:   %q\n' "$1" "$2" "$3"; fi
}
if ! git rev-parse --verify -q HEAD >/dev/null 2>&1; then
	echo "dist: skipped: not a git checkout"
	echo "dist: 0 passed, 0 failed (skipped)"
	exit 0
fi
tmp=$(mktemp -d /tmp/simhash-dist-test.XXXXXX); trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"
version=$(python3 -c 'import json; print(json.load(open("META.json"))["version"])')
name=simhash-$version
commit=$(git rev-parse HEAD)

# The tarball: one top directory named after the version, the commit it was
# made from in its header, and what a user's make installcheck needs.
out=$(make -s dist DIST_DIR="$tmp" 2>&1); rc=$?
check make-dist-exit 0 "$rc"
[ "$rc" = 0 ] || echo "$out"
tarball=$tmp/$name.tar.gz
check tarball-named "$name.tar.gz" "$(cd "$tmp" && ls -- *.tar.gz 2>/dev/null)"
check tarball-commit "$commit" "$(gzip -dc "$tarball" | git get-tar-commit-id)"
check tarball-one-top-directory "$name/" "$(tar -tzf "$tarball" | cut -d/ -f1 | sort -u | sed 's|$|/|')"
check tarball-files-are-head "$(git ls-tree -r --name-only HEAD | sort)" \
	"$(tar -tzf "$tarball" | grep -v '/$' | sed "s|^$name/||" | sort)"

tar -xzf "$tarball" -C "$tmp"
src=$tmp/$name
# META.json's files are in the tarball (its own meta test, run inside it)
out=$(bash "$src/test/meta_test.sh" 2>&1); rc=$?
check meta-in-tarball 0 "$rc"
[ "$rc" = 0 ] || echo "$out" | tail -5

# Build and install as a user would (no -Werror), into a private copy of the
# server's installation.
make -s -C "$src" -j"$JOBS" PG_CONFIG="$PG_CONFIG" >"$tmp/build.log" 2>&1; rc=$?
check build 0 "$rc"
[ "$rc" = 0 ] || tail -20 "$tmp/build.log"
(TMPC_ROOT=$src TMPC_PG_CONFIG=$PG_CONFIG; source "$src/tools/tmp-cluster.sh"; tmpc_install_into "$tmp/install") \
	>"$tmp/install.log" 2>&1; rc=$?
check install 0 "$rc"
[ "$rc" = 0 ] || tail -20 "$tmp/install.log"
tbin=$tmp/install$($PG_CONFIG --bindir)
check installed-script "yes" "$([ -f "$tmp/install$($PG_CONFIG --sharedir)/extension/simhash--$(sed -n "s/^default_version = '\(.*\)'/\1/p" "$src/simhash.control").sql" ] && echo yes)"

# make installcheck in the unpacked tree, against a temporary instance
# (PostgreSQL refuses root: as postgres then, who gets the tree).
if [ "${DIST_TEST_FULL:-0}" = 1 ]; then
	args=()
else
	args=(REGRESS="type distance fingerprint index_basic" ISOLATION=index_check_lock TAP_TESTS=)
fi
ic=(make -s -C "$src" installcheck PG_CONFIG="$PG_CONFIG" bindir="$tbin" "${args[@]}"
	EXTRA_REGRESS_OPTS="--temp-instance=$src/tmp_check_regress --bindir=$tbin")
if [ "$(id -u)" = 0 ]; then
	chown -R postgres: "$src"
	out=$(runuser -u postgres -- env HOME=/tmp PATH="$PATH" "${ic[@]}" 2>&1); rc=$?
else
	out=$("${ic[@]}" 2>&1); rc=$?
fi
check installcheck-exit 0 "$rc"
nok=$(echo "$out" | grep -cE '^(test .* \.\.\. ok|ok +[0-9]* *[+-] )')
nbad=$(echo "$out" | grep -cE '\.\.\. FAILED|^not ok')
check installcheck-failed 0 "$nbad"
[ "${DIST_TEST_FULL:-0}" = 1 ] || check installcheck-passed 5 "$nok"
if [ "$rc" != 0 ] || [ "$nbad" != 0 ]; then
	echo "$out" | tail -30
	[ -f "$src/regression.diffs" ] && head -60 "$src/regression.diffs"
fi

echo "dist: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
