#!/usr/bin/env bash
# run.sh SECONDS [TARGET...] — runs the libFuzzer targets of test/fuzz/ for
# SECONDS each (all targets by default), nice'd, starting from the committed
# seed corpus (test/fuzz/corpus/TARGET); new inputs go to the working corpus
# test/fuzz/build/corpus/TARGET, crashes to test/fuzz/build/crash-TARGET-*.
# Prints the executions of each target and ends with "fuzz: N passed, M failed".
# Without clang++-14 and libFuzzer (Debian: clang-14, libclang-rt-14-dev) it
# says so and passes nothing and fails nothing.
set -u
cd "$(dirname "$0")/../.."
SECONDS_EACH=${1:-5}; shift || true
FUZZ_CXX=${FUZZ_CXX:-clang++-14}
if ! command -v "$FUZZ_CXX" >/dev/null ||
	! echo 'extern "C" int LLVMFuzzerTestOneInput(const char *, unsigned long) { return 0; }' |
		"$FUZZ_CXX" -x c++ -fsanitize=fuzzer -o /dev/null - 2>/dev/null; then
	echo "fuzz: skipped: $FUZZ_CXX with libFuzzer not found (apt-get install clang-14 libclang-rt-14-dev)"
	echo "fuzz: 0 passed, 0 failed"
	exit 0
fi
make -s -j"$(nproc)" fuzz-build FUZZ_CXX="$FUZZ_CXX" || { echo "fuzz: build failed"; echo "fuzz: 0 passed, 1 failed"; exit 1; }
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=($(ls test/fuzz/fuzz_*.cpp | sed 's|test/fuzz/fuzz_\(.*\)\.cpp|\1|'))
pass=0 fail=0
for t in "${targets[@]}"; do
	work=test/fuzz/build/corpus/$t
	mkdir -p "$work"
	log=test/fuzz/build/$t.log
	# -rss_limit_mb: no input may make a target grow past 1 GB; -timeout: nor take 10 s.
	ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} nice -n 10 "test/fuzz/build/fuzz_$t" \
		-max_total_time="$SECONDS_EACH" -max_len=16384 -timeout=10 -rss_limit_mb=1024 \
		-print_final_stats=1 -artifact_prefix="test/fuzz/build/crash-$t-" \
		"$work" "test/fuzz/corpus/$t" >"$log" 2>&1
	rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1)
	if [ $rc -eq 0 ]; then
		pass=$((pass + 1))
		printf 'fuzz_%-12s %10s executions in %ss, %s, corpus %s files\n' "$t" "${execs:-?}" "$SECONDS_EACH" "${cov:-cov: ?}" "$(ls "$work" | wc -l)"
	else
		fail=$((fail + 1))
		printf 'fuzz_%-12s FAILED (exit %d), see %s:\n' "$t" "$rc" "$log"
		grep -E 'ERROR|check failed|Test unit written|SUMMARY' "$log" | head -8
	fi
done
echo "fuzz: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
