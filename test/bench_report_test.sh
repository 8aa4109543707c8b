#!/usr/bin/env bash
# bench_report_test.sh — bench/report.py on a copy of bench/REPORT.md and the
# README's performance page (docs/performance.md, "the README" below): with no results at all it keeps every section of the report (the
# hand-written ones included) and leaves the README as it is, twice in a row
# the same; with the results of bench/scale.sh alone it writes the scale
# section and the README's scale table and still keeps every other section;
# with limit_ratios.csv beside it, the packed scan's section pairs the two.
cd "$(dirname "$0")/.."
tmp=$(mktemp -d /tmp/simhash-report-test.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/bench" "$tmp/docs" "$tmp/none" "$tmp/scale"
cp bench/report.py bench/REPORT.md "$tmp/bench/"
cp docs/performance.md "$tmp/docs/"
# a scale.csv as bench/scale.sh writes it: every metric row (pgvector's warm
# KNN and recall rows too), two sizes
{
	echo "n,metric,unit,simhash,baseline,baseline_value,ratio,note"
	for n in 1000 2000; do
		cat <<CSV
$n,build_serial_s,s,2.0,btree (max_parallel_maintenance_workers = 0),1.0,2.0,x
$n,build_parallel_s,s,2.0,btree (max_parallel_maintenance_workers = 2),1.0,2.0,x
$n,bytes_per_row,bytes,56,btree,22,2.54,x
$n,radius3_warm_ms,ms,0.05,btree equality,0.025,2.0,x
$n,radius3_warm_ms,ms,0.05,sequential scan,100,0.0005,x
$n,knn10_warm_ms,ms,10,sequential scan + top-N,400,0.025,x
$n,pairs_s,s,10,index nested loop (simhash_within self-join),50,0.2,x
$n,pairs_s,s,10,sequential-scan nested loop,100000,0.0001,x
$n,radius3_cold_ms,ms,0.5,btree equality,0.25,2.0,x
$n,radius3_cold_ms,ms,0.5,sequential scan,800,0.000625,x
$n,knn10_cold_ms,ms,25,sequential scan + top-N,400,0.0625,x
$n,ingest_rows_per_s,rows/s,25000,btree alone,40000,0.625,x
$n,ingest_rows_per_s,rows/s,25000,no index,180000,0.138,x
$n,knn10_warm_ms,ms,10,pgvector HNSW (ef_search = 40),2,5.0,x
$n,knn10_recall,fraction,1,pgvector HNSW (ef_search = 40),0.8,1.25,x
CSV
	done
} >"$tmp/scale/scale.csv"
printf 'n,key,value\n1000,commit,abc1234\n2000,commit,abc1234\n' >"$tmp/scale/scale_info.csv"
# a third size from a later run (another commit) whose simhash_pairs gave up
mkdir -p "$tmp/three"
{ cat "$tmp/scale/scale.csv"; grep '^2000,' "$tmp/scale/scale.csv" | grep -v pairs_s | sed 's/^2000,/3000,/'; } >"$tmp/three/scale.csv"
cat >"$tmp/three/scale_info.csv" <<'CSV'
n,key,value
1000,commit,abc1234
2000,commit,abc1234
2000,pairs_temp_peak_bytes,1073741824
3000,commit,def5678
3000,load_1min_at_end,7.5
3000,pairs_temp_peak_bytes,3221225472
3000,pairs,did not finish: ERROR: canceling statement due to statement timeout after 10 s
CSV
# the packed scan of part limit_ratios beside scale.csv's index figures
mkdir -p "$tmp/lim"
cp "$tmp/scale/scale.csv" "$tmp/scale/scale_info.csv" "$tmp/lim/"
cat >"$tmp/lim/limit_ratios.csv" <<'CSV'
label,n,query,queries,scan_p50_ms,scan_p95_ms,scan_cpu_p50_ms,ns_row,kernel,rows_avg,load,date
abc1234,1000,knn10 random,50,2.5,3.0,2.0,2500,avx2,10.0,1.00-2.00,2026-11-28T07:00Z
abc1234,1000,radius 3,100,0.2,0.3,0.1,200,avx2,0.9,1.00-2.00,2026-11-28T07:00Z
CSV

/usr/bin/python3 - "$tmp" <<'PY'
import os, re, subprocess, sys
tmp = sys.argv[1]
passed = failed = 0
def check(name, cond, detail=""):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print("FAIL", name, detail)

NOTE = re.compile(r"^\*From an earlier run:.*\*\n\n?", re.M)
def sections(text):
    out, cur, fence = {}, None, False
    for line in text.splitlines(keepends=True):
        if line.startswith("```"):
            fence = not fence
        if line.startswith("## ") and not fence:
            cur = line.rstrip("\n")
            out[cur] = line
        elif cur:
            out[cur] += line
    return {h: NOTE.sub("", t).strip() for h, t in out.items()}

def run(results):
    env = dict(os.environ, BENCH_RESULTS=os.path.join(tmp, results))
    subprocess.run([sys.executable, os.path.join(tmp, "bench", "report.py")], env=env, check=True)
    return (open(os.path.join(tmp, "bench", "REPORT.md"), encoding="utf-8").read(),
            open(os.path.join(tmp, "docs", "performance.md"), encoding="utf-8").read())

report0 = open(os.path.join(tmp, "bench", "REPORT.md"), encoding="utf-8").read()
readme0 = open(os.path.join(tmp, "docs", "performance.md"), encoding="utf-8").read()
old = sections(report0)
check("the report has a hand-written section to keep", any("Written by hand" in t for t in old.values()))

report1, readme1 = run("none")
new = sections(report1)
for h, t in old.items():
    if h == "## The README's tables":
        continue  # remade from the README's tables, checked below
    check(f"kept: {h}", new.get(h) == t, "(missing)" if h not in new else "(text changed)")
check("README untouched without results", readme1 == readme0)
for name in re.findall(r"<!-- bench:(\w+) -->\n.*?\n<!-- /bench:\1 -->", readme0, re.S):
    pat = rf"<!-- bench:{name} -->\n(.*?)\n<!-- /bench:{name} -->"
    a, b = re.search(pat, readme1, re.S), re.search(pat, report1, re.S)
    check(f"README table {name} in the report", a and b and a.group(1) == b.group(1))
report2, _ = run("none")
check("a second run changes nothing", report2 == report1)

report3, readme3 = run("scale")
new = sections(report3)
scale = [h for h in new if h.startswith("## Scale:")]
check("scale section written", len(scale) == 1 and "From an earlier run" not in report3.split(scale[0])[1].split("\n## ")[0])
for h, t in old.items():
    if h not in ("## The README's tables",) and not h.startswith("## Scale:"):
        check(f"kept with scale results: {h}", new.get(h) == t)
m = re.search(r"<!-- bench:scale -->\n(.*?)\n<!-- /bench:scale -->", readme3, re.S)
check("README scale table written", m is not None and "1,000 rows" in m.group(1) and "2,000 rows" in m.group(1)
      and sum(line.startswith("| ") for line in m.group(1).splitlines()) == 16, m.group(1) if m else "(no markers)")
if m:
    check("scale ratios rendered", "(**2,000× faster**)" in m.group(1) and "(2.00×)" in m.group(1), m.group(1))
    check("pgvector's recall rendered after the warm KNN rows",
          re.search(r"\| 10 nearest, random queries, warm, p50 \| pgvector HNSW, ef_search 40 \|.*\n"
                    r"\| 10 nearest, random queries, recall@10 \(1 = exact\) \| pgvector HNSW, ef_search 40 \| "
                    r"1 · 0\.80 \(1\.25×\) \|", m.group(1)), m.group(1))
    r = re.search(r"<!-- bench:scale -->\n(.*?)\n<!-- /bench:scale -->", report3, re.S)
    check("README scale table = report's", r is not None and r.group(1) == m.group(1))

report4, readme4 = run("three")
m = re.search(r"<!-- bench:scale -->\n(.*?)\n<!-- /bench:scale -->", readme4, re.S)
t = m.group(1) if m else ""
lines = [line for line in t.splitlines() if line.startswith("| ")]
# header + 15 rows: the fixture has the two pgvector rows (warm KNN, recall) besides the 13 of simhash
check("three sizes: a column each", len(lines) == 16 and lines[0].count(" rows: simhash") == 3, t)
check("three sizes: pairs missing at the third", all(line.endswith("| – |") for line in lines if "simhash_pairs" in line)
      and sum("simhash_pairs" in line for line in lines) == 2, t)
check("three sizes: commit and load per size", "1,000 rows at commit abc1234" in t
      and "3,000 rows at commit def5678 (load average 7.5)" in t, t)
check("three sizes: why pairs are missing", "All pairs at 3,000 rows: did not finish" in t, t)
check("three sizes: temp peak", "2,000: 1.0 GiB, 3,000: 3.0 GiB" in t, t)
report5, _ = run("lim")
lim = sections(report5).get("## The limit at the README's sizes: a packed scan of N codes", "")
check("limit_ratios: the scan's wall and CPU p50 per N and type",
      "| 1,000 | 2.50 · 2.00 | 0.2 · 0.1 | 2000.00 | 1.00-2.00 | abc1234, 2026-11-28T07:00Z |" in lim, lim)
check("limit_ratios: each index figure of the run over the scan's CPU p50 at its N",
      "| scale | 1,000 | radius 3, warm p50 | 0.05 | 0.1 | 0.50× |" in lim
      and "| scale | 1,000 | KNN-10, random queries, warm p50 | 10 | 2 | 5.00× |" in lim
      and "2,000 |" not in lim.split("index ÷ scan")[-1], lim)
print(f"bench_report: {passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
PY
