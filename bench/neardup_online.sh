#!/usr/bin/env bash
# neardup_online.sh — part neardup_online of `make bench` (bench/run.sh): the
# online lookup simhash_near_duplicates_of at ONLINE_DOCS (default 100,000)
# real documents: index build and size, p50/p95 of a lookup, candidates per
# lookup, and a check against a sequential scan (bench/neardup_online.py)
# -> $BENCH_RESULTS/neardup_online_lookup.csv.
set -euo pipefail
cd "$(dirname "$0")/.."
exec /usr/bin/python3 bench/neardup_online.py
