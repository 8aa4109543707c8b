"""neardup_quality.py — verified near-duplicates against exact Jaccard truth
(make quality; issue 22).

Corpus: real Debian documents (visible text of the PostgreSQL HTML manual,
/usr/share/doc/*/copyright, README files, and the entries of
changelog.Debian.gz files, which are short), plus edited copies of them made
the ways documents really change: typo fixes, inserted and deleted sentences,
changed headers and footers, version bumps, reordered paragraphs and
truncation (one to three edits per copy; copies of copies too).

Truth: the exact Jaccard similarity of the distinct shingle-hash sets that
simhash_shingles(body) returns (the sets simhash_similarity compares), for
every pair of documents, by a sparse matrix product of the document x shingle
incidence matrix (scipy) computed block by block: independent of the prefix
filtering that simhash_near_duplicates uses.

Methods, each at thresholds 0.5, 0.7, 0.8, 0.9:
  (a) SimHash radius alone: "distance <= k" for k = 3..8 (simhash_pairs);
  (b) simhash_near_duplicates (prefix-filtered candidates, verified);
  (c) MinHash-LSH written here: 128 permutations of the same shingle sets,
      bands and rows chosen as datasketch chooses them (minimise the weighted
      false positive and false negative areas, weights 0.5 / 0.5); reported
      as LSH candidates (what dedup pipelines keep) and as candidates whose
      MinHash estimate reaches the threshold.
Time per 10,000 documents: measured wall time scaled linearly from the run's
size (pair methods grow faster than linearly; the size is in the report).

QUALITY_ND_DOCS sets the number of documents (default 4000).  Deterministic:
fixed seed, sorted inputs.  Writes bench/QUALITY.md and
$BENCH_RESULTS/neardup_*.csv, and bench/plots/neardup_f1.png."""
import csv
import glob
import gzip
import io
import os
import random
import re
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import quality as q  # noqa: E402  (visible_text, psql helpers)

RES = os.environ.get("BENCH_RESULTS", os.path.join(HERE, "results"))
PLOTS = os.path.join(HERE, "plots")
N_DOCS = int(os.environ.get("QUALITY_ND_DOCS", "4000"))
SEED = 20261126
THRESHOLDS = (0.5, 0.7, 0.8, 0.9)
RADII = range(3, 9)
MAX_CHARS = 30_000
EDIT_SHARE = 0.4
NUM_PERM = 128
# simhash_near_duplicates joins in memory when its sets fit in work_mem (about
# 30 bytes per shingle: 3.7 M shingles at 10,000 documents here)
ND_WORK_MEM = os.environ.get("QUALITY_ND_WORK_MEM", "2GB")


def log(msg):
    print(msg, flush=True)


# ---- documents ------------------------------------------------------------------
def changelog_entries(path):
    """The entries of a Debian changelog: one per version block."""
    with gzip.open(path, "rt", encoding="utf-8", errors="replace") as f:
        text = f.read(400_000)
    parts = re.split(r"\n(?=\S+ \([^)]*\) [^;]*; urgency=)", text)
    return [p.strip() for p in parts if p.strip()]


def base_documents(rng):
    """(kind, text) of real documents, sorted by source, then sampled."""
    docs = []
    for path in sorted(glob.glob(os.path.join(q.HTML_DIR, "*.html"))):
        with open(path, encoding="utf-8", errors="replace") as f:
            docs.append(("pgdoc", q.visible_text(f.read(), "html")))
    for path in sorted(glob.glob("/usr/share/doc/*/copyright")):
        with open(path, encoding="utf-8", errors="replace") as f:
            docs.append(("copyright", f.read()))
    for path in sorted(glob.glob("/usr/share/doc/*/README*")):
        if path.endswith(".gz"):
            with gzip.open(path, "rt", encoding="utf-8", errors="replace") as f:
                docs.append(("readme", f.read(MAX_CHARS)))
        elif os.path.isfile(path):
            with open(path, encoding="utf-8", errors="replace") as f:
                docs.append(("readme", f.read(MAX_CHARS)))
    entries = []
    for path in sorted(glob.glob("/usr/share/doc/*/changelog.Debian.gz")):
        entries.extend(("changelog", e) for e in changelog_entries(path)[:4])
    docs.extend(entries)
    docs = [(k, t[:MAX_CHARS].replace("\0", " ")) for k, t in docs if t.strip()]
    seen, uniq = set(), []
    for k, t in docs:
        if t not in seen:
            seen.add(t)
            uniq.append((k, t))
    return uniq


SENT = re.compile(r"(?<=[.!?])\s+")


def sentences(text):
    return [s for s in SENT.split(text) if s]


def typo(text, rng):
    words = list(re.finditer(r"[A-Za-z]{4,}", text))
    for m in sorted(rng.sample(words, min(len(words), rng.randint(1, 3))), key=lambda m: -m.start()):
        w = m.group(0)
        i = rng.randrange(len(w) - 1)
        w = w[:i] + w[i + 1] + w[i] + w[i + 2:]
        text = text[:m.start()] + w + text[m.end():]
    return text


def insert_sentence(text, rng, pool):
    s = sentences(text)
    donor = sentences(rng.choice(pool)) or ["An extra sentence."]
    s.insert(rng.randrange(len(s) + 1), rng.choice(donor))
    return " ".join(s)


def delete_sentence(text, rng):
    s = sentences(text)
    if len(s) < 2:
        return None
    del s[rng.randrange(len(s))]
    return " ".join(s)


def header_footer(text, rng):
    lines = text.split("\n")
    head = f"Last updated {rng.randint(2019, 2026)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d} by the web team."
    foot = rng.choice(["Copyright (c) The Authors. All rights reserved.",
                       "Generated by docbuild 4.2 - report problems to the maintainers.",
                       "This page was last edited on a Tuesday."])
    if rng.random() < 0.5 and len(lines) > 2:
        lines[0] = head
    else:
        lines.insert(0, head)
    lines.append(foot)
    return "\n".join(lines)


def version_bump(text, rng):
    new = re.sub(r"\b(\d+)\.(\d+)(\.\d+)?\b", lambda m: f"{m.group(1)}.{int(m.group(2)) + 1}{m.group(3) or ''}", text)
    return new if new != text else None


def reorder(text, rng):
    paras = re.split(r"\n\s*\n", text)
    if len(paras) < 3:
        return None
    i, j = rng.sample(range(len(paras)), 2)
    paras[i], paras[j] = paras[j], paras[i]
    return "\n\n".join(paras)


def truncate(text, rng):
    return text[:int(len(text) * rng.uniform(0.6, 0.97))]


EDITS = ("typo", "insert", "delete", "header", "version", "reorder", "truncate")


def edit(text, rng, pool):
    kinds = rng.sample(EDITS, rng.randint(1, 3))
    done = []
    for k in kinds:
        new = {"typo": lambda: typo(text, rng), "insert": lambda: insert_sentence(text, rng, pool),
               "delete": lambda: delete_sentence(text, rng), "header": lambda: header_footer(text, rng),
               "version": lambda: version_bump(text, rng), "reorder": lambda: reorder(text, rng),
               "truncate": lambda: truncate(text, rng)}[k]()
        if new is not None and new != text:
            text = new
            done.append(k)
    return text, "+".join(done) or "none"


def corpus(rng, n_docs=None):
    """n_docs (default QUALITY_ND_DOCS) documents: 60% originals, the rest edited copies.
    Once 60% of n_docs exceeds the real documents on this machine (3,537 with the Debian
    PostgreSQL 15 manual: n_docs above about 5,900), every further document is an edited
    copy of one drawn before it, so a larger n_docs only adds edited copies."""
    n_docs = N_DOCS if n_docs is None else n_docs
    base = base_documents(rng)
    n_base = int(n_docs * (1 - EDIT_SHARE))
    picked = sorted(rng.sample(range(len(base)), min(n_base, len(base))))
    docs = [{"kind": base[i][0], "text": base[i][1], "edit": "original"} for i in picked]
    pool = [d["text"] for d in docs]
    while len(docs) < n_docs:
        src = rng.choice(docs)  # copies of copies too
        text, what = edit(src["text"], rng, pool)
        docs.append({"kind": src["kind"], "text": text, "edit": what})
    return docs


# ---- PostgreSQL --------------------------------------------------------------------
def psql(sql, stdin=None):
    return q.psql(sql, stdin)


def timed(sql):
    t0 = time.time()
    out = psql(sql)
    return out, time.time() - t0


def load(docs):
    psql("CREATE EXTENSION IF NOT EXISTS simhash; DROP TABLE IF EXISTS nd_docs;"
         "CREATE TABLE nd_docs (k text PRIMARY KEY, body text NOT NULL, fp simhash)")
    buf = io.StringIO()
    w = csv.writer(buf)
    for i, d in enumerate(docs):
        w.writerow([f"{i:07d}", d["text"]])
    psql("COPY nd_docs (k, body) FROM STDIN WITH (FORMAT csv)", stdin=buf.getvalue())
    _, t_fp = timed("UPDATE nd_docs SET fp = simhash(body)")
    psql("VACUUM ANALYZE nd_docs")
    out = psql("SELECT k, array_to_string(simhash_shingles(body), ' ') FROM nd_docs ORDER BY k")
    sets = []
    for line in out.splitlines():
        _, arr = line.split("|")
        sets.append(np.array([int(x) for x in arr.split()], dtype=np.int64))
    fps = np.array([int(x) & 0xFFFFFFFFFFFFFFFF for x in psql("SELECT fp::bigint FROM nd_docs ORDER BY k").split()],
                   dtype=np.uint64)
    return sets, fps, t_fp


def pairs_of(out):
    got = {}
    for line in out.splitlines():
        a, b, v = line.split("|")
        got[(int(a), int(b))] = float(v)
    return got


# ---- truth ----------------------------------------------------------------------
def incidence(sets):
    from scipy import sparse
    allh = np.concatenate(sets) if sets else np.zeros(0, dtype=np.int64)
    uniq, ids = np.unique(allh, return_inverse=True)
    indptr = np.zeros(len(sets) + 1, dtype=np.int64)
    indptr[1:] = np.cumsum([len(s) for s in sets])
    x = sparse.csr_matrix((np.ones(len(ids), dtype=np.int32), ids, indptr), shape=(len(sets), len(uniq)))
    return x, ids, indptr


def truth_pairs(sets, lo=min(THRESHOLDS)):
    """{(i, j): J} for i < j with J >= lo, exact, by blocks of X X^T."""
    x, _, _ = incidence(sets)
    xt = x.T.tocsc()
    n = np.array([len(s) for s in sets], dtype=np.int64)
    out = {}
    for start in range(0, len(sets), 500):
        block = (x[start:start + 500] @ xt).tocoo()
        i = block.row + start
        j = block.col
        keep = i < j
        i, j, ov = i[keep], j[keep], block.data[keep].astype(np.int64)
        jac = ov / (n[i] + n[j] - ov)
        sel = jac >= lo - 1e-12
        for a, b, v in zip(i[sel], j[sel], jac[sel]):
            out[(int(a), int(b))] = float(v)
    # documents without shingles: J = 1 with each other
    empty = np.nonzero(n == 0)[0]
    for a in range(len(empty)):
        for b in range(a + 1, len(empty)):
            out[(int(empty[a]), int(empty[b]))] = 1.0
    return out


# ---- MinHash-LSH baseline -----------------------------------------------------------
def optimal_bands(threshold, num_perm=NUM_PERM, fp_weight=0.5, fn_weight=0.5):
    """(b, r) minimising fp_weight * FP area + fn_weight * FN area, as datasketch."""
    from scipy.integrate import quad

    def p_candidate(s, b, r):
        return 1 - (1 - s ** r) ** b

    best, best_err = None, float("inf")
    for b in range(1, num_perm + 1):
        for r in range(1, num_perm // b + 1):
            fp = quad(lambda s: p_candidate(s, b, r), 0.0, threshold)[0]
            fn = quad(lambda s: 1 - p_candidate(s, b, r), threshold, 1.0)[0]
            err = fp * fp_weight + fn * fn_weight
            if err < best_err:
                best, best_err = (b, r), err
    return best


def minhashes(sets, rng_seed=1):
    """(n_docs, NUM_PERM) uint64 MinHash signatures: (a x + b) mod p over shingle ids."""
    _, ids, indptr = incidence(sets)
    p = np.uint64(4294967291)
    r = np.random.RandomState(rng_seed)
    a = r.randint(1, 1 << 31, size=NUM_PERM).astype(np.uint64)
    b = r.randint(0, 1 << 31, size=NUM_PERM).astype(np.uint64)
    ids = ids.astype(np.uint64)
    sig = np.full((len(sets), NUM_PERM), np.iinfo(np.uint64).max, dtype=np.uint64)
    lens = np.diff(indptr)
    nonempty = np.nonzero(lens > 0)[0]
    c = 0
    while c < len(nonempty):  # chunks of about 100,000 shingles: 100 MB of hashes
        e = c + 1
        while e < len(nonempty) and indptr[nonempty[e] + 1] - indptr[nonempty[c]] <= 100_000:
            e += 1
        docs = nonempty[c:e]
        c = e
        lo, hi = indptr[docs[0]], indptr[docs[-1] + 1]
        h = (ids[lo:hi, None] * a[None, :] + b[None, :]) % p
        starts = indptr[docs] - lo
        sig[docs] = np.minimum.reduceat(h, starts, axis=0)
    return sig


def minhash_lsh(sets, th, sig=None):
    """The baseline end to end at threshold th from ready shingle sets: signatures (unless
    given), LSH candidates, kept when the MinHash estimate reaches th.  Returns (pairs,
    candidates, bands, rows, signature seconds, LSH and estimate seconds, signatures)."""
    t0 = time.time()
    if sig is None:
        sig = minhashes(sets)
    t_sig = time.time() - t0
    bands, rws = optimal_bands(th)
    t0 = time.time()
    cand = lsh_candidates(sig, bands, rws)
    est = {c for c in cand if np.mean(sig[c[0]] == sig[c[1]]) >= th}
    return est, len(cand), bands, rws, t_sig, time.time() - t0, sig


def lsh_candidates(sig, bands, rows):
    cand = set()
    for band in range(bands):
        cols = sig[:, band * rows:(band + 1) * rows]
        keys = {}
        for i, row in enumerate(map(bytes, cols)):
            keys.setdefault(row, []).append(i)
        for members in keys.values():
            if len(members) > 1:
                for x in range(len(members)):
                    for y in range(x + 1, len(members)):
                        cand.add((members[x], members[y]))
    return cand


# ---- evaluation -----------------------------------------------------------------------
def prf(pred, truth_set):
    tp = len(pred & truth_set)
    fp = len(pred) - tp
    fn = len(truth_set) - tp
    p = tp / (tp + fp) if tp + fp else 1.0
    r = tp / (tp + fn) if tp + fn else 1.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return p, r, f, tp, fp, fn


def main():
    t_start = time.time()
    os.makedirs(RES, exist_ok=True)
    rng = random.Random(SEED)
    log(f"building a corpus of {N_DOCS} documents")
    docs = corpus(rng)
    log("loading into PostgreSQL, fingerprints and shingle sets")
    sets, fps, t_fp = load(docs)
    sizes = np.array([len(s) for s in sets])
    log(f"  {len(docs)} documents, shingles per document: median {int(np.median(sizes))}, "
        f"10% {int(np.percentile(sizes, 10))}, 90% {int(np.percentile(sizes, 90))}")
    t0 = time.time()
    truth = truth_pairs(sets)
    t_truth = time.time() - t0
    log(f"truth: {len(truth)} pairs with J >= {min(THRESHOLDS)} ({t_truth:.0f} s)")
    scale = 10_000 / len(docs)
    rows = []

    def add(method, th, pred, seconds, note=""):
        ts = {k for k, v in truth.items() if v >= th}
        p, r, f, tp, fp_, fn = prf(pred, ts)
        rows.append({"method": method, "threshold": th, "precision": p, "recall": r, "f1": f, "tp": tp,
                     "fp": fp_, "fn": fn, "positives": len(ts), "seconds_per_10k": seconds * scale, "note": note})
        log(f"  {method:28s} J>={th}: P {p:.3f} R {r:.3f} F1 {f:.3f} ({seconds:.1f} s)")

    # (a) radius alone, through simhash_pairs
    for k in RADII:
        out, secs = timed(f"SELECT * FROM simhash_pairs('nd_docs', 'fp', 'k', {k})")
        pred = {(min(a, b), max(a, b)) for (a, b) in pairs_of(out)}
        for th in THRESHOLDS:
            add(f"simhash radius {k}", th, pred, secs + t_fp)
    # (b) verified
    verified_exact = True
    for th in THRESHOLDS:
        out, secs = timed(f"SET client_min_messages = warning; SET work_mem = '{ND_WORK_MEM}'; "
                          f"SELECT * FROM simhash_near_duplicates('nd_docs', 'fp', 'body', 'k', {th})")
        got = pairs_of(out)
        for key, v in got.items():
            if abs(truth.get(key, -1) - v) > 1e-12:
                verified_exact = False
        add("simhash_near_duplicates", th, set(got), secs)
    # (c) MinHash-LSH
    t0 = time.time()
    sig = minhashes(sets)
    t_sig = time.time() - t0
    for th in THRESHOLDS:
        bands, rws = optimal_bands(th)
        t0 = time.time()
        cand = lsh_candidates(sig, bands, rws)
        t_lsh = time.time() - t0
        add("MinHash-LSH candidates", th, cand, t_sig + t_lsh, f"b={bands}, r={rws}")
        t0 = time.time()
        est = {c for c in cand if np.mean(sig[c[0]] == sig[c[1]]) >= th}
        add("MinHash-LSH + estimate", th, est, t_sig + t_lsh + time.time() - t0, f"b={bands}, r={rws}")

    # bit distance against Jaccard by document length (the data behind "no fixed radius")
    dist_rows = distance_by_length(truth, fps, sizes)
    write_csv("neardup_quality.csv", rows)
    write_csv("neardup_distance.csv", dist_rows)
    write_md(docs, sizes, rows, dist_rows, verified_exact, t_fp, t_truth, time.time() - t_start)
    log(f"done in {time.time() - t_start:.0f} s")


def popcount(x):
    x = x.astype(np.uint64)
    c = np.zeros(len(x), dtype=np.int64)
    for s in range(0, 64, 16):
        c += q.POP16[((x >> np.uint64(s)) & np.uint64(0xFFFF)).astype(np.int64)]
    return c


def distance_by_length(truth, fps, sizes):
    """Per length bucket (smaller set) and Jaccard band: the radius that 95% of the pairs are within."""
    keys = np.array(list(truth.keys()), dtype=np.int64).reshape(-1, 2)
    js = np.array(list(truth.values()))
    d = popcount(fps[keys[:, 0]] ^ fps[keys[:, 1]]) if len(keys) else np.zeros(0)
    small = np.minimum(sizes[keys[:, 0]], sizes[keys[:, 1]]) if len(keys) else np.zeros(0)
    out = []
    buckets = [(0, 20), (20, 100), (100, 500), (500, 2000), (2000, 10 ** 9)]
    for lo, hi in buckets:
        for th in THRESHOLDS:
            sel = (small >= lo) & (small < hi) & (js >= th)
            n = int(sel.sum())
            out.append({"shingles": f"{lo}-{hi if hi < 10 ** 9 else 'max'}", "jaccard_min": th, "pairs": n,
                        "median_distance": float(np.median(d[sel])) if n else float("nan"),
                        "radius_for_95pct": int(np.percentile(d[sel], 95, method="higher")) if n else -1})
    return out


def radius_sentence(dist_rows):
    """What the table says about a fixed radius at J >= 0.8 (computed, not written by hand)."""
    rs = [r["radius_for_95pct"] for r in dist_rows if r["jaccard_min"] == 0.8 and r["pairs"] >= 20]
    if not rs:
        return ""
    return (f"At J ≥ 0.8 the radius that holds 95% of the true pairs is {min(rs)} to {max(rs)} bits "
            f"across the lengths with at least 20 pairs: no radius the permuted tables serve cheaply "
            f"(3 to 8) reaches recall 0.95.")


def write_csv(name, rows):
    with open(os.path.join(RES, name), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)


def write_md(docs, sizes, rows, dist_rows, verified_exact, t_fp, t_truth, total):
    kinds = {}
    for d in docs:
        kinds[d["kind"]] = kinds.get(d["kind"], 0) + 1
    edits = sum(d["edit"] != "original" for d in docs)
    out = ["# Verified near-duplicates: quality (make quality)", "",
           "Generated by `bench/neardup_quality.py` (`bench/quality.sh`); do not edit by hand.", "",
           f"Corpus: {len(docs)} documents ({', '.join(f'{v} {k}' for k, v in sorted(kinds.items()))}); "
           f"{edits} of them are edited copies (typo fixes, inserted/deleted sentences, changed headers and "
           f"footers, version bumps, swapped paragraphs, truncation; 1-3 edits each, copies of copies too). "
           f"Shingles per document (default options): median {int(np.median(sizes))}, 10th percentile "
           f"{int(np.percentile(sizes, 10))}, 90th {int(np.percentile(sizes, 90))}. Seed {SEED}.", "",
           "Truth: exact Jaccard of the `simhash_shingles` sets of every pair, by a sparse matrix product "
           f"(scipy), {t_truth:.0f} s. Times are wall clock on a shared 2-core machine, scaled linearly to "
           f"10,000 documents from this run (pair methods grow faster than linearly). SimHash times include "
           f"the fingerprints ({t_fp:.1f} s here); `simhash_near_duplicates` computes its shingle sets itself "
           f"(work_mem = {ND_WORK_MEM}: the join runs in memory); MinHash-LSH times start from the shingle sets. "
           f"Total run {total:.0f} s.", ""]
    out.append("| method | J ≥ | precision | recall | F1 | positives | s / 10k docs | note |")
    out.append("|---|---|---|---|---|---|---|---|")
    for r in rows:
        out.append(f"| {r['method']} | {r['threshold']} | {r['precision']:.3f} | {r['recall']:.3f} | "
                   f"{r['f1']:.3f} | {r['positives']} | {r['seconds_per_10k']:.1f} | {r['note']} |")
    out += ["", f"Every similarity `simhash_near_duplicates` returned equals the truth: "
                f"{'yes' if verified_exact else 'NO'}.", ""]
    out += ["## Bit distance against Jaccard, by document length", "",
            "For the true pairs at each threshold, by the smaller document's shingle count: the median "
            "SimHash distance and the radius that 95% of the pairs are within. " + radius_sentence(dist_rows), "",
            "| shingles | J ≥ | pairs | median distance | radius for 95% |", "|---|---|---|---|---|"]
    for r in dist_rows:
        out.append(f"| {r['shingles']} | {r['jaccard_min']} | {r['pairs']} | {r['median_distance']:.1f} | "
                   f"{r['radius_for_95pct'] if r['radius_for_95pct'] >= 0 else '–'} |")
    if plot(rows):
        out += ["", "![neardup_f1.png](plots/neardup_f1.png)"]
    path = os.path.join(HERE, "QUALITY.md")
    # bench/boilerplate_quality.py owns the section between its markers: kept
    kept = ""
    if os.path.exists(path):
        old = open(path).read()
        begin, end = "<!-- boilerplate: begin -->", "<!-- boilerplate: end -->"
        if begin in old and end in old:
            kept = "\n" + old[old.index(begin):old.index(end) + len(end)] + "\n"
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n" + kept)


def plot(rows):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for m in sorted({r["method"] for r in rows}, key=lambda m: (not m.startswith("simhash_near"), m)):
        rs = [r for r in rows if r["method"] == m]
        ax.plot([r["threshold"] for r in rs], [r["f1"] for r in rs], marker="o",
                lw=2.5 if m.startswith("simhash_near") else 1, label=m)
    ax.set_xlabel("Jaccard threshold")
    ax.set_ylabel("F1")
    ax.set_ylim(0, 1.02)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="lower left", ncol=2)
    os.makedirs(PLOTS, exist_ok=True)
    fig.tight_layout()
    fig.savefig(os.path.join(PLOTS, "neardup_f1.png"), dpi=90)
    plt.close(fig)
    return True


def timing_only():
    """QUALITY_ND_TIMING_ONLY=1: end-to-end time of simhash_near_duplicates and
    MinHash-LSH (+ estimate) at QUALITY_ND_TIMING_THRESHOLDS (default 0.8) on
    QUALITY_ND_DOCS documents, without the all-pairs truth (which does not
    scale); pair counts only.  Writes $BENCH_RESULTS/neardup_timing.md."""
    ths = [float(x) for x in os.environ.get("QUALITY_ND_TIMING_THRESHOLDS", "0.8").split(",")]
    rng = random.Random(SEED)
    docs = corpus(rng)
    sets, _, _ = load(docs)
    n_sh = sum(len(s) for s in sets)
    lines = [f"{len(docs)} documents, {n_sh} shingles; work_mem {ND_WORK_MEM} for simhash_near_duplicates", "",
             "| method | J ≥ | pairs | seconds |", "|---|---|---|---|"]
    for th in ths:
        out, secs = timed(f"SET client_min_messages = warning; SET work_mem = '{ND_WORK_MEM}'; "
                          f"SELECT count(*) FROM simhash_near_duplicates('nd_docs', 'fp', 'body', 'k', {th})")
        lines.append(f"| simhash_near_duplicates | {th} | {out.strip()} | {secs:.1f} |")
        log(lines[-1])
    sig, t_sig = None, 0.0
    for th in ths:
        est, _, bands, rws, t_s, t_lsh, sig = minhash_lsh(sets, th, sig)
        t_sig += t_s
        secs = t_sig + t_lsh
        lines.append(f"| MinHash-LSH + estimate (b={bands}, r={rws}) | {th} | {len(est)} | {secs:.1f} |")
        log(lines[-1])
    with open(os.path.join(RES, "neardup_timing.md"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    if os.environ.get("QUALITY_ND_TIMING_ONLY"):
        os.makedirs(RES, exist_ok=True)
        timing_only()
    else:
        main()
