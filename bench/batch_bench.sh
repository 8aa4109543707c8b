#!/usr/bin/env bash
# batch_bench.sh — simhash-find-all / simhash-find-clusters on N random
# hashes (default 1M), blocks 5 and 6, distance 3: wall time and peak RSS of
# our CLI with 1 and 2 threads beside the seomoz simhash-cpp binaries, built
# from their public repository into /tmp for this run only (never committed),
# on the same input in the same run.  Checks that both outputs are equal once
# sorted.  Not part of `make test`.
#
#   bash bench/batch_bench.sh [N]
#   SEOMOZ_SRC=/path/to/simhash-cpp (a checkout or a bare git directory;
#   default: the mirror fetched by the project's tooling).
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-1000000}
SEOMOZ_SRC=${SEOMOZ_SRC:-/work/.mirror/seomoz+simhash-cpp/repo}
W=${BENCH_DIR:-/tmp/simhash-batch-bench}
mkdir -p "$W"
make -s src/cli/simhash-find-all src/cli/simhash-find-clusters

# ---- seomoz simhash-cpp, built with its own flags (-O3 -std=c++11) ---------
S=$W/seomoz
if [ ! -x "$S/simhash-find-all" ] || [ ! -x "$S/simhash-find-clusters" ]; then
	rm -rf "$S"; mkdir -p "$S"
	if [ -d "$SEOMOZ_SRC/src" ]; then cp -a "$SEOMOZ_SRC/." "$S/"
	else git --git-dir="$SEOMOZ_SRC" archive HEAD | tar -x -C "$S"; fi
	for b in simhash-find-all simhash-find-clusters; do
		g++ -O3 -std=c++11 -w -I"$S/include" -o "$S/$b" "$S/src/bin/$b.cpp" \
			"$S/src/simhash.cpp" "$S/src/permutation.cpp"
	done
	echo "seomoz simhash-cpp $(git --git-dir="$SEOMOZ_SRC" rev-parse --short HEAD 2>/dev/null || echo '?') built in $S"
fi

# ---- inputs (fixed seeds): N distinct random 64-bit hashes, where pairs
# within 3 bits are rare, and the same size with 10% planted near copies
# (1..4 bits flipped), so that the output comparison has something to compare.
gen() {  # gen FILE PLANTED_FRACTION
	[ -s "$1" ] || python3 -c "
import random, sys
r = random.Random(20261123); seen = set(); out = []
def add(v):
    if v not in seen: seen.add(v); out.append(v)
while len(out) < $N * (1 - $2): add(r.getrandbits(64))
while len(out) < $N:
    v = r.choice(out)
    for _ in range(r.randint(1, 4)): v ^= 1 << r.randrange(64)
    add(v)
r.shuffle(out)
sys.stdout.write('\\n'.join(map(str, out)) + '\\n')" > "$1"
}
RANDOM_IN=$W/random-$N.txt; gen "$RANDOM_IN" 0
PLANTED_IN=$W/planted-$N.txt; gen "$PLANTED_IN" 0.1
IN=$RANDOM_IN

# measure LABEL CMD... -> sets SECS (wall), CPU (user+sys) and KB (peak RSS);
# output in $W/LABEL.out.  CPU time is the steadier figure on a busy machine.
measure() {
	local label=$1; shift
	/usr/bin/time -f '%e %U %S %M' -o "$W/$label.time" "$@" --input "$IN" --output "$W/$label.out" 2>/dev/null
	read -r SECS USR SYS KB < "$W/$label.time"
	CPU=$(echo "$USR + $SYS" | bc -l)
	printf '%-34s %8.2f s wall %8.2f s cpu %8.1f MB\n' "$label" "$SECS" "$CPU" "$(echo "$KB / 1024" | bc -l)"
}
ratio() { echo "scale=2; $1 / $2" | bc -l; }

# Sorted lines, members sorted within each line: seomoz prints in hash-set order.
normalize() {
	python3 -c "
import sys
rows = sorted(', '.join(map(str, sorted(map(int, l.strip()[1:-1].split(', '))))) for l in open(sys.argv[1]) if l.strip())
sys.stdout.write(''.join(r + '\\n' for r in rows))" "$1"
}

echo "== $N random hashes (input: $RANDOM_IN); distance 3; $(nproc) cores; load $(cut -d" " -f1-3 /proc/loadavg)"
status=0
for tool in find-all find-clusters; do
	for blocks in 5 6; do
		measure "seomoz-$tool-b$blocks" "$S/simhash-$tool" --blocks $blocks --distance 3
		base=$SECS; baseCPU=$CPU; baseKB=$KB
		for t in 1 2; do
			measure "ours-$tool-b$blocks-t$t" ./src/cli/simhash-$tool --blocks $blocks --distance 3 --threads $t
			echo "    seomoz / ours: wall x$(ratio "$base" "$SECS"), cpu x$(ratio "$baseCPU" "$CPU");  peak RSS ours / seomoz: $(ratio "$KB" "$baseKB")"
		done
	done
done
measure "ours-find-all-auto-blocks-t1" ./src/cli/simhash-find-all --distance 3 --threads 1
measure "ours-find-all-auto-blocks-t2" ./src/cli/simhash-find-all --distance 3 --threads 2

echo "== same outputs? $N hashes with 10% planted near copies (input: $PLANTED_IN)"
IN=$PLANTED_IN
for tool in find-all find-clusters; do
	for blocks in 5 6; do
		measure "planted-seomoz-$tool-b$blocks" "$S/simhash-$tool" --blocks $blocks --distance 3
		measure "planted-ours-$tool-b$blocks-t2" ./src/cli/simhash-$tool --blocks $blocks --distance 3 --threads 2
		measure "planted-ours-$tool-auto-t1" ./src/cli/simhash-$tool --distance 3 --threads 1
		a=$(normalize "$W/planted-seomoz-$tool-b$blocks.out" | md5sum)
		b=$(normalize "$W/planted-ours-$tool-b$blocks-t2.out" | md5sum)
		lines=$(wc -l < "$W/planted-ours-$tool-b$blocks-t2.out")
		if [ "$a" = "$b" ] && [ "$b" = "$(normalize "$W/planted-ours-$tool-auto-t1.out" | md5sum)" ]; then
			echo "    equal to seomoz (sorted), and with auto blocks on 1 thread: $lines lines"
		else
			echo "    OUTPUT DIFFERS"; status=1
		fi
	done
done
echo "reference: simhash-py README, 1M hashes, blocks 5, 3 bits, one core of a 2011 MacBook Pro:"
echo "    find_all_bulk 7.42 s (1M queries against 1M hashes; published, not measured here)"
exit $status
