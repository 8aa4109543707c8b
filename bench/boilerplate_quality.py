"""boilerplate_quality.py — does boilerplate weighting bring near-duplicates
back?  (bench/boilerplate.sh; the section "Boilerplate weighting" of
bench/QUALITY.md)

Two populations, both from the documents `make demo` loads (the PostgreSQL
HTML documentation and Debian's /usr/share/doc/*/copyright files):

* sites: the main text of sampled documentation pages (html_text of the page
  without its navheader/navfooter) published on five web sites, each with its
  own navigation bar and licence footer (a real licence from
  /usr/share/common-licenses, 80-250 words) in plain <div>s, the markup that
  html_text cannot recognise as boilerplate.  Half of the pages have an edited
  copy (a typo, a deleted or inserted sentence, a word replaced in 20), on the
  same site or on another one.
* demo: the demo corpus as it is (every documentation page and copyright file).

Truth: the exact Jaccard similarity of the word 3-shingle sets
(simhash_shingles) of the main texts: the article without the site's
navigation and footer; for the demo, the page without navheader/navfooter,
and a copyright file whole.  Compared at radius 0..8: simhash_html(page)
(unweighted) and simhash_weighted(html_text(page), df, max_df, idf) with the document
frequencies simhash_df_build counted on the same pages (no vote above
max_df; below it uniform weights, or IDF); and,
as the ceiling, simhash of the main text alone.

Deterministic (fixed seed, sorted inputs).  Needs psql on a cluster with the
extension ($TMPC_BIN/psql as bench/boilerplate.sh sets up), /usr/bin/python3
with numpy and scipy.  Writes $BENCH_RESULTS/boilerplate.csv and .md, and the
section between the boilerplate markers of bench/QUALITY.md."""
import csv
import glob
import html
import io
import os
import random
import re
import subprocess
import sys
import time

import numpy as np
from scipy import sparse

HERE = os.path.dirname(os.path.abspath(__file__))
RES = os.environ.get("BENCH_RESULTS", os.path.join(HERE, "results"))
HTML_DIR = os.environ.get("CORPUS", "/usr/share/doc/postgresql-doc-15/html")
LICENSES = "/usr/share/common-licenses"
PSQL = os.path.join(os.environ["TMPC_BIN"], "psql") if os.environ.get("TMPC_BIN") else "psql"
SEED = 20261126
ARTICLES = int(os.environ.get("BOILER_ARTICLES", "1000"))
THRESHOLDS = (0.5, 0.7, 0.8, 0.9)
RADII = range(0, 9)
# (max_df, idf) of the weighted fingerprints compared
MAX_DFS = ((0.1, False), (0.05, False), (0.5, False), (0.1, True), (0.5, True))
SITES = ("Acme Databases", "Northwind Docs", "Example Wiki", "Planet Postgres Mirror", "Docs Hub")
MENU = ("Home Products Solutions Pricing Documentation Downloads Community Blog Events Careers Partners "
        "Support Contact About Login Register Search Forums News Press Training Certification Status "
        "Security Privacy Terms Cookies Newsletter Subscribe Feedback Sitemap Help Tutorials").split()
LICENSE_FILES = ("GPL-2", "Apache-2.0", "GFDL-1.3", "MPL-2.0", "LGPL-2.1")
NAV = re.compile(r'<div class="nav(header|footer)">.*?</div>', re.S)
SENT = re.compile(r"(?<=[.!?])\s+")


def log(msg):
    print(msg, flush=True)


def psql(sql, stdin=None):
    r = subprocess.run([PSQL, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-At", "-c", sql],
                       input=stdin, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"psql failed: {r.stderr}")
    return r.stdout


def copy_in(table, rows):
    buf = io.StringIO()
    csv.writer(buf).writerows(rows)
    psql(f"COPY {table} FROM STDIN WITH (FORMAT csv)", stdin=buf.getvalue())


# ---- documents -------------------------------------------------------------------
def read(path):
    with open(path, "rb") as f:
        data = f.read()
    if len(data) > 500_000 or b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def demo_documents():
    """(key, page, main page) of the demo corpus: main = page without navheader/navfooter."""
    out = []
    for path in sorted(glob.glob(os.path.join(HTML_DIR, "*.html"))):
        raw = read(path)
        if raw is not None:
            out.append(("pgdoc/" + os.path.basename(path), raw, NAV.sub("", raw)))
    for path in sorted(glob.glob("/usr/share/doc/*/copyright")):
        raw = read(path)
        if raw is not None:
            out.append(("copyright/" + path.split("/")[-2], raw, raw))
    return out


def site_chrome(rng):
    """(navigation html, footer html) of each site: menu links, a licence excerpt."""
    chrome = []
    for i, name in enumerate(SITES):
        menu = rng.sample(MENU, rng.randint(12, 30))
        nav = ('<div class="menu"><a href="/">' + html.escape(name) + "</a> " +
               " ".join(f'<a href="/{m.lower()}">{m}</a>' for m in menu) + "</div>")
        words = read(os.path.join(LICENSES, LICENSE_FILES[i])).split()
        start = rng.randrange(0, max(1, len(words) - 300))
        excerpt = " ".join(words[start:start + rng.randint(80, 250)])
        foot = (f'<div class="bottom"><p>Copyright 2026 {html.escape(name)}. All rights reserved.</p>'
                f"<p>{html.escape(excerpt)}</p></div>")
        chrome.append((nav, foot))
    return chrome


def edit(text, rng, pool):
    """A near-duplicate: one small edit of a kind a copy really gets."""
    kind = rng.choice(("typo", "delete", "insert", "replace"))
    if kind == "typo":
        words = list(re.finditer(r"[A-Za-z]{4,}", text))
        for m in sorted(rng.sample(words, min(len(words), rng.randint(1, 3))), key=lambda m: -m.start()):
            w = m.group(0)
            i = rng.randrange(len(w) - 1)
            text = text[:m.start()] + w[:i] + w[i + 1] + w[i] + w[i + 2:] + text[m.end():]
        return text
    sents = [s for s in SENT.split(text) if s]
    if kind == "delete" and len(sents) > 2:
        del sents[rng.randrange(len(sents))]
        return " ".join(sents)
    if kind == "insert":
        donor = [s for s in SENT.split(rng.choice(pool)) if s] or ["An extra sentence."]
        sents.insert(rng.randrange(len(sents) + 1), rng.choice(donor))
        return " ".join(sents)
    words = text.split(" ")
    for i in range(0, len(words), 20):
        j = rng.randrange(i, min(i + 20, len(words)))
        words[j] = rng.choice(("alpha", "beta", "gamma", "delta", "epsilon"))
    return " ".join(words)


def page(main, chrome):
    nav, foot = chrome
    body = "".join(f"<p>{html.escape(p)}</p>" for p in main.split("\n") if p.strip())
    return f"<html><head><title>t</title></head><body>{nav}<div class=\"content\">{body}</div>{foot}</body></html>"


def sites_documents(mains, rng):
    """(key, page, main text) on five sites; half of the articles with an edited copy."""
    chrome = site_chrome(rng)
    out = []
    pool = [m for _, m in mains]
    for i, (key, main) in enumerate(mains):
        site = rng.randrange(len(SITES))
        out.append((f"a{i:05d}/orig", page(main, chrome[site]), main))
        if rng.random() < 0.5:
            other = site if rng.random() < 0.5 else (site + rng.randrange(1, len(SITES))) % len(SITES)
            copy = edit(main, rng, pool)
            out.append((f"a{i:05d}/copy-{'same' if other == site else 'other'}", page(copy, chrome[other]), copy))
    return out


# ---- truth and fingerprints ------------------------------------------------------------
def truth_pairs(sets, lo):
    """{(i, j): J} for i < j with J >= lo, exact, by blocks of X X^T."""
    allh = np.concatenate(sets)
    _, ids = np.unique(allh, return_inverse=True)
    indptr = np.zeros(len(sets) + 1, dtype=np.int64)
    indptr[1:] = np.cumsum([len(s) for s in sets])
    x = sparse.csr_matrix((np.ones(len(ids), dtype=np.int32), ids, indptr), shape=(len(sets), ids.max() + 1))
    xt = x.T.tocsc()
    n = np.array([len(s) for s in sets], dtype=np.int64)
    out = {}
    for start in range(0, len(sets), 500):
        block = (x[start:start + 500] @ xt).tocoo()
        i, j = block.row + start, block.col
        keep = i < j
        i, j, ov = i[keep], j[keep], block.data[keep].astype(np.int64)
        jac = ov / (n[i] + n[j] - ov)
        for a, b, v in zip(i[jac >= lo], j[jac >= lo], jac[jac >= lo]):
            out[(int(a), int(b))] = float(v)
    empty = np.nonzero(n == 0)[0]
    for a in range(len(empty)):
        for b in range(a + 1, len(empty)):
            out[(int(empty[a]), int(empty[b]))] = 1.0
    return out


def column(sql):
    return [line for line in psql(sql).split("\n") if line != ""]


def fingerprints(sql):
    return np.array([int(x) & 0xFFFFFFFFFFFFFFFF for x in column(sql)], dtype=np.uint64)


def close_pairs(fps, radius):
    """{(i, j): distance} for i < j within the largest radius."""
    out = {}
    for i in range(len(fps) - 1):
        x = np.bitwise_xor(fps[i + 1:], fps[i])
        d = np.zeros(len(x), dtype=np.int64)
        for shift in range(0, 64, 8):
            d += POP8[((x >> np.uint64(shift)) & np.uint64(0xFF)).astype(np.int64)]
        for j in np.nonzero(d <= radius)[0]:
            out[(i, i + 1 + int(j))] = int(d[j])
    return out


POP8 = np.array([bin(b).count("1") for b in range(256)], dtype=np.int64)


def scores(close, truth, radius, threshold):
    pred = {p for p, d in close.items() if d <= radius}
    pos = {p for p, j in truth.items() if j >= threshold}
    tp = len(pred & pos)
    p = tp / len(pred) if pred else 1.0
    r = tp / len(pos) if pos else 1.0
    f1 = 2 * p * r / (p + r) if p + r else 0.0
    return p, r, f1, len(pos), len(pred)


# ---- one population -------------------------------------------------------------------
def measure(name, docs):
    """Loads (key, page, main) rows, builds the df table, scores each fingerprint."""
    psql("DROP TABLE IF EXISTS bp_pages CASCADE; DROP TABLE IF EXISTS bp_pages_text_simhash_df;" +
         "CREATE TABLE bp_pages (k text PRIMARY KEY, page text NOT NULL, main text NOT NULL)")
    copy_in("bp_pages", docs)
    psql("CREATE VIEW bp_pages_text AS SELECT k, html_text(page) AS body FROM bp_pages")
    t0 = time.time()
    psql("SET client_min_messages = warning; SELECT simhash_df_build('bp_pages_text', 'body')")
    t_build = time.time() - t0
    n_df = int(column("SELECT count(*) FROM bp_pages_text_simhash_df")[0]) - 1
    order = "ORDER BY k"
    sets = [np.array([int(x) for x in s.split()], dtype=np.int64) if s else np.zeros(0, dtype=np.int64)
            for s in (line.split("|")[1] for line in psql(
                f"SELECT k, array_to_string(simhash_shingles(html_text(main)), ' ') FROM bp_pages {order}")
                .split("\n") if line)]
    truth = truth_pairs(sets, min(THRESHOLDS))
    methods = [("unweighted: simhash_html(page)", f"SELECT simhash_html(page)::bigint FROM bp_pages {order}")]
    for m, idf in MAX_DFS:
        methods.append((f"weighted, max_df {m}{', idf' if idf else ''}",
                        f"SELECT simhash_weighted(html_text(page), 'bp_pages_text_simhash_df', {m}, {idf})::bigint "
                        f"FROM bp_pages {order}"))
    methods.append(("ceiling: simhash of the main text", f"SELECT simhash(html_text(main))::bigint FROM bp_pages {order}"))
    rows = []
    for label, sql in methods:
        close = close_pairs(fingerprints(sql), max(RADII))
        for radius in RADII:
            for th in THRESHOLDS:
                p, r, f1, pos, pred = scores(close, truth, radius, th)
                rows.append({"population": name, "method": label, "radius": radius, "threshold": th,
                             "precision": p, "recall": r, "f1": f1, "positives": pos, "predicted": pred})
    info = {"docs": len(docs), "df_shingles": n_df, "build_s": t_build}
    return rows, info


def speed():
    """simhash_html against simhash_weighted(html_text), paired runs, on bp_pages."""
    ratios = []
    for _ in range(5):
        t = []
        for sql in ("SELECT count(simhash_html(page)) FROM bp_pages",
                    "SELECT count(simhash_weighted(html_text(page), 'bp_pages_text_simhash_df')) FROM bp_pages"):
            t0 = time.time()
            psql(sql)
            t.append(time.time() - t0)
        ratios.append(t[1] / t[0])
    ratios.sort()
    return ratios[len(ratios) // 2], ratios[0], ratios[-1]


def main():
    os.makedirs(RES, exist_ok=True)
    rng = random.Random(SEED)
    psql("CREATE EXTENSION IF NOT EXISTS simhash")
    demo = demo_documents()
    log(f"demo corpus: {len(demo)} documents")
    # Article texts: the main text of documentation pages of 30 to 3000 words.
    psql("DROP TABLE IF EXISTS bp_src; CREATE TABLE bp_src (k text PRIMARY KEY, page text)")
    copy_in("bp_src", [(k, m) for k, _, m in demo if k.startswith("pgdoc/")])
    out = psql("COPY (SELECT k, html_text(page) FROM bp_src WHERE array_length(regexp_split_to_array("
               "html_text(page), '\\s+'), 1) BETWEEN 30 AND 3000 ORDER BY k) TO STDOUT WITH (FORMAT csv)")
    mains = [(k, m) for k, m in csv.reader(io.StringIO(out))]
    mains = sorted(rng.sample(mains, min(ARTICLES, len(mains))))
    sites = sites_documents(mains, rng)
    log(f"sites: {len(sites)} pages of {len(mains)} articles")
    all_rows, infos = [], {}
    t0 = time.time()
    rows, infos["sites"] = measure("sites", sites)
    all_rows += rows
    ratio = speed()
    rows, infos["demo"] = measure("demo", demo)
    all_rows += rows
    log(f"measured in {time.time() - t0:.0f} s")
    with open(os.path.join(RES, "boilerplate.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(all_rows[0]))
        w.writeheader()
        w.writerows(all_rows)
    write_md(all_rows, infos, ratio, sites)


def pick(rows, pop, method, radius, th):
    return next(r for r in rows if r["population"] == pop and r["method"] == method
                and r["radius"] == radius and r["threshold"] == th)


def write_md(rows, infos, ratio, sites):
    methods = list(dict.fromkeys(r["method"] for r in rows))
    copies = sum(k.endswith("copy-same") for k, _, _ in sites), sum(k.endswith("copy-other") for k, _, _ in sites)
    out = ["## Boilerplate weighting (simhash_df_build, simhash_weighted)", "",
           "Generated by `bench/boilerplate_quality.py`; reproduce with `bash bench/boilerplate.sh` "
           f"(seed {SEED}, {ARTICLES} articles).", "",
           f"*sites*: {infos['sites']['docs']} pages: {ARTICLES} PostgreSQL documentation articles (main text "
           f"of the page) on {len(SITES)} sites, each site with its own menu bar and licence footer in plain "
           f"`<div>`s (80-250 words of a licence from /usr/share/common-licenses); {copies[0]} edited copies "
           f"on the same site, {copies[1]} on another site. *demo*: the `make demo` corpus as it is, "
           f"{infos['demo']['docs']} documents (documentation pages and copyright files). Truth: exact Jaccard of "
           "the word 3-shingle sets of the main text (the article; the documentation page without its "
           "navheader/navfooter; a copyright file whole). The df tables (min_df 2) hold "
           f"{infos['sites']['df_shingles']} and {infos['demo']['df_shingles']} shingles, built in "
           f"{infos['sites']['build_s']:.1f} s and {infos['demo']['build_s']:.1f} s.", "",
           f"Speed: `simhash_weighted(html_text(page), df)` takes {ratio[0]:.2f}x the time of "
           f"`simhash_html(page)` on the *sites* pages (median of 5 paired runs, range {ratio[1]:.2f}-{ratio[2]:.2f}).",
           "", "At radius 3:", "",
           "| population | method | J ≥ | precision | recall | F1 | true pairs | pairs within 3 |",
           "|---|---|---|---|---|---|---|---|"]
    for pop in ("sites", "demo"):
        for m in methods:
            for th in THRESHOLDS:
                r = pick(rows, pop, m, 3, th)
                out.append(f"| {pop} | {m} | {th} | {r['precision']:.3f} | {r['recall']:.3f} | {r['f1']:.3f} | "
                           f"{r['positives']} | {r['predicted']} |")
    out += ["", "Best F1 at J ≥ 0.8 over radius 0..8:", "", "| population | method | radius | precision | recall | F1 |",
            "|---|---|---|---|---|---|"]
    for pop in ("sites", "demo"):
        for m in methods:
            best = max((pick(rows, pop, m, k, 0.8) for k in RADII), key=lambda r: r["f1"])
            out.append(f"| {pop} | {m} | {best['radius']} | {best['precision']:.3f} | {best['recall']:.3f} | "
                       f"{best['f1']:.3f} |")
    text = "\n".join(out) + "\n"
    with open(os.path.join(RES, "boilerplate.md"), "w") as f:
        f.write(text)
    path = os.path.join(HERE, "QUALITY.md")
    begin, end = "<!-- boilerplate: begin -->", "<!-- boilerplate: end -->"
    old = open(path).read() if os.path.exists(path) else ""
    block = f"{begin}\n{text}{end}\n"
    if begin in old and end in old:
        new = old[:old.index(begin)] + block + old[old.index(end) + len(end) + 1:]
    else:
        new = old.rstrip("\n") + "\n\n" + block
    with open(path, "w") as f:
        f.write(new)
    log(text)


if __name__ == "__main__":
    main()
