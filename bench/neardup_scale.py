"""neardup_scale.py — the verified join simhash_near_duplicates at scale, beside the
MinHash-LSH baseline, and the online lookup on the same table (make bench, part
neardup_scale; issue 28).

Corpus: bench/neardup_quality.py's corpus function with its seed, so N documents
here are the documents of `QUALITY_ND_DOCS=N make quality`: real Debian documents
(the PostgreSQL HTML manual, /usr/share/doc copyright, README and changelog entries)
and edited copies of them (typo fixes, inserted and deleted sentences, headers and
footers, version bumps, swapped paragraphs, truncation; copies of copies too).  The
machine holds about 3,500 such documents, so at 100,000 and more nearly all are
edited copies; a larger N draws further edited copies from the same random stream,
so every N is deterministic and the first documents of a larger N are not those of
a smaller one (the originals are sampled per N).

For each N in NEARDUP_SCALE_DOCS (default 100000; e.g. "100000 1000000"):
  - loads the documents into a table (k text, body text, fp bigint DEFAULT 0);
  - for each work_mem in NEARDUP_SCALE_WORK_MEM (default "4GB 64MB"), in a fresh
    session after a read of every body: the wall time of
    SELECT count(*) FROM simhash_near_duplicates(..., NEARDUP_SCALE_THRESHOLD), the
    pairs, the backend's CPU time (/proc/self/stat), how the join ran (its NOTICE),
    and the backend's peak resident size (VmHWM of /proc/self/status) above its size
    before the call; the load average;
  - the MinHash-LSH baseline of bench/neardup_quality.py (128 permutations, bands and
    rows as datasketch chooses them, candidates kept when their MinHash estimate
    reaches the threshold) in a child process that first reads the shingle sets
    (simhash_shingles) from the server: its time and CPU time from ready sets (the read
    is timed apart), pairs, and the child's peak above its size with the sets loaded
    (NEARDUP_SCALE_MINHASH=0 leaves it out: at 100,000 documents its peak was 1.6 GB
    above 0.3 GB of sets, and it grows with the shingles, so a million documents would
    need some 15-20 GB);
  - with NEARDUP_SCALE_ONLINE=1 (default), the online lookup of
    bench/neardup_online.py on the same table (GIN build and size, p50/p95 of
    ONLINE_QUERIES lookups, candidates, a check against a sequential scan).
Writes $BENCH_RESULTS/neardup_scale_join.csv, neardup_scale_online.csv (each row with
the commit it was measured at; the rows of the sizes not run this time are kept, so
NEARDUP_SCALE_DOCS=1000000 adds a size to an earlier run's) and neardup_scale_info.csv."""
import csv
import io
import json
import os
import random
import re
import resource
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import neardup_online as no  # noqa: E402  (the online lookup's measurement)
import neardup_quality as nq  # noqa: E402  (corpus, MinHash-LSH)
import quality as q  # noqa: E402  (psql)

RES = os.environ.get("BENCH_RESULTS", os.path.join(HERE, "results"))
SIZES = [int(x) for x in os.environ.get("NEARDUP_SCALE_DOCS", "100000").split()]
WORK_MEMS = os.environ.get("NEARDUP_SCALE_WORK_MEM", "4GB 64MB").split()
THRESHOLD = float(os.environ.get("NEARDUP_SCALE_THRESHOLD", "0.8"))
ONLINE = os.environ.get("NEARDUP_SCALE_ONLINE", "1") == "1"
MINHASH = os.environ.get("NEARDUP_SCALE_MINHASH", "1") == "1"
TABLE = "nds_docs"
HWM = "substring(pg_read_file('/proc/self/status') from 'VmHWM:\\s+(\\d+)')::bigint"
# utime + stime of this backend, in clock ticks (fields 14 and 15 of /proc/self/stat, counted
# after the command name's closing parenthesis)
CPU = ("(SELECT f[12]::bigint + f[13]::bigint FROM regexp_split_to_array("
       "substring(pg_read_file('/proc/self/stat') from '\\) (.*)$'), ' ') f)")
CLK_TCK = os.sysconf("SC_CLK_TCK")
JOIN_FIELDS = ["docs", "text_mb", "shingles", "method", "work_mem", "seconds", "cpu_s", "pairs", "peak_mb", "start_mb",
               "path", "candidates", "load_before", "load_after", "note", "commit"]


def load1():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def vm_kb(field):
    with open("/proc/self/status") as f:
        m = re.search(rf"^{field}:\s+(\d+)", f.read(), re.M)
    return int(m.group(1)) if m else 0


def load_table(docs):
    q.psql(f"CREATE EXTENSION IF NOT EXISTS simhash; DROP TABLE IF EXISTS {TABLE}, {TABLE}_queries;"
           f"CREATE TABLE {TABLE} (k text PRIMARY KEY, body text NOT NULL, fp bigint NOT NULL DEFAULT 0)")
    buf = io.StringIO()
    w = csv.writer(buf, quoting=csv.QUOTE_ALL)  # "" is an empty body (an edit may empty one), not NULL
    for i, d in enumerate(docs):
        # a line "\." would end psql's COPY data
        w.writerow([f"{i:07d}", re.sub(r"(?m)^\\\.", r"\\ .", d)])
    q.psql(f"COPY {TABLE} (k, body) FROM STDIN WITH (FORMAT csv)", stdin=buf.getvalue())
    q.psql(f"VACUUM ANALYZE {TABLE}")
    return float(q.psql(f"SELECT sum(octet_length(body)) / 1e6 FROM {TABLE}"))


def join(work_mem):
    """One call of the join in a fresh session: seconds, the backend's CPU seconds, pairs, peak
    and start (kB), NOTICEs."""
    script = f"""SET client_min_messages = notice;
SET simhash.near_duplicates_progress = 0;
SET work_mem = '{work_mem}';
SELECT sum(length(body)) FROM {TABLE} \\gset
SELECT {HWM} AS hwm0, {CPU} AS cpu0, clock_timestamp() AS t0 \\gset
SELECT count(*) AS pairs FROM simhash_near_duplicates('{TABLE}', 'fp', 'body', 'k', {THRESHOLD}) \\gset
SELECT extract(epoch FROM clock_timestamp() - :'t0'::timestamptz), :pairs, {HWM}, :hwm0, {CPU} - :cpu0;
"""
    r = subprocess.run([q.PSQL, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-At", "-f", "-"], input=script,
                       capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"neardup_scale: the join at work_mem {work_mem} failed: {r.stderr}")
    secs, pairs, hwm1, hwm0, ticks = r.stdout.strip().splitlines()[-1].split("|")
    return float(secs), int(ticks) / CLK_TCK, int(pairs), int(hwm1), int(hwm0), r.stderr


def notice_facts(notices):
    """(path, shingles, candidates) from the join's NOTICEs; blank when a message changed."""
    # on disk: the chunk size, and with parallel workers how the chunks were shared
    m = re.search(r"joining on disk in chunks of (\d+) kB", notices)
    w = re.search(r"(\d+) chunks in (\d+) parts, joined by (.*?parallel workers)", notices)
    if m:
        path = f"on disk, chunks of {m.group(1)} kB" + (f" ({w.group(1)} chunks, {w.group(2)} parts, {w.group(3)})" if w else "")
    else:
        path = "in memory" if "joining in memory" in notices else ""
    m = re.search(r"(\d+) shingles", notices)
    shingles = m.group(1) if m else ""
    m = re.search(r"(\d+) candidate pairs", notices)
    return path, shingles, (m.group(1) if m else "")


def read_sets():
    """The shingle sets of the table in key order, streamed from COPY."""
    p = subprocess.Popen([q.PSQL, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-c",
                          f"COPY (SELECT array_to_string(simhash_shingles(body), ' ') FROM {TABLE} ORDER BY k)"
                          " TO STDOUT"], stdout=subprocess.PIPE, text=True)
    sets = [np.array(line.split(), dtype=np.int64) for line in p.stdout]
    if p.wait() != 0:
        sys.exit("neardup_scale: could not read the shingle sets")
    return sets


def minhash_child():
    """NEARDUP_SCALE_CHILD=minhash: the baseline in this process; prints one JSON line."""
    t0 = time.time()
    sets = read_sets()
    t_read = time.time() - t0
    rss0 = vm_kb("VmRSS")
    c0 = time.process_time()
    est, cand, bands, rows, t_sig, t_lsh, _ = nq.minhash_lsh(sets, THRESHOLD)
    print(json.dumps({"seconds": t_sig + t_lsh, "cpu_s": time.process_time() - c0, "read_s": t_read, "pairs": len(est), "candidates": cand,
                      "bands": bands, "rows": rows, "peak_kb": vm_kb("VmHWM") - rss0, "start_kb": rss0,
                      "maxrss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))


def minhash():
    lb = load1()
    r = subprocess.run([sys.executable, os.path.abspath(__file__)], env=dict(os.environ, NEARDUP_SCALE_CHILD="minhash"),
                       capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"neardup_scale: the MinHash-LSH baseline failed: {r.stderr[-2000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1]), lb, load1()


def commit():
    return subprocess.run(["git", "-C", HERE, "describe", "--always", "--dirty"], capture_output=True,
                          text=True).stdout.strip() or "?"


def run_size(n):
    rng = random.Random(nq.SEED)
    q.log(f"neardup_scale: {n} documents (bench/neardup_quality.py's corpus, seed {nq.SEED})")
    docs = nq.corpus(rng, n)
    texts = [d["text"] for d in docs]
    originals = sum(d["edit"] == "original" for d in docs)
    mb = load_table(texts)
    q.log(f"  loaded: {mb:.0f} MB of text, {originals} originals and {n - originals} edited copies")
    rows, pairs_seen = [], set()
    shingles = ""
    for wm in WORK_MEMS:
        lb = load1()
        secs, cpu, pairs, hwm1, hwm0, notices = join(wm)
        path, sh, cand = notice_facts(notices)
        shingles = shingles or sh
        pairs_seen.add(pairs)
        rows.append({"docs": n, "text_mb": f"{mb:.0f}", "shingles": sh, "method": "simhash_near_duplicates",
                     "work_mem": wm, "seconds": f"{secs:.2f}", "cpu_s": f"{cpu:.2f}", "pairs": pairs, "peak_mb": f"{(hwm1 - hwm0) / 1024:.0f}",
                     "start_mb": f"{hwm0 / 1024:.0f}", "path": path, "candidates": cand, "load_before": f"{lb:.1f}",
                     "load_after": f"{load1():.1f}", "note": "exact", "commit": commit()})
        q.log(f"  simhash_near_duplicates, work_mem {wm}: {secs:.1f} s ({cpu:.1f} s CPU), {pairs} pairs, peak +{(hwm1 - hwm0) / 1024:.0f} MB"
              f" ({path}; load {lb:.1f})")
    if len(pairs_seen) > 1:
        sys.exit(f"neardup_scale: the join's pairs differ between work_mem settings: {sorted(pairs_seen)}")
    if MINHASH:
        m, lb, la = minhash()
        rows.append({"docs": n, "text_mb": f"{mb:.0f}", "shingles": shingles, "method": "MinHash-LSH + estimate",
                     "work_mem": "", "seconds": f"{m['seconds']:.1f}", "cpu_s": f"{m['cpu_s']:.1f}",
                     "pairs": m["pairs"],
                     "peak_mb": f"{m['peak_kb'] / 1024:.0f}", "start_mb": f"{m['start_kb'] / 1024:.0f}",
                     "path": f"b={m['bands']}, r={m['rows']}", "candidates": m["candidates"],
                     "load_before": f"{lb:.1f}", "load_after": f"{la:.1f}",
                     "note": f"from ready shingle sets (read in {m['read_s']:.1f} s)", "commit": commit()})
        q.log(f"  MinHash-LSH + estimate: {m['seconds']:.1f} s, {m['pairs']} pairs, peak +{m['peak_kb'] / 1024:.0f} MB"
              f" (sets read in {m['read_s']:.1f} s; load {lb:.1f})")
    return rows, docs


def run_online(docs):
    """The online lookup on the table of run_size (then dropped): its CSV row."""
    pool = [d["text"] for d in docs if d["edit"] == "original"]
    online = no.measure(TABLE, [d["text"] for d in docs], pool, random.Random(no.SEED))
    online["load"] = f"{load1():.1f}"
    online["commit"] = commit()
    q.psql(f"DROP TABLE {TABLE}; DROP TABLE IF EXISTS {TABLE}_queries")
    if online["differ"]:
        sys.exit("neardup_scale: a lookup differs from the sequential scan")
    return online


def kept(name):
    """The rows of an earlier run's CSV for the sizes not run this time (as bench/scale.sh keeps them)."""
    path = os.path.join(RES, name)
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        return [r for r in csv.DictReader(f) if int(r["docs"]) not in SIZES]


def write(name, rows, fields):
    rows = sorted(rows, key=lambda r: int(r["docs"]))  # stable: each size's rows keep their order
    with open(os.path.join(RES, name), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, restval="", extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)


def main():
    os.makedirs(RES, exist_ok=True)
    join_rows, online_rows = kept("neardup_scale_join.csv"), kept("neardup_scale_online.csv")
    for n in SIZES:
        # the join's rows are written before the online lookup starts
        rows, docs = run_size(n)
        join_rows += rows
        write("neardup_scale_join.csv", join_rows, JOIN_FIELDS)
        if ONLINE:
            online_rows.append(run_online(docs))
        else:
            q.psql(f"DROP TABLE {TABLE}")
        if online_rows:
            fields = [k for r in online_rows for k in r]
            write("neardup_scale_online.csv", online_rows, list(dict.fromkeys(fields)))
    sizes = sorted({int(r["docs"]) for r in join_rows})
    write_info = [{"key": "threshold", "value": THRESHOLD}, {"key": "sizes", "value": " ".join(map(str, sizes))}]
    with open(os.path.join(RES, "neardup_scale_info.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["key", "value"])
        w.writeheader()
        w.writerows(write_info)


if __name__ == "__main__":
    if os.environ.get("NEARDUP_SCALE_CHILD") == "minhash":
        minhash_child()
    else:
        main()
