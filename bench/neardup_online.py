"""neardup_online.py — the online lookup simhash_near_duplicates_of at scale
(make bench; issue 28).

Corpus: real text on this machine cut into documents of at most 3,000
characters at paragraph ends: the visible text of the PostgreSQL HTML manual,
/usr/share/doc files (copyright, README, changelog entries), manual pages
(roff requests dropped) and Python modules of the standard library; then
edited copies (a quarter of the corpus) made as bench/neardup_quality.py
makes them (typos, inserted and deleted sentences, headers, version bumps,
reordered paragraphs, truncation; copies of copies too).

Measures: the GIN build on simhash_prefix_tokens(body, 0.8) (time, index
size), then ONLINE_QUERIES lookups at 0.8 timed inside the server (half
documents of the table, half fresh edits of them): p50 and p95 of the call,
candidates per lookup (rows the probe meets), answers per lookup; and
checks ONLINE_CHECKS lookups against a sequential scan of
simhash_similarity over the whole table.  Writes $BENCH_RESULTS/neardup_online_lookup.csv.

ONLINE_DOCS (default 100000) documents; deterministic (fixed seed)."""
import csv
import glob
import gzip
import io
import os
import random
import re
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import neardup_quality as nq  # noqa: E402  (edits, base documents)
import quality as q  # noqa: E402  (psql)

RES = os.environ.get("BENCH_RESULTS", os.path.join(HERE, "results"))
N_DOCS = int(os.environ.get("ONLINE_DOCS", "100000"))
N_QUERIES = int(os.environ.get("ONLINE_QUERIES", "400"))
N_CHECKS = int(os.environ.get("ONLINE_CHECKS", "5"))
THRESHOLD = 0.8
SEED = 20261128
CHUNK = 3000
EDIT_SHARE = 0.25


def chunks(text):
    """Pieces of at most CHUNK characters, cut at paragraph ends, of 200 or more."""
    out, cur = [], ""
    for para in re.split(r"\n\s*\n", text):
        if cur and len(cur) + len(para) > CHUNK:
            out.append(cur)
            cur = ""
        cur = (cur + "\n\n" + para) if cur else para[:CHUNK]
    if cur:
        out.append(cur)
    return [c for c in out if len(c) >= 200]


def man_text(path):
    with gzip.open(path, "rt", encoding="utf-8", errors="replace") as f:
        lines = f.read(200_000).splitlines()
    keep = [re.sub(r"\\f[BIRP]|\\-|\\\(..|\\&", "", ln) for ln in lines if not ln.startswith((".", "'"))]
    return "\n".join(keep)


def base_texts():
    texts = [t for _, t in nq.base_documents(random.Random(SEED))]
    for path in sorted(glob.glob("/usr/share/man/man*/*.gz")):
        texts.append(man_text(path))
    for path in sorted(glob.glob("/usr/lib/python3*/**/*.py", recursive=True)):
        with open(path, encoding="utf-8", errors="replace") as f:
            texts.append(f.read(400_000))
    seen, docs = set(), []
    for t in texts:
        # a line "\." would end psql's COPY data
        for c in chunks(re.sub(r"(?m)^\\\.", r"\\ .", t.replace("\0", " "))):
            if c not in seen:
                seen.add(c)
                docs.append(c)
    return docs


def corpus(rng):
    base = base_texts()
    n_base = min(len(base), int(N_DOCS * (1 - EDIT_SHARE)))
    docs = [base[i] for i in sorted(rng.sample(range(len(base)), n_base))]
    pool = list(docs)
    while len(docs) < N_DOCS:
        docs.append(nq.edit(rng.choice(docs), rng, pool)[0])
    return docs, pool


def measure(table, docs, pool, rng, n_queries=N_QUERIES, n_checks=N_CHECKS):
    """The online lookup on a loaded table (k text PRIMARY KEY, body text) holding docs:
    the GIN build, n_queries lookups at THRESHOLD (half documents of the table, half fresh
    edits of them, from rng and the donor sentences of pool) timed inside the server, and
    n_checks of them against a sequential scan.  Returns the row of the CSV as a dict; the
    backend's peak memory (VmHWM) over the lookups is peak_mb above its size before them."""
    index, queries_t = f"{table}_prefix", f"{table}_queries"
    mb = float(q.psql(f"SELECT sum(octet_length(body)) / 1e6 FROM {table}"))
    t0 = time.time()
    q.psql(f"SET maintenance_work_mem = '1GB'; DROP INDEX IF EXISTS {index}; CREATE INDEX {index} ON {table}"
           f" USING gin (simhash_prefix_tokens(body, {THRESHOLD}) simhash_prefix_ops)")
    build = time.time() - t0
    q.psql(f"ANALYZE {table}")
    idx_mb = float(q.psql(f"SELECT pg_relation_size('{index}') / 1e6"))
    heap_mb = float(q.psql(f"SELECT pg_table_size('{table}') / 1e6"))
    q.log(f"{len(docs)} documents, {mb:.0f} MB of text; index built in {build:.1f} s, {idx_mb:.1f} MB"
          f" (table {heap_mb:.0f} MB)")

    # queries: half stored documents, half fresh edits of stored documents
    queries = []
    for i in range(n_queries):
        d = docs[rng.randrange(len(docs))]
        queries.append(d if i % 2 == 0 else nq.edit(d, rng, pool)[0])
    buf = io.StringIO()
    w = csv.writer(buf)
    for i, d in enumerate(queries):
        w.writerow([i, d])
    q.psql(f"DROP TABLE IF EXISTS {queries_t};"
           f"CREATE TABLE {queries_t} (i int PRIMARY KEY, doc text, ms float8, answers int, candidates int)")
    q.psql(f"COPY {queries_t} (i, doc) FROM STDIN WITH (FORMAT csv)", stdin=buf.getvalue())
    # warm the cache once, then time every lookup inside the server; the backend's
    # VmHWM (peak resident size) before and after the lookups
    q.psql(f"SELECT count(*) FROM {table}")
    hwm = "substring(pg_read_file('/proc/self/status') from 'VmHWM:\\s+(\\d+)')::bigint"
    # the backend's CPU time (utime + stime, in ticks of 10 ms) around the timed lookups alone
    cpu = ("(SELECT f[14]::bigint + f[15]::bigint FROM"
           " string_to_array(pg_read_file('/proc/' || pg_backend_pid() || '/stat'), ' ') f)")
    out = q.psql(f"""SELECT set_config('simhash_bench.hwm0', ({hwm})::text, false);
SELECT set_config('simhash_bench.cpu0', ({cpu})::text, false);
DO $$
DECLARE r record; t timestamptz; n int; c int;
BEGIN
  FOR r IN SELECT i, doc FROM {queries_t} ORDER BY i LOOP
    t := clock_timestamp();
    SELECT count(*) INTO n FROM simhash_near_duplicates_of('{table}', 'body', 'k', r.doc, {THRESHOLD});
    UPDATE {queries_t} SET ms = extract(epoch FROM clock_timestamp() - t) * 1000, answers = n WHERE i = r.i;
  END LOOP;
  PERFORM set_config('simhash_bench.cpu1', ({cpu})::text, false);
  PERFORM set_config('simhash_bench.load', split_part(pg_read_file('/proc/loadavg'), ' ', 1), false);
  FOR r IN SELECT i, doc FROM {queries_t} ORDER BY i LOOP
    SELECT count(*) INTO c FROM {table}
      WHERE simhash_prefix_tokens(body, {THRESHOLD}) &&& simhash_prefix_probe(r.doc, {THRESHOLD});
    UPDATE {queries_t} SET candidates = c WHERE i = r.i;
  END LOOP;
END $$;
SELECT current_setting('simhash_bench.hwm0'), {hwm},
  current_setting('simhash_bench.cpu1')::bigint - current_setting('simhash_bench.cpu0')::bigint,
  current_setting('simhash_bench.load')""")
    last = out.strip().splitlines()[-1].split("|")
    hwm0, hwm1, ticks = (int(x) for x in last[:3])
    load = float(last[3])
    cpu_ms = ticks * 10.0 / n_queries
    out = q.psql("SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY ms), percentile_cont(0.95) WITHIN GROUP (ORDER BY ms),"
                 " max(ms), avg(candidates), percentile_cont(0.5) WITHIN GROUP (ORDER BY candidates),"
                 f" percentile_cont(0.95) WITHIN GROUP (ORDER BY candidates), avg(answers) FROM {queries_t}")
    p50, p95, mx, cand, cand50, cand95, ans = (float(x) for x in out.strip().split("|"))
    q.log(f"lookups at {THRESHOLD}: p50 {p50:.1f} ms, p95 {p95:.1f} ms, max {mx:.1f} ms; candidates per lookup"
          f" mean {cand:.0f}, p50 {cand50:.0f}, p95 {cand95:.0f}; answers per lookup {ans:.2f};"
          f" backend peak +{(hwm1 - hwm0) / 1024:.0f} MB; CPU {cpu_ms:.1f} ms a lookup (load {load:.1f})")

    # exactness: the lookup equals a sequential scan
    bad = 0
    for i in range(min(n_checks, n_queries)):
        got = q.psql(f"SELECT k, similarity FROM {queries_t}, simhash_near_duplicates_of('{table}', 'body', 'k', doc,"
                     f" {THRESHOLD}) s(k, similarity) WHERE i = {i} ORDER BY 1")
        want = q.psql(f"SELECT k, j FROM (SELECT d.k, simhash_similarity(d.body, o.doc) AS j FROM {table} d,"
                      f" {queries_t} o WHERE o.i = {i}) s WHERE j >= {THRESHOLD} ORDER BY 1")
        bad += got != want
    q.log(f"{min(n_checks, n_queries)} lookups checked against a sequential scan: {bad} differ")
    return {"docs": len(docs), "text_mb": f"{mb:.0f}", "index_build_s": f"{build:.1f}", "index_mb": f"{idx_mb:.1f}",
            "queries": n_queries, "p50_ms": f"{p50:.2f}", "p95_ms": f"{p95:.2f}", "max_ms": f"{mx:.2f}",
            "candidates_mean": f"{cand:.0f}", "candidates_p50": f"{cand50:.0f}", "candidates_p95": f"{cand95:.0f}",
            "answers_mean": f"{ans:.2f}", "checked": min(n_checks, n_queries), "differ": bad,
            "peak_mb": f"{(hwm1 - hwm0) / 1024:.0f}", "cpu_ms": f"{cpu_ms:.2f}", "load": f"{load:.1f}"}


def main():
    rng = random.Random(SEED)
    q.log(f"neardup_online: building a corpus of {N_DOCS} documents")
    docs, pool = corpus(rng)
    buf = io.StringIO()
    w = csv.writer(buf)
    for i, d in enumerate(docs):
        w.writerow([f"{i:07d}", d])
    q.psql("CREATE EXTENSION IF NOT EXISTS simhash; DROP TABLE IF EXISTS online_docs, online_docs_queries;"
           "CREATE TABLE online_docs (k text PRIMARY KEY, body text NOT NULL)")
    q.psql("COPY online_docs (k, body) FROM STDIN WITH (FORMAT csv)", stdin=buf.getvalue())
    q.psql("VACUUM ANALYZE online_docs")
    row = measure("online_docs", docs, pool, rng)
    os.makedirs(RES, exist_ok=True)
    with open(os.path.join(RES, "neardup_online_lookup.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(row))
        w.writeheader()
        w.writerow(row)
    if row["differ"]:
        sys.exit("neardup_online: a lookup differs from the sequential scan")


if __name__ == "__main__":
    main()
