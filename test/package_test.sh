#!/usr/bin/env bash
# The Debian package: dpkg-buildpackage -us -uc -b on a copy of the tree
# yields postgresql-<major>-simhash holding the extension and the CLI tools,
# and the extension it holds works on a fresh cluster.
#
# The package is not installed into the system: a system-wide simhash would be
# seen by every other test run and checkout (their private installs copy the
# system's PostgreSQL directories) and would need root.  Instead the test makes
# a private copy of the server's installation without any simhash file, unpacks
# the package over it (dpkg -x: the package's absolute paths land where the
# copied server looks, PostgreSQL finds lib/ and share/ relative to its bin/),
# and starts a cluster from that copy.  Skipped, saying why, where the
# packaging tools are not installed (tools/install-deps.sh installs them).
set -u
cd "$(dirname "$0")/.."
ROOT=$PWD
PG_CONFIG=${PG_CONFIG:-pg_config}
pass=0 fail=0
check() {  # check NAME EXPECTED ACTUAL
	if [ "$2" == "$3" ]; then pass=$((pass + 1)); else fail=$((fail + 1)); printf 'FAIL %s\n  expected: %q\n  actual:   %q\n' "$1" "$2" "$3"; fi
}
skip() {
	echo "package: skipped: $*"
	echo "package: 0 passed, 0 failed (skipped)"
	exit 0
}
for c in dpkg-buildpackage dpkg-deb dh pg_buildext dh_pgxs_test; do
	command -v "$c" >/dev/null ||
		skip "$c is not installed (dpkg-dev, debhelper, postgresql-server-dev-all: bash tools/install-deps.sh)"
done
major=$($PG_CONFIG --version | sed -n 's/^PostgreSQL \([0-9]*\).*/\1/p')
pg_buildext supported-versions 2>/dev/null | grep -qx "$major" ||
	skip "PostgreSQL $major ($PG_CONFIG) is not a version the system packages extensions for ($(pg_buildext supported-versions 2>/dev/null | tr '\n' ' '))"
pkg=postgresql-$major-simhash
bindir=$($PG_CONFIG --bindir) libdir=$($PG_CONFIG --pkglibdir) sharedir=$($PG_CONFIG --sharedir)
version=$(sed -n 's/^EXTVERSION *= *//p' Makefile)

source tools/tmp-cluster.sh
tmpc_mkdir package   # TMPC_DIR, removed on exit with the cluster

# The tree as a fresh clone would have it: the files git knows (committed or
# not, deleted ones left out), no build products.
src=$TMPC_DIR/src/simhash
mkdir -p "$src"
if git -C "$ROOT" rev-parse --git-dir >/dev/null 2>&1; then
	git -C "$ROOT" ls-files -z --cached --others --exclude-standard |
		while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
		tar --null -T - -cf - | tar -xf - -C "$src"
else
	cp -a "$ROOT/." "$src/" && make -s -C "$src" clean >/dev/null
fi

# Built as a user builds it: no -Werror (a newer compiler's warning must not
# fail a package build), debian/control for the versions this system supports.
if ! (cd "$src" && pg_buildext updatecontrol &&
	env -u WERROR DEB_BUILD_OPTIONS="nocheck parallel=$(nproc)" MAKEFLAGS="-j$(nproc)" \
		dpkg-buildpackage -us -uc -b) >"$TMPC_DIR/build.log" 2>&1; then
	tail -40 "$TMPC_DIR/build.log"
	check dpkg-buildpackage 0 1
	echo "package: $pass passed, $fail failed"
	exit 1
fi
deb=$(ls "$TMPC_DIR/src/${pkg}_${version}"-*_"$(dpkg --print-architecture)".deb 2>/dev/null | head -1)
check package-built "${pkg}_$version" "$(basename "${deb:-none}" | sed 's/-[^-]*$//')"
[ -n "$deb" ] || { echo "package: $pass passed, $fail failed"; exit 1; }

# What the package holds: what make install puts there (test/install_test.sh),
# and its documentation.
files=$(dpkg-deb -c "$deb" | awk '$1 !~ /^d/ {print substr($6, 2)}' | sort)
for f in "$libdir/simhash.so" "$sharedir/extension/simhash.control" "$sharedir/extension/simhash--$version.sql" \
	"$bindir/simhash-fingerprint" "$bindir/simhash-find-all" "$bindir/simhash-find-clusters" \
	"/usr/share/doc/$pkg/copyright"; do
	check "holds $f" "$f" "$(grep -x -- "$f" <<<"$files")"
done
for f in src/install/upgrade/simhash--*.sql; do
	check "holds ${f##*/}" 1 "$(grep -cx -- "$sharedir/extension/${f##*/}" <<<"$files")"
done
depends=$(dpkg-deb -f "$deb" Depends)
for d in "postgresql-$major" libgumbo libicu; do  # xxhash is inlined
	check "depends on $d" 1 "$(tr ',' '\n' <<<"$depends" | grep -c "^ *$d")"
done

# A private server installation without simhash, then the package over it.
inst=$TMPC_DIR/install
mkdir -p "$inst$(dirname "$(dirname "$bindir")")" "$inst$(dirname "$sharedir")"
cp -a "$(dirname "$bindir")" "$inst$(dirname "$(dirname "$bindir")")/"
cp -a "$sharedir" "$inst$(dirname "$sharedir")/"
rm -f "$inst$libdir"/simhash.so "$inst$sharedir"/extension/simhash[.-]* "$inst$bindir"/simhash-*
dpkg -x "$deb" "$inst"
TMPC_BIN=$inst$bindir
tmpc_start
# The extension, an index on it that a query uses, and the update path from
# 1.0 (the package carries the frozen scripts).
out=$(tmpc_psql -At 2>&1 <<'SQL'
CREATE EXTENSION simhash;
SELECT extversion FROM pg_extension WHERE extname = 'simhash';
CREATE TABLE docs (body text, fp simhash GENERATED ALWAYS AS (simhash(body)) STORED);
INSERT INTO docs (body) SELECT 'document number ' || i || ' of the package test' FROM generate_series(1, 2000) i;
CREATE INDEX ON docs USING simhash (fp);
SET enable_seqscan = off;
SELECT count(*) FROM docs WHERE fp %@ simhash_query(simhash(text 'document number 7 of the package test'), 3);
SET enable_seqscan = on; SET enable_indexscan = off; SET enable_bitmapscan = off;
SELECT count(*) FROM docs WHERE fp %@ simhash_query(simhash(text 'document number 7 of the package test'), 3);
CREATE DATABASE old;
\c old
CREATE EXTENSION simhash VERSION '1.0';
ALTER EXTENSION simhash UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'simhash';
SQL
)
check sql "$(printf '%s\n' "$version" N N "$version")" "$(sed 's/^[1-9][0-9]*$/N/' <<<"$out")"
n=$(sed -n 2p <<<"$out")
check index-equals-seqscan "$n" "$(sed -n 3p <<<"$out")"
check index-finds-the-document 1 "$([ "${n:-0}" -ge 1 ] 2>/dev/null && echo 1)"
check plan-uses-index 1 "$(tmpc_psql -At -c 'SET enable_seqscan = off' \
	-c "EXPLAIN SELECT * FROM docs WHERE fp %@ simhash_query('0'::simhash, 3)" | grep -c 'Index.*docs_fp_idx')"
# The packaged tools: fingerprint | find-all.
check cli-fingerprint "$(printf '2b1502900150c14d\t1')" "$(printf 'hello world' | "$TMPC_BIN/simhash-fingerprint")"
check cli-find-all "$(printf '[3104390335662440781, 3104390335662440783]')" \
	"$(printf '3104390335662440781\n3104390335662440783\n' | "$TMPC_BIN/simhash-find-all" --distance 1)"

echo "package: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
