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
# TAP files run side by side (prove -j): each starts servers of its own on
# ports of its own, and much of their time is spent waiting on them.
PROVE_JOBS=${PROVE_JOBS:-$JOBS}
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
	summary+=("$(printf '%-28s %4d passed, %d failed %7s%s' "$1" "$2" "$3" "$(mmss $took)" "${4:+  ($4)}")")
	mark=$SECONDS
}

note "build"
targets="all test/unit/unit_tests"; [ "$SERVER_ONLY" = 1 ] && targets=all   # the unit tests are not run then
# shellcheck disable=SC2086
make -s -j"$JOBS" $targets || { echo "build failed"; echo "simhash: 0 passed, 1 failed in $(mmss $((SECONDS - started)))"; exit 1; }
tally build 1 0

# Every test where its harness looks (docs/development.md): a file left in a
# place tests used to live would silently not run.
note "test tree: no test outside the places the harnesses read"
misplaced=$( { ls -d t/*.pl specs/*.spec src/sql/*.sql test/*_test.cpp 2>/dev/null
	# an expected output belongs to a test of its own folder (NAME_1.out: an
	# alternative output of NAME)
	for f in test/expected/*.out expected/*.out; do [ -e "$f" ] || continue
		n=${f##*/}; n=${n%.out}; d=sql e=sql; [ "${f%%/*}" = test ] && d=test/specs e=spec
		[ -e "$d/$n.$e" ] || [ -e "$d/${n%_[0-9]}.$e" ] || echo "$f"; done; } | tr '\n' ' ')
if [ -n "$misplaced" ]; then
	echo "misplaced: $misplaced"
	echo "(isolation specs: test/specs/ and test/expected/; TAP: test/t/; unit tests: test/unit/; install pieces: src/install/)"
	tally test-tree 0 1 "misplaced: ${misplaced% }"
else
	tally test-tree 1 0
fi

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

# Static analysis and the sanitizer build and run of the unit tests are long
# and CPU-bound; the suites after them (shell tests, fuzz, servers) spend much
# of their time waiting on servers and disks.  So both run in the background,
# niced, from here on, and their results are collected before the summary:
# each its own summary line, with its own time.
bg_dir=$(mktemp -d /tmp/simhash-bg.XXXXXX)
background() {  # background NAME COMMAND...: runs COMMAND, keeps output, status and seconds
	local name=$1; shift
	( renice -n 5 -p "$BASHPID" >/dev/null 2>&1; t0=$SECONDS
	  "$@" >"$bg_dir/$name.log" 2>&1; echo "$? $((SECONDS - t0))" >"$bg_dir/$name.rc" ) &
}
lint_run() {
	if ! command -v clang-tidy >/dev/null || ! command -v cppcheck >/dev/null; then
		echo "clang-tidy or cppcheck is not installed (tools/install-deps.sh installs them): skipped"; return 0
	fi
	make -s -j"$JOBS" lint     # one clang-tidy per file: side by side where a core is free
}
asan_run() { make -s -j"$JOBS" test/unit/unit_tests_asan && ./test/unit/unit_tests_asan --gtest_brief=1; }
background lint lint_run
background unit-asan asan_run
collect() {  # collect NAME: waits for a background job and tallies it
	local name=$1 rc secs
	while [ ! -s "$bg_dir/$name.rc" ]; do sleep 1; done
	read -r rc secs <"$bg_dir/$name.rc"
	note "$name (in the background since the build: $(mmss "$secs"))"
	if [ "$rc" -eq 0 ]; then
		tail -3 "$bg_dir/$name.log"
		mark=$((SECONDS - secs)); tally "$name" 1 0 "$(grep -q 'not installed' "$bg_dir/$name.log" && echo skipped)"
	else
		grep -E 'error|warning:|FAILED|ERROR' "$bg_dir/$name.log" | grep -v 'warnings generated' | head -40
		tail -30 "$bg_dir/$name.log"
		mark=$((SECONDS - secs)); tally "$name" 0 1
	fi
}

note "core unit tests (GoogleTest)"
out=$(./test/unit/unit_tests --gtest_brief=1 2>&1); rc=$?
echo "$out" | tail -25
np=$(echo "$out" | sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p'); np=${np:-0}
nf=$(echo "$out" | sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p'); nf=${nf:-0}
[ $rc -ne 0 ] && [ "$nf" -eq 0 ] && nf=1
tally unit "$np" "$nf"

note "shell tests (test/*_test.sh): command-line tools, install, package, dist, META.json, changelog, benchmark harness"
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
tally fuzz "$np" "$nf" "$(grep -q '^fuzz: skipped' <<<"$out" && echo skipped)"

fi # SERVER_ONLY

source tools/tmp-cluster.sh           # only its private install: pg_regress starts the server

server_tests() {
	# Runs in a tree writable by the current (non-root) user: installcheck
	# once per suite (pg_regress, isolation, TAP), each between two marker
	# lines that give the suite, then its exit status and seconds, so that
	# each gets its own summary line and a failure of one does not hide the
	# others' results.
	local tbin=$1 kind t0 rc
	local args
	eval "args=($SERVER_ARGS)"          # REGRESS='a b' stays one word
	for kind in regress isolation tap; do
		local only=()
		case $kind in
		regress) only=(ISOLATION= TAP_TESTS=) ;;
		isolation) only=(REGRESS= TAP_TESTS=) ;;
		tap) only=(REGRESS= ISOLATION=) ;;
		esac
		echo "@@@ suite $kind"
		t0=$SECONDS
		make -s installcheck PG_CONFIG="$PG_CONFIG" bindir="$tbin" "${args[@]}" "${only[@]}" \
			EXTRA_REGRESS_OPTS="--temp-instance=$PWD/tmp_check_regress --temp-config=$PWD/test/regress.conf --bindir=$tbin" \
			PROVE_FLAGS="--timer -j$PROVE_JOBS" 2>&1
		rc=$?
		echo "@@@ end $kind $rc $((SECONDS - t0))"
	done
}

# count_suite KIND OUTPUT: sets np, nf, fnames (what failed) and secs (its
# time) from one suite's installcheck output and its end marker.
count_suite() {
	local kind=$1 out=$2 npt ntf nd suite_rc
	np=$(echo "$out" | grep -cE '^(ok [0-9]+|test .* \.\.\. ok|ok +[0-9]* *[+-] )' || true)
	nf=$(echo "$out" | grep -cE '(^not ok [0-9]+|\.\.\. FAILED| FAILED )' || true)
	npt=$(echo "$out" | sed -n 's/^Files=[0-9]*, Tests=\([0-9]*\),.*/\1/p' | head -1)
	# prove prints Tests= on success and failure alike; on failure each failing
	# file has a "Failed N/M subtests" line (or none, when it died early)
	ntf=$(echo "$out" | sed -n 's/^ *Failed \([0-9]*\)\/[0-9]* subtests.*/\1/p' | awk '{s+=$1} END {print s+0}')
	# (grep -q on a here-string: "echo | grep -q" fails under pipefail when
	# grep stops reading before echo has written everything)
	if grep -q '^Result: PASS' <<<"$out"; then np=$((np + ${npt:-0})); fi
	if grep -q '^Result: FAIL' <<<"$out"; then
		np=$((np + ${npt:-0} - ${ntf:-0}))
		nf=$((nf + ${ntf:-0}))
		[ "${ntf:-0}" -gt 0 ] || nf=$((nf + 1))
		echo "$out" | grep -E '^test/t/[^ ]+ .*(Wstat|Failed|not ok)|^test/t/.*\(Wstat' | sed 's/^/TAP failed: /'
	fi
	# a test whose expected file is missing: pg_regress cannot diff and stops
	# ("Bail out!" on 16+) without a FAILED line
	nd=$(echo "$out" | grep -cE '^(# )?diff command failed' || true)
	nf=$((nf + nd))
	suite_rc=$(echo "$out" | sed -n "s/^@@@ end $kind \([0-9]*\) [0-9]*$/\1/p")
	secs=$(echo "$out" | sed -n "s/^@@@ end $kind [0-9]* \([0-9]*\)$/\1/p")
	[ "${suite_rc:-1}" -ne 0 ] && [ "$nf" -eq 0 ] && nf=1
	# name what failed: pg_regress/isolation tests, TAP files
	fnames=$( { echo "$out" | sed -n 's/^not ok [0-9]* *[+-] *\([^ ]*\).*/\1/p; s/^test \([^ ]*\) .*FAILED.*/\1/p; s/^test \([^ ]*\) .*diff: .*/\1/p; s/^# diff command failed.*\/expected\/\([^ ]*\)\.out" .*/\1/p'
		echo "$out" | sed -n 's/^\(test\/t\/[^ ]*\.pl\) .*(Wstat.*/\1/p'; } | sort -u | tr '\n' ' ')
	return 0
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
	[[ "$("$pgc" --configure)" == *--enable-cassert* ]] && tag=$tag-cassert
	note "$tag: build and install against $("$pgc" --version) ($pgc)"
	W=/tmp/simhash-test-$(printf %s "$ROOT" | md5sum | cut -c1-8)-$tag
	rm -rf "$W"; mkdir -p "$W"; workdirs+=("$W")
	cp -a "$ROOT/." "$W/"
	rm -rf "$W/tmp_install" "$W/tmp_check" "$W/regression.diffs" "$W/output_iso"
	bindir=$("$pgc" --bindir)               # e.g. /usr/lib/postgresql/15/bin
	if ! make -s -C "$W" -j"$JOBS" all PG_CONFIG="$pgc" >"$W/build.log" 2>&1; then
		tail -30 "$W/build.log"; tally "$tag build" 0 1 "build failed"; continue
	fi
	if ! (TMPC_ROOT=$W TMPC_PG_CONFIG=$pgc; tmpc_install_into "$W/tmp_install"); then
		tally "$tag build" 0 1 "install failed"; continue
	fi
	tally "$tag build" 1 0
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
			SIMHASH_UPGRADE_FROM="$UPGRADE_FROM" SERVER_ARGS="$sargs" PROVE_JOBS="$PROVE_JOBS" \
			bash -c "$(declare -f server_tests); server_tests '$W/tmp_install$bindir'"); rc=$?
	else
		out=$(cd "$W" && PG_CONFIG="$pgc" SIMHASH_UPGRADE_FROM="$UPGRADE_FROM" SERVER_ARGS="$sargs" PROVE_JOBS="$PROVE_JOBS" server_tests "$W/tmp_install$bindir"); rc=$?
	fi
	# diffs and TAP logs: tmp_check/<tag>/ here, and the first server's also where
	# a single-server run always put them (regression.diffs, output_iso/, tmp_check/log)
	rm -rf "${ROOT:?}/tmp_check/$tag"; mkdir -p "$ROOT/tmp_check/$tag"
	printf '%s\n' "$out" >"$ROOT/tmp_check/$tag/installcheck.log"   # all of it, for a look afterwards
	for f in regression.diffs output_iso/regression.diffs; do
		[ -f "$W/$f" ] || continue
		mkdir -p "$ROOT/tmp_check/$tag/$(dirname "$f")" && cp "$W/$f" "$ROOT/tmp_check/$tag/$f"
		[ "$pgc" = "${SERVERS[0]}" ] && mkdir -p "$ROOT/$(dirname "$f")" && cp "$W/$f" "$ROOT/$f"
	done
	if [ -d "$W/tmp_check/log" ]; then
		cp -a "$W/tmp_check/log" "$ROOT/tmp_check/$tag/"
		[ "$pgc" = "${SERVERS[0]}" ] && rm -rf "$ROOT/tmp_check/log" && cp -a "$W/tmp_check/log" "$ROOT/tmp_check/"
	fi
	echo "$out" | grep -vE '^(\+\+\+|=+$|@@@ )' | tail -80
	# one summary line per suite; a suite that ran nothing (REGRESS= ...) has none
	anyfailed=0
	for kind in regress isolation tap; do
		part=$(echo "$out" | awk -v k="$kind" '$1 == "@@@" && $2 == "suite" {on = ($3 == k)} on')
		if [ -z "$part" ]; then
			# the suites never ran (the copy's tests could not start)
			[ $rc -ne 0 ] && [ "$kind" = regress ] && { tally "$tag" 0 1 "server tests did not run"; anyfailed=1; }
			continue
		fi
		count_suite "$kind" "$part"
		[ "$np" -eq 0 ] && [ "$nf" -eq 0 ] && continue
		[ "$nf" -gt 0 ] && anyfailed=1
		mark=$((SECONDS - ${secs:-0}))         # the line's time: the suite's own
		tally "$tag $kind" "$np" "$nf" "${fnames:+failed: ${fnames% }}"
	done
	if [ -f "$W/regression.diffs" ] && [ "$anyfailed" = 1 ]; then note "$tag: regression.diffs"; head -200 "$W/regression.diffs"; fi
	[ -z "$UPGRADE_FROM" ] && UPGRADE_FROM=$W/tmp_install$(dirname "$bindir")
done

if [ "$SERVER_ONLY" != 1 ]; then
	collect lint
	collect unit-asan
	rm -rf "$bg_dir"
fi

note "summary"
printf '%s\n' "${summary[@]}"
echo "simhash: $passed passed, $failed failed in $(mmss $((SECONDS - started)))"
[ "$failed" -eq 0 ]
