#!/usr/bin/env bash
# bench_scale_test.sh — bench/scale.sh at N = 10,000 on a throwaway cluster
# (cold measurements off: they drop the machine's page cache): it prints every
# metric row against every baseline, each ratio a number equal to simhash /
# baseline, every figure a positive number, and the context rows; with pgvector
# installed (bench/pgvector.sh), its rows too (HNSW and IVFFlat), recall in
# (0, 1]; with PGVECTOR_ONLY=1 the pgvector rows alone (none without pgvector).
# Times are not checked.
cd "$(dirname "$0")/.."
if [ "$(id -u)" != 0 ] && ! sudo -n true 2>/dev/null; then
	echo "bench_scale: 0 passed, 0 failed (skipped: the throwaway cluster needs root or sudo)"
	exit 0
fi
tmp=$(mktemp -d /tmp/simhash-scale-test.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"
# its own temporary files (mktemp) go into $tmp/mk, which must be empty after
mkdir -p "$tmp/mk"
BENCH_RESULTS=$tmp TMPDIR=$tmp/mk QUERIES=100 KNN_QUERIES=10 SEQ_SAMPLE=3 BUILD_REPS=1 INGEST=2000 PAIRS_SAMPLE=200 COLD=0 \
	bash bench/scale.sh 10000 >"$tmp/log" 2>&1
rc=$?
# the pgvector part alone (PGVECTOR_ONLY=1), HNSW left out by its own limit
mkdir -p "$tmp/only"
chmod 755 "$tmp/only"
BENCH_RESULTS=$tmp/only QUERIES=100 KNN_QUERIES=10 COLD=0 PGVECTOR_ONLY=1 PGVECTOR_MAX_ROWS=5000 \
	bash bench/scale.sh 10000 >"$tmp/only/log" 2>&1
rc_only=$?
# tools/tmp-cluster.sh keeps a caller's own EXIT trap: under bench/run.sh
# (TMPC_BIN set) scale.sh's first cluster replaced it, and its temporary CSVs
# stayed in /tmp
trap_kept=0
bash -c 'trap "rm -f /dev/null/none" EXIT; source tools/tmp-cluster.sh; tmpc_mkdir trapcheck; rmdir "$TMPC_DIR"; trap -p EXIT' |
	grep -q 'rm -f /dev/null/none' && trap_kept=1
/usr/bin/python3 - "$tmp" "$rc" "$rc_only" "$trap_kept" <<'PY'
import csv, os, sys
tmp, rc, rc_only = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
trap_kept = sys.argv[4] == "1"
passed = failed = 0
def check(name, cond, detail=""):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print("FAIL", name, detail)

check("scale.sh exits 0", rc == 0)
check("tmp-cluster.sh keeps the caller's EXIT trap", trap_kept)
left = os.listdir(os.path.join(tmp, "mk"))
check("scale.sh leaves no temporary file", not left, str(left))
if rc != 0:
    print(open(os.path.join(tmp, "log")).read()[-3000:])
path = os.path.join(tmp, "scale.csv")
rows = list(csv.DictReader(open(path))) if os.path.exists(path) else []
want = {("build_serial_s", "btree (max_parallel_maintenance_workers = 0)"),
        ("build_parallel_s", "btree (max_parallel_maintenance_workers = 2)"),
        ("bytes_per_row", "btree"),
        ("radius3_warm_ms", "btree equality"), ("radius3_warm_ms", "sequential scan"),
        ("knn10_warm_ms", "sequential scan + top-N"),
        ("pairs_s", "index nested loop (simhash_within self-join)"), ("pairs_s", "sequential-scan nested loop"),
        ("ingest_rows_per_s", "btree alone"), ("ingest_rows_per_s", "no index")}
path = os.path.join(tmp, "scale_info.csv")
info = {r["key"]: r["value"] for r in csv.DictReader(open(path))} if os.path.exists(path) else {}
# pgvector's rows when the vector extension is installed (bench/pgvector.sh):
# HNSW (N = 10,000 is under PGVECTOR_MAX_ROWS) and IVFFlat
def pgvector_rows(hnsw):
    ivf = "pgvector IVFFlat"
    want = {("build_serial_s", f"{ivf} (max_parallel_maintenance_workers = 0)"), ("bytes_per_row", ivf)}
    want |= {(m, f"{ivf} (probes = {p})") for m in ("knn10_warm_ms", "knn10_recall")
             for p in ("1", "sqrt(lists)", "lists/10")}
    if hnsw:
        h = "pgvector HNSW"
        want |= {("build_serial_s", f"{h} (max_parallel_maintenance_workers = 0)"),
                 ("build_parallel_s", f"{h} (max_parallel_maintenance_workers = 2)"), ("bytes_per_row", h)}
        want |= {(m, f"{h} (ef_search = {ef})") for m in ("knn10_warm_ms", "knn10_recall") for ef in (40, 200)}
    return want

def check_recall(rows):
    for r in rows:
        if r["metric"] == "knn10_recall":
            check(f"recall: {r['baseline']}", r["simhash"] == "1" and 0 < float(r["baseline_value"]) <= 1, str(r))

pgv = info.get("pgvector", "")
if pgv.startswith("pgvector "):
    want |= pgvector_rows(True)
    check("pgvector: radius said to be n/a", info.get("pgvector_radius", "").startswith("n/a"))
    check("pgvector: lists and probes said", "IVFFlat bit_hamming_ops; lists 10; probes 1 3 1" in pgv, pgv)
    check_recall(rows)
else:
    check("pgvector said to be absent", pgv.startswith("not installed"), pgv)
got = {(r["metric"], r["baseline"]) for r in rows}
check("every metric and baseline", got == want, f"missing {sorted(want - got)}, extra {sorted(got - want)}")
check("one row each", len(rows) == len(want), str(len(rows)))
for r in rows:
    try:
        s, b, q = float(r["simhash"]), float(r["baseline_value"]), float(r["ratio"])
        ok = s > 0 and b > 0 and abs(q - s / b) <= 1e-5 + 1e-3 * s / b
    except ValueError:
        ok = False
    check(f"numbers: {r['metric']} vs {r['baseline']}", ok and r["n"] == "10000", str(r))
for key in ("load_s", "heap_bytes_per_row", "pairs_radius3", "pgvector", "commit", "cold"):
    check(f"context: {key}", key in info)
check("cold said to be skipped", info.get("cold", "").startswith("skipped"))
check("all pairs through the simhash index", info.get("pairs_path") == "t_simhash", info.get("pairs_path"))

# PGVECTOR_ONLY=1: the pgvector rows alone (IVFFlat; HNSW skipped by PGVECTOR_MAX_ROWS
# = 5,000), or none and a context row saying why
check("PGVECTOR_ONLY: scale.sh exits 0", rc_only == 0)
if rc_only != 0:
    print(open(os.path.join(tmp, "only", "log")).read()[-3000:])
path = os.path.join(tmp, "only", "scale.csv")
orows = list(csv.DictReader(open(path))) if os.path.exists(path) else []
path = os.path.join(tmp, "only", "scale_info.csv")
oinfo = {r["key"]: r["value"] for r in csv.DictReader(open(path))} if os.path.exists(path) else {}
opgv = oinfo.get("pgvector", "")
ogot = {(r["metric"], r["baseline"]) for r in orows}
if pgv.startswith("pgvector "):
    owant = pgvector_rows(False)
    check("PGVECTOR_ONLY: the IVFFlat rows alone", ogot == owant and len(orows) == len(owant),
          f"missing {sorted(owant - ogot)}, extra {sorted(ogot - owant)}")
    check("PGVECTOR_ONLY: HNSW said to be skipped", "HNSW skipped (N above PGVECTOR_MAX_ROWS = 5000)" in opgv, opgv)
    check_recall(orows)
    for r in orows:
        s, b = float(r["simhash"]), float(r["baseline_value"])
        check(f"PGVECTOR_ONLY numbers: {r['metric']} vs {r['baseline']}", s > 0 and b > 0 and r["n"] == "10000", str(r))
else:
    check("PGVECTOR_ONLY: no rows without pgvector", not orows, str(orows))
    check("PGVECTOR_ONLY: pgvector said to be absent", opgv.startswith("not installed"), opgv)
check("PGVECTOR_ONLY: all pairs said to be skipped", oinfo.get("pairs") == "skipped (PGVECTOR_ONLY=1)", oinfo.get("pairs"))
print(f"bench_scale: {passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
PY
