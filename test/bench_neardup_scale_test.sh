#!/usr/bin/env bash
# bench_neardup_scale_test.sh — bench/neardup_scale.sh (part neardup_scale of
# `make bench`) at 300 documents on a throwaway cluster, the join at work_mem
# 4GB (in memory) and 64kB (on disk): the CSVs hold one row per work_mem with
# the same pairs (more than none) and each path as asked, a MinHash-LSH row, an
# online row whose lookups equal a sequential scan, sane times and peaks; and
# bench/report.py turns them into its section and the README's table.  The
# corpus leaves out the PostgreSQL manual (CORPUS) to stay fast.  Times are not
# checked.
cd "$(dirname "$0")/.."
if [ "$(id -u)" != 0 ] && ! sudo -n true 2>/dev/null; then
	echo "bench_neardup_scale: 0 passed, 0 failed (skipped: the throwaway cluster needs root or sudo)"
	exit 0
fi
tmp=$(mktemp -d /tmp/simhash-ndscale-test.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"
mkdir -p "$tmp/res" "$tmp/bench" "$tmp/docs"
BENCH_RESULTS=$tmp/res CORPUS=/nonexistent NEARDUP_SCALE_DOCS=300 NEARDUP_SCALE_WORK_MEM="4GB 64kB" \
	ONLINE_QUERIES=20 ONLINE_CHECKS=4 SHARED_BUFFERS=128MB bash bench/neardup_scale.sh >"$tmp/log" 2>&1
rc=$?
cp bench/report.py bench/REPORT.md "$tmp/bench/"
cp docs/performance.md "$tmp/docs/"
BENCH_RESULTS=$tmp/res /usr/bin/python3 "$tmp/bench/report.py" >"$tmp/report.log" 2>&1
rc_report=$?
/usr/bin/python3 - "$tmp" "$rc" "$rc_report" <<'PY'
import csv, os, re, sys
tmp, rc, rc_report = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
passed = failed = 0
def check(name, cond, detail=""):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print("FAIL", name, detail)

def rows(name):
    path = os.path.join(tmp, "res", name)
    return list(csv.DictReader(open(path))) if os.path.exists(path) else []

check("neardup_scale.sh exits 0", rc == 0)
if rc != 0:
    print(open(os.path.join(tmp, "log")).read()[-3000:])
join = rows("neardup_scale_join.csv")
nd = [r for r in join if r["method"] == "simhash_near_duplicates"]
mh = [r for r in join if r["method"].startswith("MinHash-LSH")]
check("one join row per work_mem", [r["work_mem"] for r in nd] == ["4GB", "64kB"], str(join))
check("4GB joins in memory", nd and nd[0]["path"] == "in memory", str(nd[:1]))
check("64kB joins on disk", len(nd) > 1 and re.match(r"on disk, chunks of \d+ kB", nd[1]["path"]), str(nd[1:]))
check("the same pairs at both work_mem", len(nd) == 2 and nd[0]["pairs"] == nd[1]["pairs"], str(nd))
check("some pairs", nd and int(nd[0]["pairs"]) > 0, str(nd[:1]))
for r in nd:
    # candidates are pairs of distinct texts; rows with identical texts pair without one
    check(f"{r['work_mem']}: candidates counted", r["candidates"] != "" and int(r["candidates"]) > 0, str(r))
    check(f"{r['work_mem']}: shingles counted", r["shingles"] != "" and int(r["shingles"]) > 0, str(r))
for r in join:
    check(f"{r['method']} {r['work_mem']}: 300 documents", r["docs"] == "300", str(r))
    check(f"{r['method']} {r['work_mem']}: time, CPU and peak are numbers", float(r["seconds"]) >= 0
          and 0 <= float(r["cpu_s"]) <= float(r["seconds"]) + 1
          and float(r["peak_mb"]) >= 0 and float(r["start_mb"]) > 0, str(r))
    check(f"{r['method']} {r['work_mem']}: load averages", float(r["load_before"]) >= 0 and float(r["load_after"]) >= 0)
check("one MinHash-LSH row", len(mh) == 1, str(join))
if mh:
    check("MinHash-LSH: pairs within its candidates", 0 < int(mh[0]["pairs"]) <= int(mh[0]["candidates"]), str(mh))
    check("MinHash-LSH: bands and rows", re.fullmatch(r"b=\d+, r=\d+", mh[0]["path"]), mh[0]["path"])
online = rows("neardup_scale_online.csv")
check("one online row", len(online) == 1, str(online))
for o in online:
    check("online: 300 documents, 20 lookups", o["docs"] == "300" and o["queries"] == "20", str(o))
    check("online: 4 lookups checked, none differs", o["checked"] == "4" and o["differ"] == "0", str(o))
    check("online: p50 <= p95 <= max", 0 < float(o["p50_ms"]) <= float(o["p95_ms"]) <= float(o["max_ms"]), str(o))
    check("online: an index", float(o["index_mb"]) > 0)
    check("online: every stored document finds itself", float(o["answers_mean"]) >= 0.5, o["answers_mean"])
info = {r["key"]: r["value"] for r in rows("neardup_scale_info.csv")}
check("info: sizes and threshold", info.get("sizes") == "300" and info.get("threshold") == "0.8", str(info))

for r in join + online:
    check(f"commit of {r.get('method', 'online')} {r.get('work_mem', '')}", r.get("commit", "") not in ("", "?"), str(r))

# a run keeps the rows of the sizes it does not run (NEARDUP_SCALE_DOCS=300 here)
os.makedirs(os.path.join(tmp, "keep"))
with open(os.path.join(tmp, "keep", "k.csv"), "w") as f:
    f.write("docs,seconds\n200,1\n300,2\n1000,3\n")
os.environ.update(BENCH_RESULTS=os.path.join(tmp, "keep"), NEARDUP_SCALE_DOCS="300")
sys.path.insert(0, "bench")
import neardup_scale as ns
check("the rows of other sizes are kept", [r["docs"] for r in ns.kept("k.csv")] == ["200", "1000"])
check("no file, no rows", ns.kept("none.csv") == [])

check("report.py exits 0", rc_report == 0, open(os.path.join(tmp, "report.log")).read()[-2000:])
report = open(os.path.join(tmp, "bench", "REPORT.md")).read()
check("report: the section", "## Verified near-duplicates at scale" in report)
check("report: the 300-document table", "**300 documents**" in report)
perf = open(os.path.join(tmp, "docs", "performance.md")).read()
m = re.search(r"<!-- bench:neardup -->\n(.*?)\n<!-- /bench:neardup -->", perf, re.S)
check("README table written", m and f"| {int(nd[0]['pairs']):,} (exact) |" in m.group(1) if nd else False)
check("README table: the on-disk join against the in-memory one", m and "× in memory)" in m.group(1))
print(f"bench_neardup_scale: {passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
PY
