#!/usr/bin/env bash
# packed_scan_test.sh — bench/packed_scan (the packed linear scan that
# bench/limit.sh compares the index with) answers exactly what a brute-force
# reference written in Python answers: KNN-K as ORDER BY distance, id LIMIT K
# and every radius's id set, on small inputs with many ties (duplicate codes,
# near copies), a size that is not a multiple of the vector width, fewer rows
# than K, for both kernels (AVX2 and scalar), an empty table, and negative codes (simhash::bigint is signed).
cd "$(dirname "$0")/.."
pass=0 fail=0
ok() { echo "ok: $1"; pass=$((pass + 1)); }
bad() { echo "FAIL: $1"; fail=$((fail + 1)); }
finish() { echo "packed_scan: $pass passed, $fail failed"; [ "$fail" = 0 ]; exit; }

if ! make -s bench/packed_scan >/dev/null; then
	bad "bench/packed_scan builds"; finish
fi
tmp=$(mktemp -d /tmp/simhash-packed-scan-test.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# gen N SEED: codes (signed decimal, as COPY writes simhash::bigint) and queries
gen() {
	python3 - "$1" "$2" "$tmp" <<'PY'
import random, sys
n, seed, d = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
rnd = random.Random(seed)
def signed(v): return v - (1 << 64) if v >> 63 else v
base = [rnd.getrandbits(64) for _ in range(max(1, n // 20))]
codes = []
for i in range(n):
    c = rnd.choice(base)
    if rnd.random() < 0.5:  # near copy: 0..8 bits flipped
        for b in rnd.sample(range(64), rnd.randint(0, 8)):
            c ^= 1 << b
    elif rnd.random() < 0.5:
        c = rnd.getrandbits(64)
    codes.append(c)
with open(d + '/codes', 'w') as f:
    f.writelines('%d\n' % signed(c) for c in codes)
with open(d + '/queries', 'w') as f:
    for q in range(12):
        c = rnd.choice(base) if q % 2 else rnd.getrandbits(64)
        for b in rnd.sample(range(64), q % 4):
            c ^= 1 << b
        # queries as unsigned decimal half the time: both forms are read
        f.write('%d %d\n' % (q + 1, signed(c) if q % 3 else c))
PY
}

# the reference: sort every row by (distance, id), as the sequential scan does
reference() {
	python3 - "$tmp" "$1" "$2" <<'PY'
import sys
d, k, radii = sys.argv[1], int(sys.argv[2]), [int(r) for r in sys.argv[3].split(',')]
codes = [int(l) % (1 << 64) for l in open(d + '/codes')]
print('kind,param,qid,count,dists,ids')
for line in open(d + '/queries'):
    qid, q = line.split()
    q = int(q) % (1 << 64)
    rows = sorted((bin(c ^ q).count('1'), i + 1) for i, c in enumerate(codes))
    top = rows[:k]
    print('knn,%d,%s,%d,%s,%s' % (k, qid, len(top), ' '.join(str(x) for x, _ in top), ' '.join(str(i) for _, i in top)))
    for r in radii:
        hit = sorted((i, x) for x, i in rows if x <= r)
        print('radius,%d,%s,%d,%s,%s' % (r, qid, len(hit), ' '.join(str(x) for _, x in hit), ' '.join(str(i) for i, _ in hit)))
PY
}

check() {  # check NAME N SEED K RADII
	gen "$2" "$3"
	reference "$4" "$5" >"$tmp/want"
	for kernel in avx2 scalar; do
		if ! ./bench/packed_scan "$tmp/codes" "$tmp/queries" --knn "$4" --radius "$5" --rounds 2 \
			--kernel $kernel >"$tmp/out" 2>"$tmp/err"; then
			if [ $kernel = avx2 ] && grep -q 'built without AVX2' "$tmp/err"; then continue; fi
			bad "$1, $kernel: packed_scan exits 0 ($(cat "$tmp/err"))"; continue
		fi
		for round in 1 2; do  # each round's answers, without the kernel, round and times
			awk -F, -v r=$round 'NR > 1 && $4 == r' "$tmp/out" | cut -d, -f2,3,5,8- |
				sed '1i kind,param,qid,count,dists,ids' >"$tmp/got"
			if cmp -s "$tmp/got" "$tmp/want"; then
				ok "$1, $kernel: round $round equals the brute-force reference ($(($(wc -l <"$tmp/want") - 1)) answers)"
			else
				bad "$1, $kernel: round $round differs from the reference"; diff "$tmp/want" "$tmp/got" | head -10
			fi
		done
		if grep -q "p50 .* ns/row" "$tmp/err"; then ok "$1, $kernel: prints p50 and ns/row"; else bad "$1, $kernel: no timing summary"; fi
	done
}

check "5001 rows (not a multiple of 4), ties" 5001 1 10 0,3,6,10,13,16
check "200 rows, KNN-50" 200 2 50 0,1,64
check "7 rows, fewer than K" 7 3 10 5
check "0 rows" 0 4 10 0,64

# a non-code line is an error naming the line
printf '12\nabc\n' >"$tmp/codes"; echo "1 5" >"$tmp/queries"
if ! ./bench/packed_scan "$tmp/codes" "$tmp/queries" >/dev/null 2>"$tmp/err" && grep -q 'codes:2: not a code: abc' "$tmp/err"; then
	ok "a bad line is an error naming the file and line"
else
	bad "a bad line is an error naming the file and line ($(cat "$tmp/err"))"
fi
finish
