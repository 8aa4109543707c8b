#!/usr/bin/env bash
# make install DESTDIR=... puts exactly the extension (library, control file,
# SQL scripts) and the three CLI tools under DESTDIR, creating every directory
# (a package build starts from an empty one), and make uninstall removes all
# of them again.
set -u
cd "$(dirname "$0")/.."
PG_CONFIG=${PG_CONFIG:-pg_config}
pass=0 fail=0
check() {  # check NAME EXPECTED ACTUAL
	if [ "$2" == "$3" ]; then pass=$((pass + 1)); else fail=$((fail + 1)); printf 'FAIL %s\n  expected: %q\n  actual:   %q\n' "$1" "$2" "$3"; fi
}
tmp=$(mktemp -d /tmp/simhash-install-test.XXXXXX); trap 'rm -rf "$tmp"' EXIT
dest=$tmp/dest
bindir=$($PG_CONFIG --bindir) libdir=$($PG_CONFIG --pkglibdir) sharedir=$($PG_CONFIG --sharedir)

# What should be installed: the tools built from src/cli, the module, the
# control file, the install script of this version and every frozen script.
expected=$( {
	for t in src/cli/simhash-*.cpp; do t=${t##*/}; echo "$bindir/${t%.cpp}"; done
	echo "$libdir/simhash.so"
	echo "$sharedir/extension/simhash.control"
	echo "$sharedir/extension/simhash--$(sed -n 's/^EXTVERSION *= *//p' Makefile).sql"
	for f in src/install/upgrade/simhash--*.sql; do echo "$sharedir/extension/${f##*/}"; done
} | sort)

make -s install DESTDIR="$dest" >"$tmp/log" 2>&1; rc=$?
check install-exit 0 "$rc"
[ "$rc" = 0 ] || head -20 "$tmp/log"
check installed-files "$expected" "$(cd "$dest" && find . ! -type d | sed 's/^\.//' | sort)"
for t in src/cli/simhash-*.cpp; do
	t=${t##*/}; t=${t%.cpp}
	"$dest$bindir/$t" --help >/dev/null 2>&1; check "installed-$t-runs" 0 $?
done
make -s uninstall DESTDIR="$dest" >"$tmp/log" 2>&1; rc=$?
check uninstall-exit 0 "$rc"
check uninstalled-files "" "$(cd "$dest" && find . ! -type d | sed 's/^\.//' | sort)"

echo "install: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
