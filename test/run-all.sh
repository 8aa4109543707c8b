#!/usr/bin/env bash
# run-all.sh — every test of the project: core unit tests, then pg_regress,
# isolation and TAP tests against a private, throwaway PostgreSQL instance.
#
# The extension is installed into tmp_install/ (a copy of the server's own
# installation), never into the system, so tests cannot see a stale build and
# parallel checkouts do not disturb each other.  PostgreSQL refuses to run as
# root, so when started as root the server-side tests run as "postgres" on a
# copy of the tree that user can write.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PG_CONFIG=${PG_CONFIG:-pg_config}
export WERROR=${WERROR:-1}            # the tests build with -Werror (see Makefile)
JOBS=${JOBS:-$(nproc)}
# A subset, while developing: SERVER_ONLY=1 skips everything before the server
# tests, and SERVER_ARGS passes make variables to them, e.g.
#   SERVER_ONLY=1 SERVER_ARGS="REGRESS=index_knn ISOLATION= PROVE_TESTS=t/003_index_runs.pl" make test
# (TAP_TESTS= skips the TAP tests).  make test itself runs everything.
SERVER_ONLY=${SERVER_ONLY:-0}
SERVER_ARGS=${SERVER_ARGS:-}
# The server tests' copy of the tree in /tmp (when run as root) is removed at
# the end; KEEP_TMP=1 keeps it for a look at what a failed test left.
KEEP_TMP=${KEEP_TMP:-0}
passed=0 failed=0
summary=()
started=$SECONDS mark=$SECONDS

note() { printf '\n==== %s\n' "$*"; }
tally() {  # tally NAME PASSED FAILED [NOTE]: a summary line with the time since the last one
	local took=$((SECONDS - mark))
	passed=$((passed + $2)); failed=$((failed + $3))
	summary+=("$(printf '%-12s %4d passed, %d failed %6s%s' "$1" "$2" "$3" \
		"$((took / 60))m$(printf %02d $((took % 60)))s" "${4:+  ($4)}")")
	mark=$SECONDS
}

note "build"
make -s -j"$JOBS" all test/unit_tests || { echo "build failed"; echo "0 passed, 1 failed"; exit 1; }
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
out=$(./test/unit_tests --gtest_brief=1 2>&1); rc=$?
echo "$out" | tail -25
np=$(echo "$out" | sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p'); np=${np:-0}
nf=$(echo "$out" | sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p'); nf=${nf:-0}
[ $rc -ne 0 ] && [ "$nf" -eq 0 ] && nf=1
tally unit "$np" "$nf"

note "core unit tests under AddressSanitizer + UBSan"
if make -s test/unit_tests_asan >/dev/null && ./test/unit_tests_asan --gtest_brief=1 >/tmp/simhash-asan.$$ 2>&1; then
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

note "install into tmp_install/"
source tools/tmp-cluster.sh           # only its private install: pg_regress starts the server
bindir=$($PG_CONFIG --bindir)         # e.g. /usr/lib/postgresql/15/bin
T=$ROOT/tmp_install
rm -rf "$T"
tmpc_install_into "$T" || { tally install 0 1; }

server_tests() {
	# Runs in a tree writable by the current (non-root) user.
	local tbin=$1
	eval "set -- $SERVER_ARGS"   # quoted lists stay one word: REGRESS='a b'
	make -s installcheck bindir="$tbin" "$@" \
		EXTRA_REGRESS_OPTS="--temp-instance=$PWD/tmp_check_regress --bindir=$tbin" \
		PROVE_FLAGS="--timer" 2>&1
}

note "server tests (pg_regress, isolation, TAP)"
if [ "$(id -u)" = 0 ]; then
	W=/tmp/simhash-test-$(printf %s "$ROOT" | md5sum | cut -c1-8)
	rm -rf "$W"; mkdir -p "$W"
	# shellcheck disable=SC2064
	trap "[ '$KEEP_TMP' = 1 ] && echo 'KEEP_TMP=1: the server tests ran in $W' || rm -rf '$W'" EXIT
	cp -a "$ROOT/." "$W/"
	chown -R postgres:postgres "$W"
	out=$(cd "$W" && runuser -u postgres -- env HOME=/tmp PATH="$PATH" \
		SERVER_ARGS="$SERVER_ARGS" bash -c "$(declare -f server_tests); server_tests '$W/tmp_install$bindir'"); rc=$?
	for f in regression.diffs output_iso/regression.diffs; do
		[ -f "$W/$f" ] && mkdir -p "$ROOT/$(dirname "$f")" && cp "$W/$f" "$ROOT/$f"
	done
	[ -d "$W/tmp_check/log" ] && rm -rf "$ROOT/tmp_check/log" && mkdir -p "$ROOT/tmp_check" && cp -a "$W/tmp_check/log" "$ROOT/tmp_check/"
else
	out=$(server_tests "$T$bindir"); rc=$?
fi
echo "$out" | grep -vE '^(\+\+\+|=+$)' | tail -80
np=$(echo "$out" | grep -cE '^(ok [0-9]+|test .* \.\.\. ok|ok +[0-9]* *[+-] )' || true)
nf=$(echo "$out" | grep -cE '(^not ok [0-9]+|\.\.\. FAILED| FAILED )' || true)
npt=$(echo "$out" | sed -n 's/^Files=[0-9]*, Tests=\([0-9]*\),.*/\1/p' | head -1)
if echo "$out" | grep -q '^Result: PASS'; then np=$((np + ${npt:-0})); fi
if echo "$out" | grep -q '^Result: FAIL'; then nf=$((nf + 1)); fi
[ $rc -ne 0 ] && [ "$nf" -eq 0 ] && nf=1
if [ -f regression.diffs ] && [ "$nf" -gt 0 ]; then note "regression.diffs"; head -200 regression.diffs; fi
tally server "$np" "$nf"

note "summary"
printf '%s\n' "${summary[@]}"
took=$((SECONDS - started))
echo "simhash: $passed passed, $failed failed in $((took / 60))m$(printf %02d $((took % 60)))s"
[ "$failed" -eq 0 ]
