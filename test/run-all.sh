#!/usr/bin/env bash
# run-all.sh — every test of the project: core unit tests, then pg_regress,
# isolation and TAP tests against a private, throwaway instance of every
# PostgreSQL server given (PG_CONFIGS, below).
#
# For each server the tree is copied to /tmp/simhash-test-<hash>-<server>,
# built there against that server, and the extension installed into the
# copy's tmp_install/ (a copy of the server's own installation), never into
# the system, so tests cannot see a stale build, two majors' objects never
# mix, and parallel checkouts do not disturb each other.  PostgreSQL refuses
# to run as root, so when started as root the server-side tests run as
# "postgres", who owns the copy.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
# The servers the server suites run against, each with its own build of the
# extension in its own copy of the tree (objects of two majors never mix):
# PG_CONFIGS="pg_config /usr/local/pgsql-18.6/bin/pg_config ...".  Default:
# PG_CONFIG alone when it is set (make PG_CONFIG=... test), else Debian's
# PostgreSQL 15 plus those of the builds of 18 that exist (the release build of
# ../shared/deps/postgresql/build.sh and the assert-enabled build of
# tools/build-postgres.sh, both as .ci/run makes them).  Everything before the
# server suites (unit tests, lint, CLI) is built in this tree against the first.
if [ -z "${PG_CONFIGS:-}" ]; then
	if [ -n "${PG_CONFIG:-}" ]; then
		PG_CONFIGS=$PG_CONFIG
	else
		PG_CONFIGS=pg_config
		for p in /usr/local/pgsql-18.6/bin/pg_config /usr/local/pgsql-18.6-cassert/bin/pg_config; do
			[ -x "$p" ] && PG_CONFIGS="$PG_CONFIGS $p"
		done
	fi
fi
read -ra SERVERS <<<"$PG_CONFIGS"
export PG_CONFIG=${SERVERS[0]}
export WERROR=${WERROR:-1}            # the tests build with -Werror (see Makefile)
JOBS=${JOBS:-$(nproc)}
# A subset, while developing: SERVER_ONLY=1 skips everything before the server
# tests, and SERVER_ARGS passes make variables to them, e.g.
#   SERVER_ONLY=1 SERVER_ARGS="REGRESS=index_knn ISOLATION= PROVE_TESTS=test/t/003_index_runs.pl" make test
# (TAP_TESTS= skips the TAP tests).  make test itself runs everything.
SERVER_ONLY=${SERVER_ONLY:-0}
CASSERT_SKIP_TAP=${CASSERT_SKIP_TAP-test/t/004_index_size.pl test/t/010_readme.pl test/t/011_psycopg.pl test/t/020_exclusion_dump.pl test/t/090_extension_upgrade.pl test/t/091_pg_upgrade.pl}
SERVER_ARGS=${SERVER_ARGS:-}
# The server tests' copies of the tree in /tmp (when run as root) are removed
# at the end; KEEP_TMP=1 keeps them for a look at what a failed test left.
KEEP_TMP=${KEEP_TMP:-0}
passed=0 failed=0
summary=()
workdirs=()
started=$SECONDS mark=$SECONDS
cleanup() {
	[ ${#workdirs[@]} -eq 0 ] && return
	if [ "$KEEP_TMP" = 1 ]; then echo "KEEP_TMP=1: the server tests ran in ${workdirs[*]}"
	else rm -rf "${workdirs[@]}"; fi
}
trap cleanup EXIT

note() { printf '\n==== %s\n' "$*"; }
mmss() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }
tally() {  # tally NAME PASSED FAILED [NOTE]: a summary line with the time since the last one
	local took=$((SECONDS - mark))
	passed=$((passed + $2)); failed=$((failed + $3))
	summary+=("$(printf '%-18s %4d passed, %d failed %7s%s' "$1" "$2" "$3" "$(mmss $took)" "${4:+  ($4)}")")
	mark=$SECONDS
}

note "build"
targets="all test/unit/unit_tests"; [ "$SERVER_ONLY" = 1 ] && targets=all   # the unit tests are not run then
# shellcheck disable=SC2086
make -s -j"$JOBS" $targets || { echo "build failed"; echo "0 passed, 1 failed"; exit 1; }
tally build 1 0

if [ "$SERVER_ONLY" != 1 ]; then
note "core: no PostgreSQL header in src/core"
if grep -rlE '#include *[<"](postgres|fmgr|utils/|access/|catalog/)' src/core ; then
	tally core-purity 0 1
else
	tally core-purity 1 0
fi

note "layout: make format-check (clang-format over the core, the CLI and the C shim)"
if command -v clang-format >/dev/null; then
	if make -s format-check >/tmp/simhash-format.$$ 2>&1; then
		tally format 1 0
	else
		head -40 /tmp/simhash-format.$$; echo "run: make format"; tally format 0 1
	fi
	rm -f /tmp/simhash-format.$$
else
	echo "clang-format is not installed (tools/install-deps.sh installs it): skipped"
fi

note "static analysis: make lint (cppcheck and clang-tidy over the core, the CLI and the C shim)"
if command -v clang-tidy >/dev/null && command -v cppcheck >/dev/null; then
	if make -s lint >/tmp/simhash-lint.$$ 2>&1; then
		tally lint 1 0
	else
		grep -E 'error|warning:' /tmp/simhash-lint.$$ | grep -v 'warnings generated' | head -40; tally lint 0 1
	fi
	rm -f /tmp/simhash-lint.$$
else
	echo "clang-tidy or cppcheck is not installed (tools/install-deps.sh installs them): skipped"
fi

note "core unit tests (GoogleTest)"
out=$(./test/unit/unit_tests --gtest_brief=1 2>&1); rc=$?
echo "$out" | tail -25
np=$(echo "$out" | sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p'); np=${np:-0}
nf=$(echo "$out" | sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p'); nf=${nf:-0}
[ $rc -ne 0 ] && [ "$nf" -eq 0 ] && nf=1
tally unit "$np" "$nf"

note "core unit tests under AddressSanitizer + UBSan"
if make -s test/unit/unit_tests_asan >/dev/null && ./test/unit/unit_tests_asan --gtest_brief=1 >/tmp/simhash-asan.$$ 2>&1; then
	tally unit-asan 1 0
else
	tail -30 /tmp/simhash-asan.$$; tally unit-asan 0 1
fi
rm -f /tmp/simhash-asan.$$

note "command-line tools (test/*_test.sh)"
for t in test/*_test.sh; do
	[ -e "$t" ] || continue
	out=$(bash "$t" 2>&1); rc=$?
	echo "$out" | tail -15
	line=$(echo "$out" | grep -E '[0-9]+ passed, [0-9]+ failed' | tail -1)
	np=$(echo "$line" | grep -oE '[0-9]+ passed' | grep -oE '[0-9]+'); np=${np:-0}
	nf=$(echo "$line" | grep -oE '[0-9]+ failed' | grep -oE '[0-9]+'); nf=${nf:-0}
	[ $rc -ne 0 ] && [ "$nf" -eq 0 ] && nf=1
	tally "$(basename "$t" _test.sh)" "$np" "$nf" "$(echo "$line" | grep -o skipped)"
done

note "fuzz targets, a few seconds each (test/fuzz/run.sh; make fuzz for long runs)"
out=$(bash test/fuzz/run.sh "${FUZZ_SMOKE_SECONDS:-3}" 2>&1); rc=$?
echo "$out" | tail -15
line=$(echo "$out" | grep -E '^fuzz: [0-9]+ passed, [0-9]+ failed' | tail -1)
np=$(echo "$line" | grep -oE '[0-9]+ passed' | grep -oE '[0-9]+'); np=${np:-0}
nf=$(echo "$line" | grep -oE '[0-9]+ failed' | grep -oE '[0-9]+'); nf=${nf:-0}
[ $rc -ne 0 ] && [ "$nf" -eq 0 ] && nf=1
tally fuzz "$np" "$nf" "$(echo "$out" | grep -q '^fuzz: skipped' && echo skipped)"

fi # SERVER_ONLY

source tools/tmp-cluster.sh           # only its private install: pg_regress starts the server

server_tests() {
	# Runs in a tree writable by the current (non-root) user.
	local tbin=$1
	# -i: PGXS's installcheck runs pg_regress, isolation and TAP as lines of one
	# recipe; a failure of one kind must not hide the others' results (the
	# failure is counted from the output, and from make's "(ignored)" line).
	local args
	eval "args=($SERVER_ARGS)"          # REGRESS='a b' stays one word
	make -s -i installcheck PG_CONFIG="$PG_CONFIG" bindir="$tbin" "${args[@]}" \
		EXTRA_REGRESS_OPTS="--temp-instance=$PWD/tmp_check_regress --bindir=$tbin" \
		PROVE_FLAGS="--timer" 2>&1
}

# test/t/091_pg_upgrade.pl upgrades from the first server's private install to
# every later server of a newer major.
UPGRADE_FROM=
for pgc in "${SERVERS[@]}"; do
	ver=$("$pgc" --version 2>/dev/null | sed -n 's/^PostgreSQL \([0-9]*\).*/\1/p')
	if [ -z "$ver" ]; then
		note "server tests: $pgc is not a pg_config"; tally "server-$pgc" 0 1; continue
	fi
	tag=server-$ver
	"$pgc" --configure | grep -q -- '--enable-cassert' && tag=$tag-cassert
	note "$tag: build and install against $("$pgc" --version) ($pgc)"
	W=/tmp/simhash-test-$(printf %s "$ROOT" | md5sum | cut -c1-8)-$tag
	rm -rf "$W"; mkdir -p "$W"; workdirs+=("$W")
	cp -a "$ROOT/." "$W/"
	rm -rf "$W/tmp_install" "$W/tmp_check" "$W/regression.diffs" "$W/output_iso"
	bindir=$("$pgc" --bindir)               # e.g. /usr/lib/postgresql/15/bin
	if ! make -s -C "$W" -j"$JOBS" all PG_CONFIG="$pgc" >"$W/build.log" 2>&1; then
		tail -30 "$W/build.log"; tally "$tag" 0 1 "build failed"; continue
	fi
	if ! (TMPC_ROOT=$W TMPC_PG_CONFIG=$pgc; tmpc_install_into "$W/tmp_install"); then
		tally "$tag" 0 1 "install failed"; continue
	fi
	# The assert-enabled server runs pg_regress, isolation and the TAP tests
	# that drive the access method's own paths (WAL replay, crashes, merges,
	# damaged pages, build), not those that test the SQL surface, clients,
	# pg_dump or pg_upgrade again (CASSERT_SKIP_TAP; empty runs them all):
	# CI's 90 minutes hold three servers only so.
	sargs=$SERVER_ARGS
	if [ "${tag%-cassert}" != "$tag" ] && [[ "$sargs" != *PROVE_TESTS=* ]] && [[ "$sargs" != *TAP_TESTS=* ]]; then
		taps=""
		for t in "$W"/test/t/*.pl; do
			case " $CASSERT_SKIP_TAP " in *" test/t/${t##*/} "*) ;; *) taps="$taps test/t/${t##*/}" ;; esac
		done
		sargs="${sargs:+$sargs }PROVE_TESTS='${taps# }'"
	fi
	note "$tag: server tests (pg_regress, isolation, TAP${sargs:+; $sargs})"
	if [ "$(id -u)" = 0 ]; then
		chown -R postgres:postgres "$W"
		out=$(cd "$W" && runuser -u postgres -- env HOME=/tmp PATH="$PATH" PG_CONFIG="$pgc" \
			SIMHASH_UPGRADE_FROM="$UPGRADE_FROM" SERVER_ARGS="$sargs" \
			bash -c "$(declare -f server_tests); server_tests '$W/tmp_install$bindir'"); rc=$?
	else
		out=$(cd "$W" && PG_CONFIG="$pgc" SIMHASH_UPGRADE_FROM="$UPGRADE_FROM" SERVER_ARGS="$sargs" server_tests "$W/tmp_install$bindir"); rc=$?
	fi
	# diffs and TAP logs: tmp_check/<tag>/ here, and the first server's also where
	# a single-server run always put them (regression.diffs, output_iso/, tmp_check/log)
	rm -rf "${ROOT:?}/tmp_check/$tag"; mkdir -p "$ROOT/tmp_check/$tag"
	for f in regression.diffs output_iso/regression.diffs; do
		[ -f "$W/$f" ] || continue
		mkdir -p "$ROOT/tmp_check/$tag/$(dirname "$f")" && cp "$W/$f" "$ROOT/tmp_check/$tag/$f"
		[ "$pgc" = "${SERVERS[0]}" ] && mkdir -p "$ROOT/$(dirname "$f")" && cp "$W/$f" "$ROOT/$f"
	done
	if [ -d "$W/tmp_check/log" ]; then
		cp -a "$W/tmp_check/log" "$ROOT/tmp_check/$tag/"
		[ "$pgc" = "${SERVERS[0]}" ] && rm -rf "$ROOT/tmp_check/log" && cp -a "$W/tmp_check/log" "$ROOT/tmp_check/"
	fi
	echo "$out" | grep -vE '^(\+\+\+|=+$)' | tail -80
	np=$(echo "$out" | grep -cE '^(ok [0-9]+|test .* \.\.\. ok|ok +[0-9]* *[+-] )' || true)
	nf=$(echo "$out" | grep -cE '(^not ok [0-9]+|\.\.\. FAILED| FAILED )' || true)
	npt=$(echo "$out" | sed -n 's/^Files=[0-9]*, Tests=\([0-9]*\),.*/\1/p' | head -1)
	# prove prints Tests= on success and failure alike; on failure each failing
	# file has a "Failed N/M subtests" line (or none, when it died early)
	ntf=$(echo "$out" | sed -n 's/^ *Failed \([0-9]*\)\/[0-9]* subtests.*/\1/p' | awk '{s+=$1} END {print s+0}')
	if echo "$out" | grep -q '^Result: PASS'; then np=$((np + ${npt:-0})); fi
	if echo "$out" | grep -q '^Result: FAIL'; then
		np=$((np + ${npt:-0} - ${ntf:-0}))
		nf=$((nf + ${ntf:-0}))
		[ "${ntf:-0}" -gt 0 ] || nf=$((nf + 1))
		echo "$out" | grep -E '^test/t/[^ ]+ .*(Wstat|Failed|not ok)|^test/t/.*\(Wstat' | sed 's/^/TAP failed: /'
	fi
	# a test whose expected file is missing: pg_regress cannot diff and stops
	# ("Bail out!" on 16+) without a FAILED line
	nd=$(echo "$out" | grep -cE '^(# )?diff command failed' || true)
	nf=$((nf + nd))
	if echo "$out" | grep -qE 'Error [0-9]+ \(ignored\)' && [ "$nf" -eq 0 ]; then nf=1; fi
	[ $rc -ne 0 ] && [ "$nf" -eq 0 ] && nf=1
	if [ -f "$W/regression.diffs" ] && [ "$nf" -gt 0 ]; then note "$tag: regression.diffs"; head -200 "$W/regression.diffs"; fi
	# name what failed in the summary: pg_regress/isolation tests, TAP files
	fnames=$( { echo "$out" | sed -n 's/^not ok [0-9]* *[+-] *\([^ ]*\).*/\1/p; s/^test \([^ ]*\) .*FAILED.*/\1/p; s/^test \([^ ]*\) .*diff: .*/\1/p; s/^# diff command failed.*\/expected\/\([^ ]*\)\.out" .*/\1/p'
		echo "$out" | sed -n 's/^\(test\/t\/[^ ]*\.pl\) .*(Wstat.*/\1/p'; } | sort -u | tr '\n' ' ')
	tally "$tag" "$np" "$nf" "${fnames:+failed: ${fnames% }}"
	[ -z "$UPGRADE_FROM" ] && UPGRADE_FROM=$W/tmp_install$(dirname "$bindir")
done

note "summary"
printf '%s\n' "${summary[@]}"
echo "total time $(mmss $((SECONDS - started)))"
echo "simhash: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
