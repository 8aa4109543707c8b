"""neardup_online.py — the online lookup simhash_near_duplicates_of at scale
(make bench; issue 28).

Corpus: real text on this machine cut into documents of at most 3,000
characters at paragraph ends: the visible text of the PostgreSQL HTML manual,
/usr/share/doc files (copyright, README, changelog entries), manual pages
(roff requests dropped) and Python modules of the standard library; then
edited copies (a quarter of the corpus) made as bench/neardup_quality.py
makes them (typos, inserted and deleted sentences, headers, version bumps,
reordered paragraphs, truncation; copies of copies too).

Measures: the GIN build on simhash_prefix_tokens(body, 0.8) simhash_prefix_ops
(time, index size), then ONLINE_QUERIES lookups at 0.8 timed inside the
server (half documents of the table, half fresh edits of them): p50 and p95
of the call, the backend's CPU time per lookup (less sensitive to the load
of a shared machine), candidates per lookup (rows that meet two of the
probe's tokens), answers per lookup, the load average; and
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


def main():
    rng = random.Random(SEED)
    q.log(f"neardup_online: building a corpus of {N_DOCS} documents")
    docs, pool = corpus(rng)
    buf = io.StringIO()
    w = csv.writer(buf)
    for i, d in enumerate(docs):
        w.writerow([f"{i:07d}", d])
    q.psql("CREATE EXTENSION IF NOT EXISTS simhash; DROP TABLE IF EXISTS online_docs, online_queries, online_cpu;"
           "CREATE TABLE online_docs (k text PRIMARY KEY, body text NOT NULL)")
    q.psql("COPY online_docs (k, body) FROM STDIN WITH (FORMAT csv)", stdin=buf.getvalue())
    q.psql("VACUUM ANALYZE online_docs")
    mb = float(q.psql("SELECT sum(octet_length(body)) / 1e6 FROM online_docs"))
    t0 = time.time()
    q.psql("SET maintenance_work_mem = '1GB'; CREATE INDEX online_docs_prefix ON online_docs"
           f" USING gin (simhash_prefix_tokens(body, {THRESHOLD}) simhash_prefix_ops)")
    build = time.time() - t0
    q.psql("ANALYZE online_docs")
    idx_mb = float(q.psql("SELECT pg_relation_size('online_docs_prefix') / 1e6"))
    heap_mb = float(q.psql("SELECT pg_table_size('online_docs') / 1e6"))
    q.log(f"{N_DOCS} documents, {mb:.0f} MB of text; index built in {build:.1f} s, {idx_mb:.1f} MB"
          f" (table {heap_mb:.0f} MB)")

    # queries: half stored documents, half fresh edits of stored documents
    queries = []
    for i in range(N_QUERIES):
        d = docs[rng.randrange(len(docs))]
        queries.append(d if i % 2 == 0 else nq.edit(d, rng, pool)[0])
    buf = io.StringIO()
    w = csv.writer(buf)
    for i, d in enumerate(queries):
        w.writerow([i, d])
    q.psql("CREATE TABLE online_queries (i int PRIMARY KEY, doc text, ms float8, answers int, candidates int)")
    q.psql("COPY online_queries (i, doc) FROM STDIN WITH (FORMAT csv)", stdin=buf.getvalue())
    # warm the cache once, then time every lookup inside the server
    q.psql("SELECT count(*) FROM online_docs")
    # the backend's CPU time (utime + stime in ticks of 10 ms) around the timed loop alone
    cpu = "(SELECT f[14]::bigint + f[15]::bigint FROM string_to_array(pg_read_file('/proc/' || pg_backend_pid() || '/stat'), ' ') f)"
    q.psql(f"""CREATE TABLE online_cpu (ticks bigint, load text);
DO $$
DECLARE r record; t timestamptz; n int; c int; c0 bigint;
BEGIN
  c0 := {cpu};
  FOR r IN SELECT i, doc FROM online_queries ORDER BY i LOOP
    t := clock_timestamp();
    SELECT count(*) INTO n FROM simhash_near_duplicates_of('online_docs', 'body', 'k', r.doc, 0.8);
    UPDATE online_queries SET ms = extract(epoch FROM clock_timestamp() - t) * 1000, answers = n WHERE i = r.i;
  END LOOP;
  INSERT INTO online_cpu VALUES ({cpu} - c0, split_part(pg_read_file('/proc/loadavg'), ' ', 1));
  FOR r IN SELECT i, doc FROM online_queries ORDER BY i LOOP
    SELECT count(*) INTO c FROM online_docs WHERE simhash_prefix_tokens(body, 0.8) &&& simhash_prefix_probe(r.doc, 0.8);
    UPDATE online_queries SET candidates = c WHERE i = r.i;
  END LOOP;
END $$""")
    out = q.psql("SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY ms), percentile_cont(0.95) WITHIN GROUP (ORDER BY ms),"
                 " max(ms), avg(candidates), percentile_cont(0.5) WITHIN GROUP (ORDER BY candidates),"
                 " percentile_cont(0.95) WITHIN GROUP (ORDER BY candidates), avg(answers),"
                 " (SELECT ticks FROM online_cpu) * 10.0 / count(*), (SELECT load FROM online_cpu)"
                 " FROM online_queries")
    p50, p95, mx, cand, cand50, cand95, ans, cpu_ms, load = (float(x) for x in out.strip().split("|"))
    q.log(f"lookups at 0.8: p50 {p50:.1f} ms, p95 {p95:.1f} ms, max {mx:.1f} ms, CPU {cpu_ms:.1f} ms a lookup"
          f" (load {load:.1f}); candidates per lookup mean {cand:.0f}, p50 {cand50:.0f}, p95 {cand95:.0f};"
          f" answers per lookup {ans:.2f}")

    # exactness: the lookup equals a sequential scan
    bad = 0
    for i in range(min(N_CHECKS, N_QUERIES)):
        got = q.psql(f"SELECT k, similarity FROM online_queries, simhash_near_duplicates_of('online_docs', 'body', 'k', doc, 0.8)"
                     f" s(k, similarity) WHERE i = {i} ORDER BY 1")
        want = q.psql(f"SELECT k, j FROM (SELECT d.k, simhash_similarity(d.body, o.doc) AS j FROM online_docs d, online_queries o"
                      f" WHERE o.i = {i}) s WHERE j >= 0.8 ORDER BY 1")
        bad += got != want
    q.log(f"{min(N_CHECKS, N_QUERIES)} lookups checked against a sequential scan: {bad} differ")

    os.makedirs(RES, exist_ok=True)
    with open(os.path.join(RES, "neardup_online_lookup.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["docs", "text_mb", "index_build_s", "index_mb", "queries", "p50_ms", "p95_ms", "max_ms",
                    "cpu_ms", "load", "candidates_mean", "candidates_p50", "candidates_p95", "answers_mean", "checked",
                    "differ"])
        w.writerow([N_DOCS, f"{mb:.0f}", f"{build:.1f}", f"{idx_mb:.1f}", N_QUERIES, f"{p50:.2f}", f"{p95:.2f}",
                    f"{mx:.2f}", f"{cpu_ms:.2f}", f"{load:.1f}", f"{cand:.0f}", f"{cand50:.0f}", f"{cand95:.0f}", f"{ans:.2f}", min(N_CHECKS, N_QUERIES), bad])
    if bad:
        sys.exit("neardup_online: a lookup differs from the sequential scan")


if __name__ == "__main__":
    main()
