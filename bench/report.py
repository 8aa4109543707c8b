"""report.py — bench/REPORT.md (and bench/plots/*.png) from bench/results/*.csv.

Run by bench/run.sh and bench/quality.sh; safe to run alone.  Every section
comes from a CSV file that a part wrote in the same run; a missing file means
the part was skipped, and the report says so.  Fragments written by other
scripts (results/index.md, results/batch.md, results/quality.md) are included
verbatim."""
import csv
import glob
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
RES = os.environ.get("BENCH_RESULTS", os.path.join(HERE, "results"))
PLOTS = os.path.join(HERE, "plots")

try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:  # the report still works, without pictures
    plt = None


def read(name):
    path = os.path.join(RES, name)
    if not os.path.exists(path):
        return None
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def table(rows, cols, heads=None):
    heads = heads or cols
    out = ["| " + " | ".join(heads) + " |", "|" + "---|" * len(cols)]
    for r in rows:
        out.append("| " + " | ".join(str(r.get(c, "")) for c in cols) + " |")
    return "\n".join(out)


def fnum(x, digits=1):
    try:
        v = float(x)
    except (TypeError, ValueError):
        return str(x)
    if v != 0 and abs(v) < 10 ** -digits:
        return f"{v:.2g}"
    return f"{v:,.{digits}f}"


def ratio(a, b, digits=2):
    try:
        return f"{float(a) / float(b):.{digits}f}×"
    except (TypeError, ValueError, ZeroDivisionError):
        return "n/a"


def savefig(fig, name):
    os.makedirs(PLOTS, exist_ok=True)
    fig.tight_layout()
    fig.savefig(os.path.join(PLOTS, name), dpi=90)
    plt.close(fig)
    return f"![{name}](plots/{name})"


def fragment(name):
    path = os.path.join(RES, name)
    if os.path.exists(path):
        with open(path) as f:
            return f.read().strip()
    return None


def section_machine(out):
    m = read("machine.csv")
    out.append("## Machine and run\n")
    if not m:
        out.append("No `results/machine.csv`: run `make bench`.\n")
        return
    out.append(table(m, ["key", "value"]))
    out.append("")
    parts = read("parts.csv")
    if parts:
        out.append("Parts of the last `make bench` run (skipped = not in the build that ran):\n")
        out.append(table(parts, ["part", "status", "seconds", "note"]))
        out.append("")


def section_fingerprint(out):
    rows = read("fingerprint.csv")
    out.append("## Fingerprinting throughput\n")
    if not rows:
        out.append("Not measured in this run.\n")
        return
    base = next((r for r in rows if r["function"] == "md5"), None)
    r0 = rows[0]
    out.append(f"Corpus: {r0['documents']} documents, {int(r0['bytes']) / 1e6:.1f} MB (PostgreSQL HTML "
               "documentation as raw HTML, Debian `copyright` files), stored uncompressed; one backend, "
               "no parallel workers; best of 5 interleaved rounds of `SELECT count(f(body)) FROM corpus`. "
               "Ratio = MB/s of the function / MB/s of `md5(body)` in the same run. MB are always megabytes "
               "of the source documents (for `simhash(tsv)` the tsvectors were computed beforehand and stored, "
               "so that row is the cost of the fingerprint alone).\n")
    for r in rows:
        r["ratio"] = ratio(r["mb_per_s"], base["mb_per_s"]) if base else "n/a"
        r["mbs"] = fnum(r["mb_per_s"])
        r["secs"] = fnum(r["seconds"], 3)
        r["expr"] = f"`{r['expression']}`"
    out.append(table(rows, ["function", "expr", "secs", "mbs", "ratio"],
                     ["name", "expression", "seconds", "MB/s", "vs md5"]))
    present = {r["function"] for r in rows}
    missing = [f for f in ("simhash_html", "simhash_seomoz") if f not in present]
    if missing:
        out.append(f"\nNot in the build that ran (skipped): {', '.join(missing)}.")
    out.append("")
    if plt:
        fig, ax = plt.subplots(figsize=(7, 3))
        names = [r["function"] for r in rows]
        ax.barh(names, [float(r["mb_per_s"]) for r in rows], color="#4477aa")
        ax.invert_yaxis()
        ax.set_xlabel("MB/s (one core)")
        ax.set_title("Fingerprint throughput vs md5")
        out.append(savefig(fig, "fingerprint.png") + "\n")


def section_sweep(out):
    rows = read("index_sweep.csv")
    out.append("## Index vs sequential scan over N and radius k\n")
    if not rows:
        out.append("Not measured in this run (`bench/index_sweep.sh`, part `sweep`; needs the `simhash` "
                   "index access method).\n")
        return
    sizes = sorted({int(r["n"]) for r in rows})
    out.append(f"`bench/index_sweep.sh`: tables of {', '.join(f'{n:,}' for n in sizes)} fingerprints (90% random, "
               "10% planted copies 1..6 bits away; `make bench` uses 10^5 and 10^6 × `SCALE`, "
               "`SIZES=\"100000 1000000 10000000\" PARTS=sweep make bench` gives three sizes), index `USING simhash (fp)` with the default options "
               "(bits 3, blocks 4). For each radius k, 200 queries `simhash_within(fp, q, k)` (half of them "
               "centres of planted copies, half fresh random values; after 20 unrecorded warm-up queries) "
               "and a sample of 5 of the same queries as a sequential scan `simhash_distance(fp, q) <= k` "
               "(index scans off; average per query). Server-side timing, one backend, no parallel workers. "
               "Speedup = sequential scan ms per query / index p50 ms, measured in the same run. "
               "`plan` is the index plan used; `(forced)` means the planner preferred the sequential scan "
               "and `enable_seqscan` was turned off. `mismatches` = sampled queries whose result count "
               "differs between the index and the sequential scan (must be 0). Up to k = 3 (the index's "
               "`bits`) a query is a plain probe; above it the index probes every prefix within k − 3 "
               "flipped bits while that is cheaper than reading its first table whole, and otherwise reads "
               "that table linearly, which still beats the heap's sequential scan but grows with N "
               "(see the README's index section).\n")
    for r in rows:
        r["nf"] = f"{int(r['n']):,}"
        r["sp"] = f"{float(r['speedup_p50']):,.1f}×" if r["speedup_p50"] else "n/a"
    out.append(table(rows, ["nf", "k", "plan", "index_p50_ms", "index_p99_ms", "seq_ms_per_query", "sp",
                            "rows_avg", "count_mismatches"],
                     ["N", "k", "plan", "index p50 ms", "index p99 ms", "seqscan ms/query", "speedup (p50)",
                      "rows/query", "mismatches"]))
    out.append("")
    if len(sizes) > 1:
        import math
        by = {(int(r["n"]), int(r["k"])): r for r in rows}
        pairs = list(zip(sizes, sizes[1:]))
        if len(sizes) > 2:
            pairs.append((sizes[0], sizes[-1]))

        def expo(k, lo, hi, col):
            a, b = by.get((lo, k)), by.get((hi, k))
            try:
                return f"{math.log(float(b[col]) / float(a[col])) / math.log(hi / lo):.2f}"
            except (TypeError, ValueError, ZeroDivisionError):
                return "n/a"
        grow = []
        for k in sorted({int(r["k"]) for r in rows}):
            g = {"k": k}
            for lo, hi in pairs:
                g[f"i{lo}-{hi}"] = expo(k, lo, hi, "index_p50_ms")
                g[f"s{lo}-{hi}"] = expo(k, lo, hi, "seq_ms_per_query")
            grow.append(g)
        cols = ["k"] + [f"i{lo}-{hi}" for lo, hi in pairs] + [f"s{lo}-{hi}" for lo, hi in pairs]
        heads = ["k"] + [f"index p50, {lo:.0e}→{hi:.0e}" for lo, hi in pairs] + \
                [f"seqscan, {lo:.0e}→{hi:.0e}" for lo, hi in pairs]
        out.append("Growth exponent e in cost ∝ N^e (log of the latency ratio / log of the size ratio; "
                   "1 = linear, 0 = flat). Where the index's path changes with N (above k = 3 it reads its "
                   "first table linearly on small tables and probes prefixes on large ones, see the `plan` "
                   "column and the latencies) the exponent can be negative.\n")
        out.append(table(grow, cols, heads))
        out.append("")
    if plt:
        fig, ax = plt.subplots(figsize=(7, 4.5))
        cmap = plt.get_cmap("viridis")
        ks = sorted({int(r["k"]) for r in rows})
        for i, k in enumerate(ks):
            pts = sorted((int(r["n"]), float(r["index_p50_ms"])) for r in rows if int(r["k"]) == k)
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o",
                    color=cmap(i / max(1, len(ks) - 1)), label=f"index p50, k={k}")
        seq = {}
        for r in rows:
            seq.setdefault(int(r["n"]), []).append(float(r["seq_ms_per_query"]))
        pts = sorted((n, sum(v) / len(v)) for n, v in seq.items())
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="s", color="#cc3311", linestyle="--",
                linewidth=2, label="seqscan per query (avg over k)")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("rows N")
        ax.set_ylabel("ms per query")
        ax.set_title("Radius-k search: simhash index p50 vs sequential scan")
        ax.legend(fontsize=7, ncol=2)
        out.append(savefig(fig, "index_sweep.png") + "\n")


def section_tuning(out):
    rows = read("index_tuning.csv")
    out.append("## Index tuning: radius k against the `bits` option\n")
    if not rows:
        out.append("Not measured in this run (part `tuning`: `bench/index_sweep.sh` with "
                   "`BITS=\"3 4 5 6\"`).\n")
        return
    n = sorted({int(r["n"]) for r in rows})
    out.append(f"`bench/index_sweep.sh` with `BITS=\"3 4 5 6\"` on {', '.join(f'{x:,}' for x in n)} rows (data, "
               "queries and timing as in the previous section): one index per `bits` value, `blocks` left at "
               "its default bits + 1. Cells: index p50 ms per query (speedup against the sequential scan of the "
               "same run); `(forced)` = the planner chose the sequential scan and `enable_seqscan` was turned "
               "off. A radius up to `bits` is a plain probe.\n")
    bits = sorted({int(r["bits"]) for r in rows})
    ks = sorted({int(r["k"]) for r in rows})
    by = {(int(r["bits"]), int(r["k"])): r for r in rows}
    grid = []
    for k in ks:
        g = {"k": k}
        for b in bits:
            r = by.get((b, k))
            if r:
                g[b] = (f"{float(r['index_p50_ms']):.3f} ({float(r['speedup_p50']):,.0f}×)"
                        + (" (forced)" if "forced" in r["plan"] else ""))
        grid.append(g)
    cost = [{"k": what, **{b: by[(b, ks[0])].get(col, "") for b in bits if (b, ks[0]) in by}}
            for what, col in (("CREATE INDEX s", "build_s"), ("index bytes/row", "bytes_per_row"))]
    out.append(table(grid + cost, ["k"] + bits, ["radius k"] + [f"bits = {b}" for b in bits]))
    out.append("")
    bad = sum(int(r["count_mismatches"]) for r in rows)
    out.append(f"Result counts differing from the sequential scan: {bad}.\n")


def section_concurrency(out):
    rows = read("concurrency.csv")
    out.append("## Throughput under concurrency (pgbench)\n")
    if not rows:
        out.append("Not measured in this run (needs the `simhash` index access method).\n")
        return
    out.append("Each transaction reads the fingerprint of a random row by primary key, then counts the rows "
               "within radius 3 with `simhash_within(fp, q, 3)`; `mixed` adds one single-row INSERT per "
               "four reads. `conc_index` has the simhash index, `conc_noindex` is the same table without it "
               "(sequential scan). Every point is the best of its rounds (the rounds go through all points in turn). "
               "Ratios: tps / tps with 1 client (same table and workload), and tps with "
               "the index / tps without (same workload and clients). The machine has 2 cores shared with "
               "the server and pgbench, so 4 clients cannot scale 4×.\n")
    idx = {(r["table"], r["workload"], r["clients"]): r for r in rows}
    for r in rows:
        one = idx.get((r["table"], r["workload"], "1"))
        r["vs1"] = ratio(r["tps"], one["tps"]) if one else "n/a"
        other = idx.get(("conc_noindex", r["workload"], r["clients"]))
        r["vsno"] = ratio(r["tps"], other["tps"]) if other and r["table"] == "conc_index" else ""
        r["tpsf"] = fnum(r["tps"])
    out.append(table(rows, ["table", "workload", "clients", "tpsf", "vs1", "vsno", "lat_p50_ms", "lat_p99_ms"],
                     ["table", "workload", "clients", "tps", "vs 1 client", "vs no index", "p50 ms", "p99 ms"]))
    out.append("")
    if plt:
        fig, ax = plt.subplots(figsize=(6, 3.5))
        for (t, w) in sorted({(r["table"], r["workload"]) for r in rows}):
            pts = [(int(r["clients"]), float(r["tps"])) for r in rows if r["table"] == t and r["workload"] == w]
            pts.sort()
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=f"{t} {w}")
        ax.set_xlabel("clients")
        ax.set_ylabel("tps")
        ax.set_yscale("log")
        ax.legend(fontsize=8)
        ax.set_title("pgbench tps, radius-3 queries")
        out.append(savefig(fig, "concurrency.png") + "\n")


def section_insert(out):
    build = read("insert_build.csv")
    rows = read("insert.csv")
    out.append("## Index build and single-row insert rate\n")
    if build:
        bt = next((r for r in build if r["index"] == "btree"), None)
        out.append(f"`CREATE INDEX` on {build[0]['rows']} random fingerprints (`maintenance_work_mem` 1GB), "
                   "time and size against a btree on the same column, same run:\n")
        for r in build:
            r["t_vs"] = ratio(r["seconds"], bt["seconds"]) if bt else "n/a"
            r["s_vs"] = ratio(r["bytes"], bt["bytes"]) if bt else "n/a"
            r["secs"] = fnum(r["seconds"], 3)
        out.append(table(build, ["index", "secs", "t_vs", "bytes_per_row", "s_vs"],
                         ["index", "build s", "time vs btree", "bytes/row", "size vs btree"]))
        out.append("")
    if not rows:
        out.append("Not measured in this run (needs the `simhash` index access method).\n")
        return
    base = next((r for r in rows if r["index"] == "none"), None)
    out.append(f"One pgbench client inserting random fingerprints one row per transaction into a table "
               f"that already holds {rows[0]['rows_before']} rows, `synchronous_commit = off` (so the WAL "
               f"flush does not hide the index cost), {rows[0]['seconds']} s per variant and round, the three "
               f"variants alternating; best round kept.\n")
    for r in rows:
        r["vs"] = ratio(r["rows_per_s"], base["rows_per_s"]) if base else "n/a"
        r["rps"] = fnum(r["rows_per_s"], 0)
    out.append(table(rows, ["index", "rps", "vs", "lat_avg_ms"],
                     ["index on fp", "rows/s", "vs no index", "avg latency ms"]))
    out.append("")


def section_external(out, part, title):
    out.append(f"## {title}\n")
    frag = fragment(f"{part}.md")
    csvs = sorted(glob.glob(os.path.join(RES, f"{part}_*.csv")))
    logf = os.path.join(RES, f"{part}.log")
    if not frag and not csvs:
        if os.path.exists(logf) and os.path.getsize(logf) and not open(logf).read().startswith("SKIP"):
            out.append(f"Output of `bench/{part}_bench.sh` in this run (`results/{part}.log`):\n")
            out.append("```\n" + open(logf).read().strip() + "\n```\n")
            return
        out.append(f"Not measured in this run (`bench/{part}_bench.sh` absent or skipped).\n")
        return
    if frag:
        out.append(frag + "\n")
    elif csvs:
        for path in csvs:
            rows = read(os.path.basename(path))
            if rows:
                out.append(f"`results/{os.path.basename(path)}`:\n")
                out.append(table(rows, list(rows[0].keys())))
                out.append("")


def section_memory(out):
    rows = read("memory.csv")
    out.append("## Memory of the command-line tools\n")
    if not rows:
        out.append("Not measured in this run (needs `simhash-find-all` / `simhash-find-clusters`).\n")
        return
    out.append("Peak resident set size (GNU `time`'s maximum RSS) and wall time on files of unsigned decimal "
               "fingerprints (90% random, 10% near copies), `--blocks 6 --distance 3`.\n")
    out.append(table(rows, ["tool", "hashes", "seconds", "peak_rss_mb", "bytes_per_hash", "output_lines"],
                     ["tool", "hashes", "seconds", "peak RSS MB", "bytes/hash", "output lines"]))
    out.append("")



# ---- scale: bench/scale.sh at 1M, 10M, ... rows ---------------------------------------------

# metric -> (label, unit kind); kind "low" = lower is better, "high" = higher is better
SCALE_METRICS = {
    "build_serial_s": ("`CREATE INDEX`, serial", "low"),
    "build_parallel_s": ("`CREATE INDEX`, 2 maintenance workers", "low"),
    "bytes_per_row": ("index size per row", "low"),
    "radius3_warm_ms": ("radius-3 query, warm, p50", "low"),
    "radius3_cold_ms": ("radius-3 query, cold, p50", "low"),
    "knn10_warm_ms": ("10 nearest, random queries, warm, p50", "low"),
    "knn10_recall": ("10 nearest, random queries, recall@10 (1 = exact)", "high"),
    "knn10_cold_ms": ("10 nearest, random queries, cold, p50", "low"),
    "ingest_rows_per_s": ("ingestion, 1,000-row INSERTs", "high"),
    "pairs_s": ("all pairs at radius 3 (`simhash_pairs`)", "low"),
}
SCALE_BASELINES = {
    "btree (max_parallel_maintenance_workers = 0)": "btree",
    "btree (max_parallel_maintenance_workers = 2)": "btree, 2 workers",
    "btree": "btree",
    "btree equality": "btree `=` probe",
    "sequential scan": "sequential scan",
    "sequential scan + top-N": "sequential scan + top-N",
    "btree alone": "btree alone",
    "no index": "no index",
    "index nested loop (simhash_within self-join)": "index nested loop",
    "sequential-scan nested loop": "seq-scan nested loop (extrapolated)",
    "pgvector HNSW (max_parallel_maintenance_workers = 0)": "pgvector HNSW",
    "pgvector HNSW (max_parallel_maintenance_workers = 2)": "pgvector HNSW, 2 workers",
    "pgvector HNSW": "pgvector HNSW",
    "pgvector HNSW (ef_search = 40)": "pgvector HNSW, ef_search 40",
    "pgvector HNSW (ef_search = 200)": "pgvector HNSW, ef_search 200",
    "pgvector IVFFlat (max_parallel_maintenance_workers = 0)": "pgvector IVFFlat",
    "pgvector IVFFlat (max_parallel_maintenance_workers = 2)": "pgvector IVFFlat, 2 workers",
    "pgvector IVFFlat": "pgvector IVFFlat",
    "pgvector IVFFlat (probes = 1)": "pgvector IVFFlat, probes 1",
    "pgvector IVFFlat (probes = sqrt(lists))": "pgvector IVFFlat, probes √lists",
    "pgvector IVFFlat (probes = lists/10)": "pgvector IVFFlat, probes lists/10",
}


def _crossover(pts):
    """N where index/scan crosses 1, from [(n, ratio)] sorted by n: interpolated in log-log
    between the two sizes that bracket it, else extrapolated from the last two (marked ~)."""
    pts = [(n, r) for n, r in pts if n > 0 and r > 0]
    if not pts:
        return "n/a"
    if all(r <= 1 for _, r in pts):
        return f"≤ {pts[0][0]:,} (faster at every N measured)"
    for (n0, r0), (n1, r1) in zip(pts, pts[1:]):
        if r0 > 1 >= r1:
            t = math.log(r0) / (math.log(r0) - math.log(r1))
            return f"{math.exp(math.log(n0) + t * (math.log(n1) - math.log(n0))):,.0f}"
    if len(pts) >= 2 and pts[-1][1] > 1:
        (n0, r0), (n1, r1) = pts[-2], pts[-1]
        if r1 < r0:
            slope = (math.log(r1) - math.log(r0)) / (math.log(n1) - math.log(n0))
            at = math.exp(math.log(n1) - math.log(r1) / slope)
            if at > 10 * n1:
                return f"beyond 10× the largest N (ratio ∝ N^{slope:.2f} from there)"
            return f"~{at:,.0f} (extrapolated)"
    return "none (the index slower at every N measured)"


def section_limit(out):
    rows = read("limit.csv")
    rows = sorted(rows or [], key=lambda r: int(r["n"]))
    out.append("## The limit: the index against a packed linear scan of the codes\n")
    if not rows:
        out.append("No `results/limit.csv`: run `PARTS=limit make bench` (bench/limit.sh).\n")
        return
    out.append("`bench/limit.sh` (issue 31): bench/planted.sql (90% random codes, 10% planted near copies), "
               "the index with default options, warm; the same queries through the index (server-side, "
               "one backend, planning included) and through `bench/packed_scan` (popcount(x ^ q) over a "
               "uint64 array in id order, one core; AVX2 and scalar kernels), rounds interleaved. "
               "Ratio = index p50 ÷ packed-scan p50: below 1 the index is faster. "
               "Mismatches: answers differing from the scan (KNN-10 by distances, radius by id set); must be 0. "
               "Buffers: shared buffers one index query touches (EXPLAIN ANALYZE, BUFFERS). "
               "Load: the 1-minute load average before and after the timed rounds (2 cores, shared). "
               "CPU: mean CPU time per query (the backend's /proc/self/schedstat over repeated passes; "
               "the scan's thread CPU clock): on a loaded machine a query of many milliseconds is "
               "descheduled and a scan of one is not, so the CPU ratio is the fairer one. "
               "These time dynamic SQL (every query parsed and planned); the prepared CPU columns time "
               "the same queries with the statement prepared once (a kept generic plan), as an "
               "application would run them.\n")
    out.append(table([{**r, "n": f"{int(r['n']):,}", "ratio": r["ratio"] + "×",
                       "ratio_scalar": r["ratio_scalar"] + "×"} for r in rows],
                     ["label", "n", "query", "index_p50_ms", "scan_p50_ms", "scan_ns_row", "ratio",
                      "ratio_scalar", "index_cpu_ms", "scan_cpu_ms", "ratio_cpu", "index_prep_cpu_ms",
                      "ratio_prep_cpu", "rows_avg", "buffers_avg", "mismatches", "load"],
                     ["commit", "N", "query", "index p50 ms", "packed scan p50 ms", "scan ns/row",
                      "index ÷ scan", "÷ scalar scan", "index CPU ms", "scan CPU ms", "CPU ratio",
                      "index CPU ms, prepared", "CPU ratio, prepared", "rows", "buffers", "mismatches",
                      "load"]))
    out.append("")
    by, byc = {}, {}
    for r in rows:
        by.setdefault(r["query"], {})[int(r["n"])] = float(r["ratio"])
        if r.get("ratio_cpu"):
            byc.setdefault(r["query"], {})[int(r["n"])] = float(r["ratio_cpu"])
    out.append("Crossover (the N from which the index is faster than the packed scan, from the rows above):\n")
    out.append(table([{"query": q, "at": _crossover(sorted(v.items())),
                       "cpu": _crossover(sorted(byc.get(q, {}).items()))} for q, v in by.items()],
                     ["query", "at", "cpu"], ["query", "crossover N (p50 wall)", "crossover N (CPU)"]))
    out.append("")


def _limit_scan(rows):
    """{(n, query): row} of results/limit_ratios.csv; a size run twice keeps its last run."""
    return {(int(r["n"]), r["query"]): r for r in rows}


def _index_figures():
    """[(source, n, figure, index p50 ms, packed-scan query type)]: the index's warm query
    figures of the parts that ran here, each to be set beside a packed scan of N codes."""
    figs = []
    for r in read("scale.csv") or []:
        if r["metric"] == "radius3_warm_ms" and r["baseline"] == "sequential scan":
            figs.append(("scale", int(r["n"]), "radius 3, warm p50", float(r["simhash"]), "radius 3"))
        elif r["metric"] == "knn10_warm_ms" and r["baseline"] == "sequential scan + top-N":
            figs.append(("scale", int(r["n"]), "KNN-10, random queries, warm p50", float(r["simhash"]), "knn10 random"))
    ib = read("index_bench.csv")
    p50 = _find(ib, config="bits=3 blocks=4", metric="ms_p50")
    if p50:
        figs.append(("index", int(ib[0]["n"]), "radius 3, p50", float(p50["value"]), "radius 3"))
    for r in read("index_sweep.csv") or []:
        figs.append(("sweep", int(r["n"]), f"radius {r['k']}, p50", float(r["index_p50_ms"]), f"radius {r['k']}"))
    for r in read("index_tuning.csv") or []:
        figs.append(("tuning", int(r["n"]), f"radius {r['k']}, bits = {r['bits']}, p50", float(r["index_p50_ms"]),
                     f"radius {r['k']}"))
    for r in read("planner_knn.csv") or []:
        if r["bits"] == "3":
            q = "random" if r["queries"] == "random" else "near"
            figs.append(("planner", int(r["n"]), f"KNN-10, {q} queries", float(r["index_ms"]), f"knn10 {q}"))
    return figs


def _sig3(x):
    """three significant digits, trailing zeros kept"""
    return f"{x:.3g}" if x < 1 else f"{x:.2f}" if x < 10 else f"{x:.1f}" if x < 100 else f"{x:,.0f}"


def _times(x):
    """index ÷ scan, said plainly: 3 significant digits."""
    return f"{x:.2g}×" if x < 0.1 else f"{x:.2f}×" if x < 10 else f"{x:,.0f}×"


def section_limit_ratios(out):
    rows = read("limit_ratios.csv")
    out.append("## The limit at the README's sizes: a packed scan of N codes\n")
    if not rows:
        out.append("No `results/limit_ratios.csv`: run `PARTS=limit_ratios make bench` (bench/limit_ratios.sh).\n")
        return
    scan = _limit_scan(rows)
    sizes = sorted({n for n, _ in scan})
    queries = []
    for r in rows:
        if r["query"] not in queries:
            queries.append(r["query"])
    out.append("`bench/limit_ratios.sh` (issue 31): `bench/packed_scan --planted N` makes N codes in memory in "
               "the distribution of bench/scale.sh and bench/planted.sql (90% random, 10% copies of earlier rows "
               "with 1..6 bits flipped; queries half sources of planted rows, \"near\", half fresh, \"random\") and "
               "scans them once per query and type (popcount(x ^ q) over a uint64 array, one core, "
               f"{rows[0]['kernel']} kernel). Cells: p50 of one scan, wall time · the thread's CPU time, ms. "
               "No server: this is the floor an exact index query is measured against. Load: the 1-minute load "
               "average before and after each size (2 cores, shared); on a loaded machine the wall time of a scan "
               "of many milliseconds includes time descheduled, so the CPU time is the steadier floor.\n")
    def cell(n, q):
        r = scan.get((n, q))
        return f"{_sig3(float(r['scan_p50_ms']))} · {_sig3(float(r['scan_cpu_p50_ms']))}" if r else "–"

    def about(n, key):
        r = scan.get((n, "knn10 random")) or next(v for (m, _), v in scan.items() if m == n)
        return {"ns": f"{float(r['scan_cpu_p50_ms']) * 1e6 / n:.2f}", "load": r["load"],
                "run": f"{r['label']}, {r['date']}"}[key]
    out.append(table([{"n": f"{n:,}", **{q: cell(n, q) for q in queries},
                       **{k: about(n, k) for k in ("ns", "load", "run")}} for n in sizes],
                     ["n"] + queries + ["ns", "load", "run"],
                     ["N"] + queries + ["CPU ns/row", "load", "commit, date"]))
    out.append("")
    figs = [f for f in _index_figures() if (f[1], f[4]) in scan]
    out.append("Index figures of this run's other parts beside it (ratio = index p50 ÷ the packed scan's CPU "
               "p50 at the same N; below 1 the index is faster):\n")
    if not figs:
        out.append("None: no index part (scale, index, sweep, tuning, planner) ran here at these sizes; "
                   "the README's figures are paired by hand in the next section.\n")
        return
    out.append(table([{"src": src, "n": f"{n:,}", "fig": fig, "ms": f"{ms:.3g}",
                       "scan": f"{float(scan[(n, q)]['scan_cpu_p50_ms']):.3g}",
                       "ratio": _times(ms / float(scan[(n, q)]["scan_cpu_p50_ms"]))}
                      for src, n, fig, ms, q in figs],
                     ["src", "n", "fig", "ms", "scan", "ratio"],
                     ["part", "N", "index figure", "index ms", "packed scan CPU ms", "index ÷ scan"]))
    out.append("")


def _scale_value(v, unit):
    v = float(v)
    if unit == "s":
        if v >= 3600:
            return f"{v / 3600:,.0f} h" if v >= 360000 else f"{v / 3600:,.1f} h"
        return f"{v:,.0f} s" if v >= 100 else f"{v:.1f} s" if v >= 1 else f"{v:.2f} s"
    if unit == "ms":
        return f"{v:.3f} ms" if v < 0.1 else _ms(v)
    if unit == "bytes":
        return f"{v:.1f} B"
    if unit == "rows/s":
        return f"{v:,.0f}/s"
    if unit == "fraction":
        return f"{v:.2f}" if v < 1 else "1"
    return f"{v:g} {unit}"


def _scale_ratio(r, kind):
    """ratio = simhash / baseline; said as the reader wants it."""
    r = float(r)
    if kind == "low" and r < 0.5:
        return f"**{1 / r:,.0f}× faster**" if r < 0.02 else f"**{1 / r:.1f}× faster**"
    return f"{r:.2f}×"


def _nlabel(n):
    return f"{n // 1000000:,}M" if n % 1000000 == 0 else f"{n:,}"


def scale_rows():
    rows = read("scale.csv")
    if not rows:
        return None, None, None
    info = read("scale_info.csv") or []
    sizes = sorted({int(r["n"]) for r in rows})
    return rows, {(int(i["n"]), i["key"]): i["value"] for i in info}, sizes


def readme_scale():
    rows, info, sizes = scale_rows()
    if not rows:
        return None
    by = {(int(r["n"]), r["metric"], r["baseline"]): r for r in rows}
    keys = []
    for r in rows:
        k = (r["metric"], r["baseline"])
        if k not in keys:
            keys.append(k)
    keys.sort(key=lambda k: list(SCALE_METRICS).index(k[0]) if k[0] in SCALE_METRICS else 99)
    out = ["| measure | baseline, same run | " +
           " | ".join(f"{_nlabel(n)} rows: simhash · baseline (ratio)" for n in sizes) + " |",
           "|---|---|" + "---|" * len(sizes)]
    for metric, base in keys:
        label, kind = SCALE_METRICS.get(metric, (metric, "low"))
        cells = []
        for n in sizes:
            r = by.get((n, metric, base))
            cells.append("–" if not r else f"{_scale_value(r['simhash'], r['unit'])} · "
                         f"{_scale_value(r['baseline_value'], r['unit'])} "
                         f"({_scale_ratio(float(r['simhash']) / float(r['baseline_value']), kind)})")
        out.append(f"| {label} | {SCALE_BASELINES.get(base, base)} | " + " | ".join(cells) + " |")
    # per size: the commit it was measured at and the load average at the end of its run
    runs = ", ".join(f"{_nlabel(n)} rows at commit {info.get((n, 'commit'), '?')}"
                     + (f" (load average {info[(n, 'load_1min_at_end')]})" if (n, "load_1min_at_end") in info else "")
                     for n in sizes)
    pgvs = {}
    for n in sizes:
        pgvs.setdefault(info.get((n, "pgvector"), "not measured"), []).append(_nlabel(n))
    pgv = pgvs.popitem()[0] if len(pgvs) == 1 else "; ".join(f"{v} ({', '.join(ns)})" for v, ns in pgvs.items())
    notes = ""
    for key, what in (("cold", "Cold figures"), ("pairs", "All pairs")):
        for n in sizes:
            v = info.get((n, key))
            if v is None:
                continue
            if v.startswith("skipped"):
                notes += f" {what} skipped at {_nlabel(n)} rows: {v.removeprefix('skipped ').strip('()')}."
            else:
                notes += f" {what} at {_nlabel(n)} rows: {v}."
    peaks = [f"{_nlabel(n)}: {int(info[(n, 'pairs_temp_peak_bytes')]) / 2**30:.1f} GiB" for n in sizes
             if (n, "pairs_temp_peak_bytes") in info]
    if peaks:
        notes += f" Temporary files of `simhash_pairs` at their peak: {', '.join(peaks)}."
    out.append("")
    out.append(f"(`bench/scale.sh`, PostgreSQL {info.get((sizes[-1], 'postgresql'), '?')}, {runs}, "
               f"on a 2-core virtual machine **shared with other developers' jobs** (1-minute load average "
               f"at the end of each size's run): every ratio is of two "
               f"figures taken in the same run, seconds apart; ratio = simhash ÷ baseline, a time under half "
               f"the baseline's written as \"N× faster\". pgvector: {pgv}."
               + notes
               + ")")
    return "\n".join(out)


def section_scale(out):
    rows, info, sizes = scale_rows()
    out.append("## Scale: 1M, 10M, ... rows against btree and a sequential scan\n")
    if not rows:
        out.append("Not measured in this run (part `scale`: `bench/scale.sh`, sizes from `SCALE_ROWS`).\n")
        return
    out.append("`bench/scale.sh N ...` (part `scale` of `make bench`, sizes from `SCALE_ROWS`, e.g. "
               "`PARTS=scale SCALE_ROWS=\"1000000 10000000\" make bench`): for each N a throwaway cluster "
               "(shared_buffers 2GB, maintenance_work_mem 1GB, work_mem 64MB, temp_file_limit 30GB, fsync and full_page_writes off, "
               "autovacuum off, no JIT, one backend per query), a table `(id int, fp simhash)` of N rows "
               "(90% random 64-bit values, 10% copies of random rows with 1..6 bits flipped), the simhash index "
               "with default options and a btree on the same column. Builds are interleaved (btree, simhash, "
               "btree, simhash, 3 of each kind at N ≤ 20M, median kept, one above) with `max_parallel_maintenance_workers` "
               "0 and 2. Warm: 1,000 radius-3 queries (half sources of planted copies, half fresh values), each "
               "run once before, simhash and the btree `=` probe timed query by query in turn; 100 KNN "
               "`ORDER BY fp <~> q LIMIT 10` on fresh values; the sequential scans "
               "(`simhash_distance(fp, q) <= 3`, `ORDER BY simhash_distance(fp, q) LIMIT 10`) on a sample of "
               "them, their answers compared with the index's. Cold: the cluster restarted and the OS page "
               "cache dropped before each kind, 20 queries (one sequential scan). Ingestion: 100,000 rows in "
               "committed `INSERT ... SELECT` statements of 1,000 rows into the N-row table with only that "
               "index. All pairs, last: `simhash_pairs` over the N loaded rows (a view without the ingested ones) at radius 3 "
               "with work_mem 256MB, the peak size of its temporary files sampled every 2 s, against a "
               "`simhash_within` self-join on 5,000 rows (timed before the cold part, while the index exists) scaled to N "
               "and N sequential scans (extrapolated). "
               "Server-side timings (clock_timestamp) except builds (wall clock around `CREATE INDEX`). "
               "ratio = simhash / baseline.\n")
    out.append(table(rows, ["n", "metric", "unit", "simhash", "baseline", "baseline_value", "ratio", "note"]))
    out.append("")
    inf = read("scale_info.csv") or []
    if inf:
        out.append("Context (`results/scale_info.csv`):\n")
        out.append(table(inf, ["n", "key", "value"]))
        out.append("")
    out.append("The README's table made from these rows is in [The README's tables](#the-readmes-tables).\n")


# ---- the README's tables of figures (in docs/performance.md), rewritten between their markers ----

# The tables live in docs/performance.md (the README links to it).
README = os.path.join(HERE, "..", "docs", "performance.md")


def _ms(x):
    v = float(x)
    if v < 1:
        return f"{v:.2f} ms"
    return f"{v:.1f} ms" if v < 30 else f"{v:,.0f} ms"


def _range(vals, fmt):
    lo, hi = min(vals), max(vals)
    return fmt(lo) if fmt(lo) == fmt(hi) else f"{fmt(lo).split()[0]}–{fmt(hi)}"


def readme_tuning():
    rows = read("index_tuning.csv")
    if not rows:
        return None
    bits = sorted({int(r["bits"]) for r in rows})
    by = {(int(r["bits"]), int(r["k"])): r for r in rows}

    def cell(b, ks):
        rs = [by[(b, k)] for k in ks if (b, k) in by]
        if not rs:
            return "–"
        c = _range([float(r["index_p50_ms"]) for r in rs], _ms)
        return c + (" (linear)" if any("forced" in r["plan"] for r in rs) else "")
    ks = sorted({int(r["k"]) for r in rows})
    low = [k for k in ks if k <= min(bits)]
    lines = ["| radius queried | " + " | ".join(f"`bits = {b}`" + (" (default)" if b == 3 else "") for b in bits) + " |",
             "|---" * (len(bits) + 1) + "|"]
    groups = [(f"{low[0]}–{low[-1]}" if len(low) > 1 else str(low[0]), low)] + [(str(k), [k]) for k in ks if k not in low]
    for label, group in groups:
        lines.append(f"| {label} | " + " | ".join(cell(b, group) for b in bits) + " |")
    first = {b: by[(b, ks[0])] for b in bits}
    lines.append("| CREATE INDEX | " + " | ".join(f"{float(first[b]['build_s']):.1f} s" for b in bits) + " |")
    lines.append("| size per row | " + " | ".join(f"{float(first[b]['bytes_per_row']):.1f} B" for b in bits) + " |")
    seq = [float(r["seq_ms_per_query"]) for r in rows]
    n = int(rows[0]["n"])
    lines.append("")
    lines.append(f"({n:,} rows; a sequential scan took {min(seq):.0f}–{max(seq):.0f} ms per query in the same run.)")
    return "\n".join(lines)


def _find(rows, **kv):
    for r in rows or []:
        if all(r.get(k) == v for k, v in kv.items()):
            return r
    return None


def readme_performance():
    out = ["| what | result | baseline in the same run |", "|---|---|---|"]
    fp = read("fingerprint.csv")
    if fp:
        md5 = _find(fp, function="md5")
        t = _find(fp, function="simhash_text")
        h = _find(fp, function="simhash_html")
        so = _find(fp, function="simhash_seomoz")
        mb = int(md5["bytes"]) / 1e6
        if md5 and t:
            out.append(f"| `simhash(text)`, one backend, {mb:.0f} MB of HTML and text | {float(t['mb_per_s']):.0f} MB/s | "
                       f"`md5(text)` {float(md5['mb_per_s']):.0f} MB/s: **{float(t['mb_per_s']) / float(md5['mb_per_s']):.2f}×** |")
        if md5 and h and so:
            out.append(f"| `simhash_html(html)` (HTML5 parse) · `simhash_seomoz(text)` | {float(h['mb_per_s']):.0f} · "
                       f"{float(so['mb_per_s']):.0f} MB/s | {float(h['mb_per_s']) / float(md5['mb_per_s']):.2f}× · "
                       f"{float(so['mb_per_s']) / float(md5['mb_per_s']):.2f}× `md5` |")
    ib = read("index_bench.csv")
    cfg = "bits=3 blocks=4"
    if ib:
        n = int(ib[0]["n"])
        p50 = _find(ib, config=cfg, metric="ms_p50")
        seq = _find(ib, config="none", metric="seqscan_ms_per_query")
        if p50 and seq:
            out.append(f"| radius-3 query, {n / 1e6:g}M rows, index p50 | {_ms(p50['value'])} | sequential scan "
                       f"{_ms(seq['value'])}: **{float(seq['value']) / float(p50['value']):,.0f}×** |")
    sw = read("index_sweep.csv")
    if sw:
        nmax = max(int(r["n"]) for r in sw)
        r = _find(sw, n=str(nmax), k="3")
        if r:
            out.append(f"| radius-3 query, {nmax / 1e6:g}M rows, index p50 | {_ms(r['index_p50_ms'])} | sequential scan "
                       f"{_ms(r['seq_ms_per_query'])}: **{float(r['speedup_p50']):,.0f}×** |")
    knn = read("planner_knn.csv")
    if knn:
        nk = max(int(r["n"]) for r in knn)
        k = _find(knn, n=str(nk), bits="3", queries="random")
        if k:
            out.append(f"| 10 nearest (`ORDER BY fp <~> q LIMIT 10`), random queries, {nk / 1e6:g}M rows | "
                       f"{_ms(k['index_ms'])} | sequential scan + top-N {_ms(k['seq_ms'])}: {float(k['speedup']):.0f}× |")
    if ib:
        b = _find(ib, config=cfg, metric="build_s")
        sz = _find(ib, config=cfg, metric="bytes_per_row")
        bb = _find(ib, config="btree", metric="build_s")
        bs = _find(ib, config="btree", metric="bytes_per_row")
        if b and sz and bb and bs:
            out.append(f"| `CREATE INDEX`, {n / 1e6:g}M rows · size per row | {float(b['value']):.1f} s · {float(sz['value']):.0f} B | "
                       f"btree {float(bb['value']):.2f} s · {float(bs['value']):.1f} B |")
    ins = read("insert.csv")
    if ins:
        none, bt, sh = (_find(ins, index=i) for i in ("none", "btree", "simhash"))
        if none and bt and sh:
            r0 = float(none["rows_per_s"])
            out.append(f"| single-row inserts into an indexed table | {float(sh['rows_per_s']):,.0f} rows/s | no index "
                       f"{r0:,.0f} ({float(sh['rows_per_s']) / r0:.2f}×); btree {float(bt['rows_per_s']):,.0f} "
                       f"({float(bt['rows_per_s']) / r0:.2f}×) |")
    cc = read("concurrency.csv")
    if cc:
        i1, i4 = _find(cc, table="conc_index", workload="read", clients="1"), _find(cc, table="conc_index", workload="read", clients="4")
        n1, n4 = _find(cc, table="conc_noindex", workload="read", clients="1"), _find(cc, table="conc_noindex", workload="read", clients="4")
        if i1 and i4 and n1 and n4:
            out.append(f"| pgbench, radius-3 queries, 1 · 4 clients | {float(i1['tps']):,.0f} · {float(i4['tps']):,.0f} tps | "
                       f"no index {float(n1['tps']):,.0f} · {float(n4['tps']):,.0f} tps: "
                       f"{float(i1['tps']) / float(n1['tps']):.0f}× · {float(i4['tps']) / float(n4['tps']):.0f}× |")
    log = fragment("batch.log")
    if log:
        import re
        first = log.split("\n== ")[0]
        m_hashes = re.search(r"== (\d+) random hashes", first)
        ours = re.search(r"^ours-find-all-b5-t1\s+([\d.]+) s\s+([\d.]+) MB", first, re.M)
        theirs = re.search(r"^seomoz-find-all-b5\s+([\d.]+) s\s+([\d.]+) MB", first, re.M)
        if m_hashes and ours and theirs:
            out.append(f"| `simhash-find-all`, {int(m_hashes.group(1)) / 1e6:g}M hashes, distance 3 | {ours.group(1)} s, "
                       f"{float(ours.group(2)):.0f} MB | seomoz simhash-cpp {theirs.group(1)} s, {float(theirs.group(2)):.0f} MB: "
                       f"{float(theirs.group(1)) / float(ours.group(1)):.1f}× |")
    return "\n".join(out) if len(out) == 11 else None  # all nine rows, or none


def neardup_scale_rows():
    """(join rows, online rows, info) of part neardup_scale, or (None, None, None)."""
    rows = read("neardup_scale_join.csv")
    if not rows:
        return None, None, None
    info = {r["key"]: r["value"] for r in read("neardup_scale_info.csv") or []}
    return rows, read("neardup_scale_online.csv") or [], info


def _nd_in_memory(rows, n, col="seconds"):
    """The seconds (col: or CPU seconds) of the fastest in-memory join at n documents (the
    ratios' base), or None."""
    secs = [float(r[col]) for r in rows if int(r["docs"]) == n and r["method"] == "simhash_near_duplicates"
            and r["path"] == "in memory" and r.get(col)]
    return min(secs) if secs else None


def _nd_time(r, base, base_cpu):
    """"153.4 s (2.92× in memory); CPU 120.0 s (2.50×)"."""
    secs = float(r["seconds"])
    out = f"{fnum(secs)} s"
    if base and r["path"] != "in memory":
        out += f" ({ratio(secs, base, 1)} in memory)"
    if r.get("cpu_s"):
        out += f"; CPU {fnum(r['cpu_s'])} s"
        if base_cpu and r["path"] != "in memory":
            out += f" ({ratio(r['cpu_s'], base_cpu, 1)})"
    return out


def _nd_commits(rows, info):
    """"100,000 documents at commit X, ..." (a size's rows may come from an earlier run)."""
    by = {}
    for r in rows:
        by.setdefault(r.get("commit") or info.get("commit", "?"), set()).add(int(r["docs"]))
    return ", ".join(f"{' and '.join(f'{n:,}' for n in sorted(ns))} documents at commit {c}" for c, ns in by.items())


def _nd_loads(rows, online):
    loads = [float(r[k]) for r in rows for k in ("load_before", "load_after") if r.get(k)]
    loads += [float(r["load"]) for r in online if r.get("load")]
    return f"{min(loads):.1f}–{max(loads):.1f}" if loads else "?"


def readme_neardup():
    """The README's near-duplicate figures (docs/performance.md): the verified join at 4GB and
    64MB, MinHash-LSH and the online lookup, per size, from part neardup_scale."""
    rows, online, info = neardup_scale_rows()
    if not rows:
        return None
    out = ["| documents | what | time | peak memory above start | pairs at J ≥ " + info.get("threshold", "?") + " |",
           "|---|---|---|---|---|"]
    for n in sorted({int(r["docs"]) for r in rows}):
        base, base_cpu = _nd_in_memory(rows, n), _nd_in_memory(rows, n, "cpu_s")
        mine = [r for r in rows if int(r["docs"]) == n]
        label = f"{n:,} ({mine[0]['text_mb']} MB of text)"
        for r in mine:
            if r["method"] == "simhash_near_duplicates":
                what = f"`simhash_near_duplicates`, work_mem {r['work_mem']} ({r['path']})"
                pairs = f"{int(r['pairs']):,} (exact)"
                peak = f"+{fnum(r['peak_mb'], 0)} MB"
            else:
                what = f"{r['method']} ({r['path']}), from ready shingle sets"
                pairs = f"{int(r['pairs']):,} (estimated)"
                peak = f"+{fnum(r['peak_mb'], 0)} MB (its process)"
            out.append(f"| {label} | {what} | {_nd_time(r, base, base_cpu)} | {peak} | {pairs} |")
        for o in online:
            if int(o["docs"]) == n:
                out.append(f"| {label} | `simhash_near_duplicates_of`, one lookup (GIN index {fnum(o['index_mb'], 0)} MB, "
                           f"built in {fnum(o['index_build_s'])} s) | p50 {fnum(o['p50_ms'])} ms, p95 {fnum(o['p95_ms'])} ms "
                           f"| +{fnum(o.get('peak_mb', '?'), 0)} MB over {o['queries']} lookups, shared buffers included "
                           f"| {o['answers_mean']} per lookup (exact) |")
    out.append("")
    out.append(f"(`bench/neardup_scale.sh`, {_nd_commits(rows, info)}; PostgreSQL's backend "
               f"peak resident size (VmHWM) above its size before the call; 1-minute load average "
               f"{_nd_loads(rows, online)} on a 2-core virtual machine **shared with other developers' jobs**.)")
    return "\n".join(out)


def section_neardup_scale(out):
    rows, online, info = neardup_scale_rows()
    out.append("## Verified near-duplicates at scale: the join, MinHash-LSH and the online lookup\n")
    if not rows:
        out.append("Not measured in this run (part `neardup_scale`: `PARTS=neardup_scale make bench`).\n")
        return
    out.append(
        "`bench/neardup_scale.sh` (part `neardup_scale`; sizes `NEARDUP_SCALE_DOCS`, here "
        f"{info.get('sizes', '?')}; {_nd_commits(rows, info)}), threshold {info.get('threshold', '?')}. "
        "Corpus: `bench/neardup_quality.py`'s corpus function with its seed (the documents of "
        "`QUALITY_ND_DOCS=N make quality`): the 3,537 real documents of this machine (PostgreSQL manual, "
        "/usr/share/doc copyright, README and changelog entries), then edited copies drawn from the documents "
        "before them (typos, inserted and deleted sentences, headers and footers, version bumps, swapped "
        "paragraphs, truncation, one to three edits each): at 100,000 documents and more nearly all are edited "
        "copies, and a larger N only draws more of them, deterministically. One table "
        "`(k text, body text, fp bigint DEFAULT 0)`.\n")
    out.append(
        "Join: one `SELECT count(*) FROM simhash_near_duplicates(...)` per `work_mem`, each in a fresh "
        "session after a read of every body; CPU is the backend's user + system time over the call "
        "(/proc/self/stat), steadier than the wall time on a loaded machine; peak is the backend's VmHWM "
        "(/proc/self/status) after the call "
        "minus before it, start its VmHWM before (shared buffers it mapped included). MinHash-LSH: "
        "`bench/neardup_quality.py`'s baseline (128 permutations, bands and rows chosen as datasketch chooses "
        "them, candidates kept when their MinHash estimate reaches the threshold; datasketch itself is not "
        "installed here) in a child process that first reads the shingle sets from the server; its time starts "
        "from those ready sets (the read is given apart), its CPU is the child's over the same span, its peak is the child's VmHWM above its size with the "
        "sets loaded. Its pairs are estimates: neither precision nor recall is 1 (bench/QUALITY.md measures them "
        "at 10,000 documents). Online: `bench/neardup_online.py`'s measurement on the same table.\n")
    for n in sorted({int(r["docs"]) for r in rows}):
        base, base_cpu = _nd_in_memory(rows, n), _nd_in_memory(rows, n, "cpu_s")
        mine = [dict(r) for r in rows if int(r["docs"]) == n]
        for r in mine:
            r["vs"] = ratio(r["seconds"], base) if base else "n/a"
            r["cpu"] = r.get("cpu_s") or "–"
            r["vs_cpu"] = ratio(r["cpu_s"], base_cpu) if base_cpu and r.get("cpu_s") else "n/a"
            r["pairs_f"] = f"{int(r['pairs']):,}"
            r["cand_f"] = f"{int(r['candidates']):,}" if r.get("candidates") else "–"
            r["load"] = f"{r['load_before']}–{r['load_after']}"
            r["peak"] = f"+{r['peak_mb']} MB"
        out.append(f"**{n:,} documents**, {mine[0]['text_mb']} MB of text"
                   + (f", {int(mine[0]['shingles']):,} shingles" if mine[0].get("shingles") else "") + ":\n")
        out.append(table(mine, ["method", "work_mem", "path", "seconds", "vs", "cpu", "vs_cpu", "pairs_f", "cand_f",
                                "peak", "start_mb", "load", "note"],
                         ["method", "work_mem", "how it ran", "seconds", "vs in memory", "CPU s", "CPU vs in memory",
                          "pairs", "candidates", "peak above start", "start MB", "load", "note"]))
        out.append("")
    if online:
        for o in online:
            o["cand"] = f"{o['candidates_p50']} / {o['candidates_mean']} / {o['candidates_p95']}"
            o["checks"] = f"{o['checked']}, {o['differ']} differ"
            o["peak"] = f"+{o.get('peak_mb', '?')} MB"
        out.append("Online lookup `simhash_near_duplicates_of` at 0.8 on the same table (GIN on "
                   "`simhash_prefix_tokens(body, 0.8)`; lookups timed inside the server, half stored documents, "
                   "half fresh edits of them; checked against a sequential scan; the backend's peak counts the "
                   "shared buffers it touched, up to the index's and the table's size):\n")
        out.append(table(online, ["docs", "index_build_s", "index_mb", "queries", "p50_ms", "p95_ms", "max_ms", "cand",
                                  "answers_mean", "peak", "checks", "load"],
                         ["documents", "index build s", "index MB", "lookups", "p50 ms", "p95 ms", "max ms",
                          "candidates p50 / mean / p95", "answers per lookup", "backend peak", "checked", "load"]))
        out.append("")


README_TABLES = (("performance", readme_performance), ("tuning", readme_tuning), ("scale", readme_scale),
                ("neardup", readme_neardup))


def section_readme_tables(out):
    """The README's tables of figures, made here from this run's results; bench/report.py
    copies them into the README and test/readme_figures_test.sh checks the two agree."""
    out.append("## The README's tables\n")
    out.append("The performance, index tuning, scale and near-duplicate tables of the README, from the results above "
               "(rewritten into the README by this script).\n")
    for name, make in README_TABLES:
        table = make()
        if table:
            out.append(f"<!-- bench:{name} -->\n{table}\n<!-- /bench:{name} -->\n")
        else:
            kept = readme_table(name)
            if kept is None:
                out.append(f"Table `{name}`: not every part it needs ran.\n")
            else:
                out.append(f"Table `{name}` (not every part it needs ran here; the README's table, from an earlier run):\n")
                out.append(f"<!-- bench:{name} -->\n{kept}\n<!-- /bench:{name} -->\n")


def readme_table(name):
    """The README's current table NAME (between its markers), or None."""
    if not os.path.exists(README):
        return None
    with open(README, encoding="utf-8") as f:
        text = f.read()
    start, end = f"<!-- bench:{name} -->", f"<!-- /bench:{name} -->"
    if start not in text or end not in text:
        return None
    return text[text.index(start) + len(start):text.index(end)].strip("\n") or None


def update_readme():
    """Rewrite the README's generated tables (between <!-- bench:NAME --> and
    <!-- /bench:NAME -->) from the results; a table whose results are missing is left as is."""
    if not os.path.exists(README):
        return
    with open(README, encoding="utf-8") as f:
        text = f.read()
    for name, make in README_TABLES:
        start, end = f"<!-- bench:{name} -->", f"<!-- /bench:{name} -->"
        if start not in text or end not in text:
            continue
        table = make()
        if table:
            a, b = text.index(start) + len(start), text.index(end)
            text = text[:a] + "\n" + table + "\n" + text[b:]
    with open(README, "w", encoding="utf-8") as f:
        f.write(text)


NO_DATA = ("Not measured", "No `results/")
KEPT_NOTE = "*From an earlier run: this section's results are not in this run's `bench/results/`.*"


def sections(text):
    """[(heading, text)] of the level-2 sections of a report (heading: the '## ...' line)."""
    out, cur = [], None
    fence = False
    for line in text.splitlines(keepends=True):
        if line.startswith("```"):
            fence = not fence
        if line.startswith("## ") and not fence:
            cur = [line.rstrip("\n"), line]
            out.append(cur)
        elif cur is not None:
            cur[1] += line
    return [(h, t) for h, t in out]


def merge_with_previous(new_sections, old_text):
    """The new report's sections, except that one whose part did not run here (its results are
    missing) keeps the previous report's text, and a section of the previous report that this
    script does not write (written by hand) is kept, after the one it followed."""
    old = sections(old_text)
    old_by = dict(old)
    made = {h for h, _ in new_sections}
    merged = []
    for h, t in new_sections:
        if any(line.startswith(NO_DATA) for line in t.splitlines()) and h in old_by \
                and not any(line.startswith(NO_DATA) for line in old_by[h].splitlines()):
            t = old_by[h]
            if KEPT_NOTE not in t:
                head, _, rest = t.partition("\n")
                t = f"{head}\n\n{KEPT_NOTE}\n{rest}"
        merged.append((h, t))
    # hand-written sections, each after the section it followed before
    after = None
    for h, t in old:
        if h not in made:
            at = next((i + 1 for i, (mh, _) in enumerate(merged) if mh == after), len(merged))
            merged.insert(at, (h, t))
        after = h
    return merged


def main():
    head = ["# simhash — benchmark and quality report", "",
            "Generated by `bench/report.py` from `bench/results/*.csv`; rerun with `make bench` "
            "(performance, `SCALE=` grows the data) and `make quality` (fingerprint quality). "
            "Every figure is a ratio against a baseline measured in the same run on the same machine. "
            "The machine is shared (2 cores, other jobs running), so absolute numbers are noisy; "
            "ratios are the point. A section whose results are not in `bench/results/` keeps its "
            "text from the previous report, and sections written by hand are kept.", ""]

    def quality(out):
        q = fragment("quality.md")
        out.append("## Quality: does distance ≤ k mean near-duplicate?\n")
        out.append(q + "\n" if q else "Not measured yet: run `make quality`.\n")

    makers = [section_machine, section_fingerprint,
              lambda o: section_external(o, "index", "Index: radius queries, build and size"),
              section_sweep,
              lambda o: section_external(o, "planner", "Planner's choice and exact KNN (index vs sequential scan)"),
              section_tuning, section_concurrency, section_insert,
              lambda o: section_external(o, "batch", "Batch: find_all / find_clusters"),
              section_memory,
              lambda o: section_external(o, "citus", "Scale-out: one node vs Citus coordinator + 2 workers"),
              lambda o: section_external(o, "neardup_online", "Online lookup: simhash_near_duplicates_of"),
              section_neardup_scale, section_scale, section_limit, section_limit_ratios,
              section_readme_tables, quality]
    new = []
    for make in makers:
        buf = []
        make(buf)
        text = "\n".join(buf).rstrip() + "\n\n"
        new.append((text.splitlines()[0], text))
    path = os.path.join(HERE, "REPORT.md")
    old_text = open(path, encoding="utf-8").read() if os.path.exists(path) else ""
    body = "".join(t if t.endswith("\n\n") else t.rstrip("\n") + "\n\n" for _, t in merge_with_previous(new, old_text))
    with open(path, "w", encoding="utf-8") as f:
        f.write(("\n".join(head) + "\n" + body).rstrip() + "\n")
    update_readme()


if __name__ == "__main__":
    sys.exit(main())
