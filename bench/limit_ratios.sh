#!/usr/bin/env bash
# limit_ratios.sh — the packed linear scan (bench/packed_scan: popcount(x ^ q)
# over a uint64 array, one core) at the table sizes and query types of the
# index figures that the README and bench/REPORT.md quote, so that each of
# them can be given as a ratio to the physical limit (issue 31).  Part
# `limit_ratios` of bench/run.sh; no server: the codes are made in memory.
#
#   LIMIT_RATIOS_ROWS="100000 1000000 10000000 100000000" QUERIES=100 ROUNDS=3 \
#     bash bench/limit_ratios.sh
#
# LIMIT_RATIOS_ROWS defaults to 10^5, 10^6, 10^7 and 10^8 (the sizes of
# bench/index_sweep.sh, bench/scale.sh and the README; 10^8 codes are 800 MB
# of memory, and their 2,700 scans take 4-7 minutes on a loaded 2-core machine).
# Data: `packed_scan --planted N`, the distribution of bench/scale.sh and
# bench/planted.sql (90% random codes, 10% copies of random earlier rows with
# 1..6 bits flipped; queries: half the sources of planted rows, "near", half
# fresh random values, "random"), the same codes for every query type.  Query
# types: KNN-10 for the near and the random queries apart, and radius r for r
# in RADII (default 0..6, the radii of the index figures; all queries).
# ROUNDS rounds, each scanning every query for every type in turn (AVX2 kernel
# where the CPU has it, else scalar).
# Appends to $BENCH_RESULTS/limit_ratios.csv, one row per N and query type:
#   label,n,query,queries,scan_p50_ms,scan_p95_ms,scan_cpu_p50_ms,ns_row,
#   kernel,rows_avg,load,date
# p50/p95 of the wall time of one scan, the thread's CPU time beside it; load
# = the 1-minute load average before and after the N's rounds.  The packed
# scan's answers are checked against a brute force by test/packed_scan_test.sh
# and test/bench_limit_ratios_test.sh, not here.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
LIMIT_RATIOS_ROWS=${LIMIT_RATIOS_ROWS:-"100000 1000000 10000000 100000000"}
QUERIES=${QUERIES:-100}
ROUNDS=${ROUNDS:-3}
RADII=${RADII:-"0 1 2 3 4 5 6"}
LABEL=${LABEL:-$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)}
BENCH_RESULTS=${BENCH_RESULTS:-$ROOT/bench/results}

step() { printf '\n== %s\n' "$*" >&2; }
load1() { cut -d' ' -f1 /proc/loadavg; }

make -s -C "$ROOT" bench/packed_scan >/dev/null
kernel=avx2
"$ROOT/bench/packed_scan" --planted 8 --kernel avx2 >/dev/null 2>&1 || kernel=scalar
work=$(mktemp -d /tmp/simhash-limit-ratios.XXXXXX)
trap 'rm -rf "$work"' EXIT

mkdir -p "$BENCH_RESULTS"
csv=$BENCH_RESULTS/limit_ratios.csv
[ -f "$csv" ] || echo "label,n,query,queries,scan_p50_ms,scan_p95_ms,scan_cpu_p50_ms,ns_row,kernel,rows_avg,load,date" >"$csv"
radii_csv=$(echo "$RADII" | tr ' ' ',')
for N in $LIMIT_RATIOS_ROWS; do
	step "N=$N: $QUERIES queries, KNN-10 and radius $radii_csv, $ROUNDS rounds, kernel $kernel (load $(load1))"
	load_a=$(load1)
	"$ROOT/bench/packed_scan" --planted "$N" --queries "$QUERIES" --knn 10 --radius "$radii_csv" \
		--rounds "$ROUNDS" --kernel "$kernel" >"$work/scan.csv"
	load_b=$(load1)
	# p50/p95 as PostgreSQL's percentile_cont (linear interpolation), per type
	python3 - "$work/scan.csv" "$N" "$QUERIES" "$LABEL" "$load_a-$load_b" "$(date -u +%Y-%m-%dT%H:%MZ)" <<'PY' | tee -a "$csv"
import csv, sys
path, n, nq, label, load, date = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5], sys.argv[6]

def pct(v, p):
    v = sorted(v)
    at = p * (len(v) - 1)
    i = int(at)
    return v[-1] if i + 1 >= len(v) else v[i] + (at - i) * (v[i + 1] - v[i])

by, order = {}, []
for r in csv.DictReader(open(path)):
    if r["kind"] == "knn":
        q = f"knn{r['param']} {'near' if int(r['qid']) <= nq // 2 else 'random'}"
    else:
        q = f"radius {r['param']}"
    if q not in by:
        by[q] = []
        order.append(q)
    by[q].append(r)
order.sort(key=lambda q: (q.startswith("radius"), int(q.split()[1]) if q.startswith("radius") else 0, q))
for q in order:
    rs = by[q]
    ns = [float(r["ns"]) for r in rs]
    cpu = [float(r["cpu_ns"]) for r in rs]
    p50 = pct(ns, 0.5)
    print(f"{label},{n},{q},{len(rs)},{p50 / 1e6:.4f},{pct(ns, 0.95) / 1e6:.4f},{pct(cpu, 0.5) / 1e6:.4f},"
          f"{p50 / n if n else 0:.3f},{rs[0]['kernel']},{sum(int(r['count']) for r in rs) / len(rs):.1f},{load},{date}")
PY
done
step "results: $csv"
column -t -s, "$csv" >&2
