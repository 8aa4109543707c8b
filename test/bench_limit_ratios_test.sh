#!/usr/bin/env bash
# bench_limit_ratios_test.sh — bench/limit_ratios.sh (part limit_ratios of
# make bench) and the codes it scans, `bench/packed_scan --planted N`:
# - the codes have bench/scale.sh's distribution, checked by brute force: the
#   first N * 9 / 10 rows random (pairs 32 bits apart on average, none within
#   6), planted row i exactly 1 + i % 6 bits from its nearest earlier row; the
#   near queries are rows with a planted copy 1, 3 or 5 bits away, the random
#   ones no row within 6 bits;
# - one seed gives the same codes, another seed others;
# - the scan of the generated codes answers what a brute-force reference
#   answers on the dumped codes (KNN-10 and radius 0..6, both kernels), and
#   what the scan of the dumped files answers;
# - the script's CSV is well-formed (a row per N and query type, positive
#   times, the load) and its average answer counts are the reference's.
cd "$(dirname "$0")/.." || exit 1
pass=0 fail=0
ok() { echo "ok: $1"; pass=$((pass + 1)); }
bad() { echo "FAIL: $1"; fail=$((fail + 1)); }
finish() { echo "bench_limit_ratios: $pass passed, $fail failed"; [ "$fail" = 0 ]; exit; }

if ! make -s bench/packed_scan >/dev/null; then
	bad "bench/packed_scan builds"; finish
fi
tmp=$(mktemp -d /tmp/simhash-limit-ratios-test.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
N=3001 Q=40
mkdir -p "$tmp/a" "$tmp/b" "$tmp/c"
./bench/packed_scan --planted $N --queries $Q --dump "$tmp/a" --knn 10 --radius 0,1,2,3,4,5,6 \
	--kernel scalar >"$tmp/gen.scalar" 2>/dev/null
./bench/packed_scan --planted $N --queries $Q --dump "$tmp/b" --knn 0 >/dev/null 2>&1
./bench/packed_scan --planted $N --queries $Q --seed 2 --dump "$tmp/c" --knn 0 >/dev/null 2>&1

if cmp -s "$tmp/a/codes" "$tmp/b/codes" && cmp -s "$tmp/a/queries" "$tmp/b/queries"; then
	ok "the same seed gives the same codes and queries"
else
	bad "the same seed gives the same codes and queries"
fi
if ! cmp -s "$tmp/a/codes" "$tmp/c/codes" && ! cmp -s "$tmp/a/queries" "$tmp/c/queries"; then
	ok "another seed gives other codes and queries"
else
	bad "another seed gives other codes and queries"
fi

# the distribution, by brute force over the dumped codes
if python3 - "$tmp/a" $N $Q <<'PY'; then ok "codes and queries have bench/scale.sh's distribution"; else bad "codes and queries have bench/scale.sh's distribution"; fi
import random, sys
d, n, nq = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
codes = [int(l) for l in open(d + '/codes')]
qs = [int(l.split()[1]) for l in open(d + '/queries')]
base = n * 9 // 10
dist = lambda a, b: bin(a ^ b).count('1')
errs = []
if len(codes) != n or len(qs) != nq:
    errs.append(f'{len(codes)} codes, {len(qs)} queries')
rnd = random.Random(1)
pairs = [dist(*rnd.sample(codes[:base], 2)) for _ in range(20000)]
mean = sum(pairs) / len(pairs)
if not 31.5 < mean < 32.5 or min(pairs) <= 6:
    errs.append(f'random rows: mean distance {mean:.2f}, min {min(pairs)}')
for i in range(1, n - base + 1):
    near = min(dist(codes[base + i - 1], c) for c in codes[:base])
    if near != 1 + i % 6:
        errs.append(f'planted row {i}: nearest earlier row {near} bits away, not {1 + i % 6}')
for i, q in enumerate(qs, 1):
    ds = sorted(dist(q, c) for c in codes)
    if i <= nq // 2:
        # the source of planted row 2i: itself, and its copy 1 + 2i % 6 bits away
        if q not in codes[:base] or (1 + 2 * i % 6) not in ds[1:]:
            errs.append(f'near query {i}: not a source of a planted row')
    elif ds[0] <= 6:
        errs.append(f'random query {i}: a row {ds[0]} bits away')
for e in errs[:10]:
    print('  ' + e)
sys.exit(1 if errs else 0)
PY

# the answers: the reference on the dumped files, the scan of the generated
# codes (both kernels) and the scan of the dumped files
python3 - "$tmp/a" >"$tmp/want" <<'PY'
import sys
d = sys.argv[1]
codes = [int(l) for l in open(d + '/codes')]
print('kind,param,qid,count,dists,ids')
for line in open(d + '/queries'):
    qid, q = line.split()
    rows = sorted((bin(c ^ int(q)).count('1'), i + 1) for i, c in enumerate(codes))
    top = rows[:10]
    print('knn,10,%s,%d,%s,%s' % (qid, len(top), ' '.join(str(x) for x, _ in top), ' '.join(str(i) for _, i in top)))
    for r in range(7):
        hit = sorted((i, x) for x, i in rows if x <= r)
        print('radius,%d,%s,%d,%s,%s' % (r, qid, len(hit), ' '.join(str(x) for _, x in hit), ' '.join(str(i) for i, _ in hit)))
PY
answers() { cut -d, -f2,3,5,8- "$1" | sed '1s/.*/kind,param,qid,count,dists,ids/'; }
for kernel in avx2 scalar; do
	if [ $kernel = scalar ]; then cp "$tmp/gen.scalar" "$tmp/gen"
	elif ! ./bench/packed_scan --planted $N --queries $Q --knn 10 --radius 0,1,2,3,4,5,6 --kernel avx2 >"$tmp/gen" 2>/dev/null; then
		echo "skip: no AVX2 kernel"; continue
	fi
	if answers "$tmp/gen" | cmp -s - "$tmp/want"; then
		ok "$kernel: the scan of generated codes equals the brute force ($(($(wc -l <"$tmp/want") - 1)) answers)"
	else
		bad "$kernel: the scan of generated codes differs from the brute force"; answers "$tmp/gen" | diff "$tmp/want" - | head -6
	fi
done
./bench/packed_scan "$tmp/a/codes" "$tmp/a/queries" --knn 10 --radius 0,1,2,3,4,5,6 --kernel scalar >"$tmp/files" 2>/dev/null
if answers "$tmp/files" | cmp -s - "$tmp/want"; then
	ok "the scan of the dumped files answers the same"
else
	bad "the scan of the dumped files answers the same"
fi
if ! ./bench/packed_scan --planted x >/dev/null 2>"$tmp/err" && grep -q -- '--planted x is not a count' "$tmp/err"; then
	ok "a bad --planted is an error naming it"
else
	bad "a bad --planted is an error naming it ($(cat "$tmp/err"))"
fi

# the script: two small sizes, its CSV checked against the reference's counts
mkdir -p "$tmp/res"
if ! LIMIT_RATIOS_ROWS="$N 20000" QUERIES=$Q ROUNDS=2 LABEL=test BENCH_RESULTS="$tmp/res" \
	bash bench/limit_ratios.sh >"$tmp/out" 2>"$tmp/err"; then
	bad "limit_ratios.sh exits 0"; tail -5 "$tmp/err"; finish
fi
if python3 - "$tmp/res/limit_ratios.csv" "$tmp/want" $N $Q <<'PY'; then ok "limit_ratios.csv: 9 rows per N, well-formed, counts equal the brute force"; else bad "limit_ratios.csv is well-formed and its counts equal the brute force"; fi
import csv, re, sys
path, want, n, nq = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
head = 'label,n,query,queries,scan_p50_ms,scan_p95_ms,scan_cpu_p50_ms,ns_row,kernel,rows_avg,load,date'
errs = []
if open(path).readline().strip() != head:
    errs.append('header')
rows = list(csv.DictReader(open(path)))
types = ['knn10 near', 'knn10 random'] + [f'radius {r}' for r in range(7)]
for size in (n, 20000):
    got = [r for r in rows if r['n'] == str(size)]
    if [r['query'] for r in got] != types:
        errs.append(f'{size}: query types {[r["query"] for r in got]}')
    for r in got:
        per = 2 * (nq // 2 if r['query'].startswith('knn') else nq)
        if r['label'] != 'test' or int(r['queries']) != per or r['kernel'] not in ('avx2', 'scalar'):
            errs.append(f'{size} {r["query"]}: label, queries or kernel: {r}')
        if not 0 < float(r['scan_p50_ms']) <= float(r['scan_p95_ms']) or float(r['scan_cpu_p50_ms']) <= 0 \
                or float(r['ns_row']) <= 0:
            errs.append(f'{size} {r["query"]}: times {r}')
        if not re.fullmatch(r'[0-9.]+-[0-9.]+', r['load']) or not re.fullmatch(r'\d{4}-\d\d-\d\dT\d\d:\d\dZ', r['date']):
            errs.append(f'{size} {r["query"]}: load or date {r}')
# the brute force's average answer count per type at N (two rounds: the same)
counts = {}
for w in csv.DictReader(open(want)):
    if w['kind'] == 'knn':
        t = 'knn10 ' + ('near' if int(w['qid']) <= nq // 2 else 'random')
    else:
        t = 'radius ' + w['param']
    counts.setdefault(t, []).append(int(w['count']))
for r in rows:
    if r['n'] == str(n) and f"{sum(counts[r['query']]) / len(counts[r['query']]):.1f}" != r['rows_avg']:
        errs.append(f"{r['query']}: rows_avg {r['rows_avg']}, brute force {sum(counts[r['query']]) / len(counts[r['query']]):.1f}")
for e in errs[:10]:
    print('  ' + e)
sys.exit(1 if errs else 0)
PY
finish
