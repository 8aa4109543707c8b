"""quality.py — does "distance <= k" mean "near-duplicate"?  (make quality)

Ground truth is the exact Jaccard similarity of word 3-shingle sets of the
visible text.  Two populations of pairs:

* natural: every pair of distinct documents of a real corpus (the PostgreSQL
  HTML documentation and Debian's /usr/share/doc/*/copyright files; texts
  that are byte-identical are kept once).  Jaccard is computed exactly for
  every pair whose shingle-set sizes are within a factor 0.8 of each other;
  the others cannot reach 0.8 (J <= min/max) and are exact negatives.
* synthetic: sampled real pages and their edited copies (delete / insert /
  replace 1, 5, 10, 20% of the words, reorder paragraphs, change the
  navigation boilerplate only), each copy paired with its original.

Fingerprints are computed by the extension in a throwaway cluster (psql on
$PGHOST, as set up by bench/quality.sh) for every method installed; precision
and recall of "distance <= k" for k = 0..8 against "Jaccard >= 0.8" and
">= 0.9" go to bench/results/quality_*.csv, plots to bench/plots/ and the
text to bench/results/quality.md (included in bench/REPORT.md).

Deterministic: fixed seeds, sorted inputs.  Needs Debian's python3,
python3-numpy and python3-matplotlib (no pip)."""
import csv
import glob
import hashlib
import html.parser
import io
import os
import random
import re
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
RES = os.environ.get("BENCH_RESULTS", os.path.join(HERE, "results"))
PLOTS = os.path.join(HERE, "plots")
HTML_DIR = os.environ.get("CORPUS", "/usr/share/doc/postgresql-doc-15/html")
SEED = 20261123
MAX_BYTES = 500_000
SOURCES_HTML = int(os.environ.get("QUALITY_HTML_SOURCES", "40"))
SOURCES_LICENSE = int(os.environ.get("QUALITY_LICENSE_SOURCES", "20"))
LEVELS = (1, 5, 10, 20)
KS = range(0, 9)
THRESHOLDS = (0.8, 0.9)
WORD = re.compile(r"[^\W_]+")
PSQL = os.path.join(os.environ["TMPC_BIN"], "psql") if os.environ.get("TMPC_BIN") else "psql"


def log(msg):
    print(msg, flush=True)


# ---- documents ---------------------------------------------------------------
class Visible(html.parser.HTMLParser):
    """Visible text of a page: no head, script or style; block elements end a paragraph."""
    BLOCK = {"p", "div", "h1", "h2", "h3", "h4", "h5", "h6", "li", "tr", "pre", "br", "table",
             "dl", "dt", "dd", "ul", "ol", "blockquote", "hr", "section", "article", "td", "th", "caption"}
    HIDDEN = {"head", "script", "style", "title"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.out, self.hidden = [], 0

    def handle_starttag(self, tag, attrs):
        if tag in self.HIDDEN:
            self.hidden += 1
        elif tag in self.BLOCK:
            self.out.append("\n\n")

    def handle_endtag(self, tag):
        if tag in self.HIDDEN:
            self.hidden = max(0, self.hidden - 1)
        elif tag in self.BLOCK:
            self.out.append("\n\n")

    def handle_data(self, data):
        if not self.hidden:
            self.out.append(data)


def visible_text(raw, kind):
    if kind != "html":
        return raw
    p = Visible()
    p.feed(raw)
    p.close()
    text = "".join(p.out)
    text = re.sub(r"[ \t\r\f\v]+", " ", text)
    return re.sub(r"\s*\n\s*\n\s*", "\n\n", text).strip()


def load_corpus():
    docs = []
    for path in sorted(glob.glob(os.path.join(HTML_DIR, "*.html"))):
        docs.append(("html", "pgdoc/" + os.path.basename(path), path))
    for path in sorted(glob.glob("/usr/share/doc/*/copyright")):
        docs.append(("license", "copyright/" + path.split("/")[-2], path))
    out = []
    for kind, name, path in docs:
        with open(path, "rb") as f:
            data = f.read()
        if len(data) > MAX_BYTES or b"\0" in data:
            continue
        try:
            raw = data.decode("utf-8")
        except UnicodeDecodeError:
            continue
        out.append({"kind": kind, "name": name, "raw": raw})
    return out


# ---- synthetic edits ---------------------------------------------------------
TAG = re.compile(r"(<[^>]*>)")


def segments(raw, kind):
    """Pieces of the document; (text, editable).  Only text outside tags,
    head, script and style is edited."""
    if kind != "html":
        return [[raw, True]]
    out, hidden = [], 0
    for piece in TAG.split(raw):
        if piece.startswith("<"):
            m = re.match(r"<\s*(/?)\s*([a-zA-Z0-9]+)", piece)
            if m and m.group(2).lower() in ("head", "script", "style", "title"):
                hidden += -1 if m.group(1) else 1
            out.append([piece, False])
        else:
            out.append([piece, hidden <= 0])
    return out


def edit_words(raw, kind, op, pct, rng, vocab):
    segs = segments(raw, kind)
    spots = [(si, m.start(), m.end()) for si, (text, ok) in enumerate(segs) if ok
             for m in WORD.finditer(text)]
    n = max(1, round(len(spots) * pct / 100))
    chosen = sorted(rng.sample(spots, min(n, len(spots))), reverse=True)
    for si, a, b in chosen:  # right to left keeps earlier offsets valid
        text = segs[si][0]
        if op == "delete":
            text = text[:a] + text[b:].lstrip(" ") if b < len(text) else text[:a]
        elif op == "insert":
            text = text[:b] + " " + rng.choice(vocab) + text[b:]
        else:
            text = text[:a] + rng.choice(vocab) + text[b:]
        segs[si][0] = text
    return "".join(s[0] for s in segs)


PARA = re.compile(r"<p\b[^>]*>.*?</p>", re.S)


def reorder_paragraphs(raw, kind, rng):
    if kind == "html":
        paras = PARA.findall(raw)
        if len(paras) < 3:
            return None
        order = paras[:]
        rng.shuffle(order)
        it = iter(order)
        return PARA.sub(lambda m: next(it), raw)
    paras = re.split(r"\n\s*\n", raw)
    if len(paras) < 3:
        return None
    rng.shuffle(paras)
    return "\n\n".join(paras)


NAV = re.compile(r'<div class="nav(header|footer)">.*?</div>', re.S)


def swap_boilerplate(raw, other):
    """The page with another page's navigation header and footer."""
    theirs = {m.group(1): m.group(0) for m in NAV.finditer(other)}
    if len(theirs) < 2 or len(NAV.findall(raw)) < 2:
        return None
    new = NAV.sub(lambda m: theirs[m.group(1)], raw)
    return new if new != raw else None


def make_edits(docs, rng):
    """(source index, edit, level, raw) for sampled sources."""
    words = {}
    for d in docs:
        for w in WORD.findall(d["text"]):
            words[w] = 1
    vocab = sorted(words)
    def big(kind):
        return [i for i, d in enumerate(docs) if d["kind"] == kind and d["ntokens"] >= 300]
    sources = (sorted(rng.sample(big("html"), min(SOURCES_HTML, len(big("html"))))) +
               sorted(rng.sample(big("license"), min(SOURCES_LICENSE, len(big("license"))))))
    html_docs = [i for i, d in enumerate(docs) if d["kind"] == "html"]
    edits = []
    for s in sources:
        d = docs[s]
        for op in ("delete", "insert", "replace"):
            for pct in LEVELS:
                edits.append((s, op, pct, edit_words(d["raw"], d["kind"], op, pct, rng, vocab)))
        r = reorder_paragraphs(d["raw"], d["kind"], rng)
        if r is not None:
            edits.append((s, "reorder", 0, r))
        if d["kind"] == "html":
            b = swap_boilerplate(d["raw"], docs[rng.choice(html_docs)]["raw"])
            if b is not None:
                edits.append((s, "boilerplate", 0, b))
    return sources, edits


# ---- ground truth --------------------------------------------------------------
class Shingler:
    """Word 3-shingles of casefolded word tokens, interned to ints."""
    def __init__(self):
        self.ids = {}

    def __call__(self, text):
        toks = [t.casefold() for t in WORD.findall(text)]
        if len(toks) < 3:
            grams = [tuple(toks)] if toks else []
        else:
            grams = list(zip(toks, toks[1:], toks[2:]))
        ids = self.ids
        return frozenset(ids.setdefault(g, len(ids)) for g in grams), len(toks)


def jaccard(a, b):
    if not a and not b:
        return 1.0
    inter = len(a & b)
    return inter / (len(a) + len(b) - inter)


# ---- fingerprints through the extension -------------------------------------------
def methods_available():
    psql("CREATE EXTENSION IF NOT EXISTS simhash")
    out = psql("SELECT proname FROM pg_proc WHERE proname IN ('simhash_html', 'simhash_seomoz')")
    have = set(out.split())
    m = [("text_w1", "simhash(text, shingle => 1)"),
         ("text_w2", "simhash(text, shingle => 2)"),
         ("text_w3 (default)", "simhash(text)"),
         ("text_w4", "simhash(text, shingle => 4)"),
         ("text_chars", "simhash(text, tokens => 'chars')"),
         ("text_w3_raw_html", "simhash(raw)"),
         ("tsvector", "simhash(to_tsvector('english', text))")]
    if "simhash_html" in have:
        m.append(("simhash_html", "simhash_html(raw)"))
    if "simhash_seomoz" in have:
        m.append(("simhash_seomoz", "simhash_seomoz(text)"))
    return m, have


def psql(sql, stdin=None):
    r = subprocess.run([PSQL, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-At", "-c", sql],
                       input=stdin, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"psql failed: {r.stderr}")
    return r.stdout


def fingerprints(rows, methods):
    """rows: (id, raw, text).  Returns {method: np.uint64 array indexed by id}."""
    psql("CREATE EXTENSION IF NOT EXISTS simhash; DROP TABLE IF EXISTS qdocs;"
         "CREATE TABLE qdocs (id int PRIMARY KEY, raw text NOT NULL, text text NOT NULL)")
    buf = io.StringIO()
    w = csv.writer(buf)
    for r in rows:
        w.writerow(r)
    psql("COPY qdocs FROM STDIN WITH (FORMAT csv)", stdin=buf.getvalue())
    cols = ", ".join(f"({expr})::bigint" for _, expr in methods)
    out = psql(f"SELECT id, {cols} FROM qdocs ORDER BY id")
    n = len(rows)
    fps = {name: np.zeros(n, dtype=np.uint64) for name, _ in methods}
    for line in out.splitlines():
        parts = line.split("|")
        i = int(parts[0])
        for (name, _), v in zip(methods, parts[1:]):
            fps[name][i] = np.uint64(int(v) & 0xFFFFFFFFFFFFFFFF)
    return fps


POP16 = np.array([bin(i).count("1") for i in range(1 << 16)], dtype=np.uint8)


def distances(fp, a, b):
    x = fp[a] ^ fp[b]
    d = np.zeros(len(x), dtype=np.uint8)
    for shift in (0, 16, 32, 48):
        d += POP16[((x >> np.uint64(shift)) & np.uint64(0xFFFF)).astype(np.int64)]
    return d


# ---- evaluation ------------------------------------------------------------------------
def pr_counts(dist, truth):
    """Per k: tp, fp, fn for prediction dist <= k against boolean truth."""
    out = []
    for k in KS:
        pred = dist <= k
        tp = int(np.sum(pred & truth))
        fp = int(np.sum(pred & ~truth))
        fn = int(np.sum(~pred & truth))
        out.append((k, tp, fp, fn))
    return out


def prf(tp, fp, fn):
    p = tp / (tp + fp) if tp + fp else float("nan")
    r = tp / (tp + fn) if tp + fn else float("nan")
    f = 2 * p * r / (p + r) if tp else 0.0
    return p, r, f


def wilson(x, n, z=1.96):
    """95% Wilson score interval of a proportion x/n."""
    if n == 0:
        return float("nan"), float("nan")
    p = x / n
    c = (p + z * z / (2 * n)) / (1 + z * z / n)
    h = z * ((p * (1 - p) / n + z * z / (4 * n * n)) ** 0.5) / (1 + z * z / n)
    return max(0.0, c - h), min(1.0, c + h)


def main():
    t0 = time.time()
    os.makedirs(RES, exist_ok=True)
    rng = random.Random(SEED)
    log("reading the corpus")
    docs = load_corpus()
    shingle = Shingler()
    seen, uniq = {}, []
    for d in docs:
        d["text"] = visible_text(d["raw"], d["kind"])
        key = hashlib.sha1(d["text"].encode()).hexdigest()
        if key in seen:
            continue
        seen[key] = 1
        d["sh"], d["ntokens"] = shingle(d["text"])
        uniq.append(d)
    docs = uniq
    nh = sum(d["kind"] == "html" for d in docs)
    log(f"  {len(docs)} distinct documents ({nh} HTML pages, {len(docs) - nh} license files)")
    sources, edits = make_edits(docs, rng)
    log(f"  {len(edits)} edited copies of {len(sources)} pages")

    rows = [(i, d["raw"], d["text"]) for i, d in enumerate(docs)]
    eds = []
    for j, (s, op, pct, raw) in enumerate(edits):
        kind = docs[s]["kind"]
        text = visible_text(raw, kind)
        sh, _ = shingle(text)
        rows.append((len(docs) + j, raw, text))
        eds.append({"src": s, "op": op, "pct": pct, "kind": kind, "j": jaccard(docs[s]["sh"], sh)})

    methods, have = methods_available()
    log(f"fingerprinting with {len(methods)} methods in PostgreSQL")
    fps = fingerprints(rows, methods)

    # natural pairs: all pairs of distinct documents
    n = len(docs)
    a, b = np.triu_indices(n, k=1)
    sizes = np.array([len(d["sh"]) for d in docs], dtype=np.float64)
    lo, hi = np.minimum(sizes[a], sizes[b]), np.maximum(sizes[a], sizes[b])
    cand = np.nonzero(lo >= 0.8 * hi)[0]
    log(f"natural pairs: {len(a)}; exact Jaccard on {len(cand)} with comparable sizes")
    jn = np.zeros(len(a))
    for c in cand:
        jn[c] = jaccard(docs[a[c]]["sh"], docs[b[c]]["sh"])
    # synthetic pairs: (original, edited copy)
    sa = np.array([e["src"] for e in eds], dtype=np.int64)
    sb = np.arange(n, n + len(eds), dtype=np.int64)
    js = np.array([e["j"] for e in eds])

    pops = {"natural": (a, b, jn), "synthetic": (sa, sb, js),
            "all": (np.concatenate([a, sa]), np.concatenate([b, sb]), np.concatenate([jn, js]))}
    pr_rows = []
    dist_cache = {}
    for name, _ in methods:
        for pop, (pa, pb, pj) in pops.items():
            d = distances(fps[name], pa, pb)
            dist_cache[(name, pop)] = d
            for th in THRESHOLDS:
                truth = pj >= th
                for k, tp, fp_, fn in pr_counts(d, truth):
                    p, r, f = prf(tp, fp_, fn)
                    rlo, rhi = wilson(tp, tp + fn)
                    pr_rows.append({"method": name, "population": pop, "jaccard_min": th, "k": k,
                                    "pairs": len(pa), "positives": int(truth.sum()), "tp": tp, "fp": fp_,
                                    "fn": fn, "precision": f"{p:.4f}", "recall": f"{r:.4f}", "f1": f"{f:.4f}",
                                    "recall_lo95": f"{rlo:.4f}", "recall_hi95": f"{rhi:.4f}"})
    write_csv("quality_pr.csv", pr_rows)

    edit_rows = []
    groups = sorted({(e["op"], e["pct"]) for e in eds},
                    key=lambda g: (["delete", "insert", "replace", "reorder", "boilerplate"].index(g[0]), g[1]))
    for name, _ in methods:
        d = dist_cache[(name, "synthetic")]
        for op, pct in groups:
            idx = [i for i, e in enumerate(eds) if e["op"] == op and e["pct"] == pct]
            dd = d[idx]
            edit_rows.append({"method": name, "edit": op, "percent": pct, "pairs": len(idx),
                              "mean_jaccard": f"{np.mean(js[idx]):.3f}",
                              "median_distance": f"{np.median(dd):.1f}",
                              "p90_distance": f"{np.percentile(dd, 90):.1f}",
                              "share_le3": f"{np.mean(dd <= 3):.3f}"})
    write_csv("quality_edits.csv", edit_rows)

    # distance histogram of natural pairs (how far unrelated documents are)
    hist_rows = []
    for name, _ in methods:
        d = dist_cache[(name, "natural")]
        counts = np.bincount(d, minlength=65)
        for k in range(0, 65):
            hist_rows.append({"method": name, "distance": k, "pairs": int(counts[k])})
    write_csv("quality_hist.csv", hist_rows)

    info = {"docs": len(docs), "html": nh, "license": len(docs) - nh, "sources": len(sources),
            "edits": len(eds), "natural_pairs": len(a), "candidates": len(cand),
            "seconds": time.time() - t0, "methods": methods, "have": have,
            "nat_pos": {th: int((jn >= th).sum()) for th in THRESHOLDS}}
    write_md(info, pr_rows, edit_rows)
    log(f"done in {time.time() - t0:.0f} s")


def write_csv(name, rows):
    with open(os.path.join(RES, name), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)


def best_k(pr_rows, method, pop, th):
    rs = [r for r in pr_rows if r["method"] == method and r["population"] == pop and r["jaccard_min"] == th]
    return max(rs, key=lambda r: (float(r["f1"]), -r["k"]))


def get(pr_rows, method, pop, th, k):
    return next(r for r in pr_rows if r["method"] == method and r["population"] == pop
                and r["jaccard_min"] == th and r["k"] == k)


def write_md(info, pr_rows, edit_rows):
    from report import table  # same directory
    names = [m for m, _ in info["methods"]]
    out = []
    out.append(f"Corpus: {info['docs']} distinct documents ({info['html']} PostgreSQL HTML pages, "
               f"{info['license']} Debian license files; byte-identical texts kept once). "
               f"Ground truth: exact Jaccard similarity of the sets of word 3-shingles (casefolded "
               f"Unicode letter/digit runs) of the visible text (HTML without head, script, style).\n")
    out.append(f"- **natural** pairs: all {info['natural_pairs']:,} pairs of distinct documents; Jaccard "
               f"computed exactly for the {info['candidates']:,} pairs whose shingle counts are within 0.8× "
               f"of each other, the rest are exact negatives (J ≤ min/max < 0.8). Positives: "
               f"{info['nat_pos'][0.8]} pairs with J ≥ 0.8, {info['nat_pos'][0.9]} with J ≥ 0.9.")
    out.append(f"- **synthetic** pairs: {info['edits']} edited copies of {info['sources']} sampled pages "
               f"(≥ 300 words), each paired with its original: delete / insert / replace 1, 5, 10, 20% of the "
               f"words (inserted words drawn from the corpus vocabulary), paragraphs shuffled, navigation "
               f"header/footer swapped with another page's (HTML only). Fixed seed {SEED}.")
    missing = [f for f in ("simhash_html", "simhash_seomoz") if f not in info["have"]]
    out.append(f"- methods (the fingerprint of each side of a pair): "
               + ", ".join(f"`{n}` = `{e}`" for n, e in info["methods"])
               + ". `text` is the visible text, `raw` the file as is."
               + (f" Not in the build that ran (skipped): {', '.join(missing)}." if missing else ""))
    out.append(f"- run time {info['seconds']:.0f} s.\n")

    out.append("Two views, because the share of near-duplicates changes precision: **natural** pairs have "
               "the prevalence of a real corpus (few near-duplicates among many related pages), **all** adds "
               "the synthetic pairs, where most pairs are near-duplicates. With few natural positives the "
               "natural recall is coarse: its 95% Wilson interval is in `results/quality_pr.csv`.\n")
    for th in THRESHOLDS:
        out.append(f"### `distance <= k` against Jaccard ≥ {th}: k = 3 and the F1-best k\n")
        rows = []
        for m in names:
            r = {"method": f"`{m}`"}
            for pop in ("natural", "all"):
                g = get(pr_rows, m, pop, th, 3)
                bk = best_k(pr_rows, m, pop, th)
                r[pop + "3"] = f"{float(g['precision']):.2f} / {float(g['recall']):.2f}" if g["tp"] else \
                    f"– / {float(g['recall']):.2f}"
                r[pop + "b"] = (f"k={bk['k']}: {float(bk['precision']):.2f} / {float(bk['recall']):.2f} "
                                f"(F1 {float(bk['f1']):.2f})")
            rows.append(r)
        g0 = get(pr_rows, names[0], "natural", th, 3)
        g1 = get(pr_rows, names[0], "all", th, 3)
        out.append(table(rows, ["method", "natural3", "naturalb", "all3", "allb"],
                         ["method", f"natural, k=3 (P / R)", "natural, F1-best", "all, k=3 (P / R)",
                          "all, F1-best"]))
        out.append(f"\nPositives: {g0['positives']} natural pairs, {g1['positives']} in all.\n")
    for pop in ("natural", "all"):
        out.append(f"### Precision / recall for k = 0..8, {pop} pairs, Jaccard ≥ 0.8\n")
        rows = []
        for m in names:
            r = {"method": f"`{m}`"}
            for k in KS:
                g = get(pr_rows, m, pop, 0.8, k)
                pr = f"{float(g['precision']):.2f}" if g["tp"] + g["fp"] else "–"
                r[str(k)] = f"{pr} / {float(g['recall']):.2f}"
            rows.append(r)
        out.append(table(rows, ["method"] + [str(k) for k in KS], ["method"] + [f"k={k}" for k in KS]))
        out.append("")
    out.append("Each cell: precision / recall. The full table (both thresholds, the synthetic population "
               "alone, tp/fp/fn) is `results/quality_pr.csv`.\n")
    if plot_pr(pr_rows, names):
        out.append("![quality_pr.png](plots/quality_pr.png)\n")

    out.append("### Synthetic edits: distance between a page and its edited copy\n")
    default = "text_w3 (default)"
    shown = [m for m in names if m in (default, "text_w1", "text_w2", "tsvector", "simhash_html", "simhash_seomoz")]
    keyed = {(r["method"], r["edit"], r["percent"]): r for r in edit_rows}
    rows = []
    for r0 in [r for r in edit_rows if r["method"] == default]:
        row = {"edit": r0["edit"] + (f" {r0['percent']}%" if r0["percent"] else ""), "pairs": r0["pairs"],
               "J": r0["mean_jaccard"]}
        for m in shown:
            e = keyed[(m, r0["edit"], r0["percent"])]
            row[m] = f"{e['median_distance']} / {float(e['share_le3']) * 100:.0f}%"
        rows.append(row)
    out.append(table(rows, ["edit", "pairs", "J"] + shown,
                     ["edit", "pairs", "mean Jaccard"] + [f"`{m}`" for m in shown]))
    out.append("\nEach cell: median distance / share of pairs within distance 3. All methods: "
               "`results/quality_edits.csv`.\n")
    if plot_edits(edit_rows, shown):
        out.append("![quality_edits.png](plots/quality_edits.png)\n")

    out.append("### Does k = 3 hold for our fingerprints?\n")
    out.extend(verdict(pr_rows, names, edit_rows))
    with open(os.path.join(RES, "quality.md"), "w") as f:
        f.write("\n".join(out).rstrip() + "\n")


def verdict(pr_rows, names, edit_rows):
    """Sentences computed from the tables (the numbers decide, not the author)."""
    out = []
    default = "text_w3 (default)"
    for pop in ("natural", "all"):
        for th in THRESHOLDS:
            g = get(pr_rows, default, pop, th, 3)
            b = best_k(pr_rows, default, pop, th)
            out.append(f"- Default `simhash(text)`, {pop} pairs, J ≥ {th}: at k = 3 precision "
                       f"{float(g['precision']):.2f}, recall {float(g['recall']):.2f} ({g['tp']} of "
                       f"{g['positives']} found, {g['fp']} false); F1-best k = {b['k']} (precision "
                       f"{float(b['precision']):.2f}, recall {float(b['recall']):.2f}).")
    for pop in ("natural", "all"):
        ranked = sorted(names, key=lambda m: -float(best_k(pr_rows, m, pop, 0.8)["f1"]))
        out.append(f"- Best F1 of each method over k, {pop} pairs, J ≥ 0.8: " +
                   ", ".join(f"`{m}` {float(best_k(pr_rows, m, pop, 0.8)['f1']):.2f} "
                             f"(k={best_k(pr_rows, m, pop, 0.8)['k']})" for m in ranked) + ".")
    bn = best_k(pr_rows, default, "natural", 0.8)["k"]
    ba = best_k(pr_rows, default, "all", 0.8)["k"]
    verdict3 = "is" if 3 in (bn, ba) else "is not"
    out.append(f"- So k = 3 {verdict3} the F1-best radius of the default fingerprint against J ≥ 0.8 here "
               f"(natural: k = {bn}, all: k = {ba}); below the F1-best radius, a smaller k buys precision "
               f"with recall.")
    return out


def plot_pr(pr_rows, names):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, axes = plt.subplots(2, 2, figsize=(11, 8), sharey=True)
    for row, pop in enumerate(("natural", "all")):
        for col, th in enumerate(THRESHOLDS):
            ax = axes[row][col]
            for m in names:
                rs = sorted((r for r in pr_rows if r["method"] == m and r["population"] == pop
                             and r["jaccard_min"] == th), key=lambda r: r["k"])
                rs = [r for r in rs if r["tp"] + r["fp"]]
                line, = ax.plot([float(r["recall"]) for r in rs], [float(r["precision"]) for r in rs],
                                marker="o", ms=3, label=m)
                r3 = [r for r in rs if r["k"] == 3]
                if r3:
                    ax.plot([float(r3[0]["recall"])], [float(r3[0]["precision"])], marker="s", ms=7,
                            color=line.get_color())
            ax.set_title(f"{pop} pairs, Jaccard ≥ {th} (k = 0..8; square: k = 3)", fontsize=10)
            ax.set_xlabel("recall")
            ax.set_xlim(0, 1.02)
            ax.grid(alpha=0.3)
        axes[row][0].set_ylabel("precision")
    axes[0][1].legend(fontsize=7, loc="upper right")
    os.makedirs(PLOTS, exist_ok=True)
    fig.tight_layout()
    fig.savefig(os.path.join(PLOTS, "quality_pr.png"), dpi=90)
    plt.close(fig)
    return True


def plot_edits(edit_rows, shown):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.6), sharey=True)
    for ax, op in zip(axes, ("delete", "insert", "replace")):
        for m in shown:
            rs = sorted((r for r in edit_rows if r["method"] == m and r["edit"] == op), key=lambda r: r["percent"])
            ax.plot([r["percent"] for r in rs], [float(r["median_distance"]) for r in rs], marker="o", label=m)
        ax.axhline(3, color="grey", ls="--", lw=1)
        ax.set_title(f"{op} x% of the words")
        ax.set_xlabel("% of words edited")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("median distance to original")
    axes[2].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(PLOTS, "quality_edits.png"), dpi=90)
    plt.close(fig)
    return True


if __name__ == "__main__":
    sys.path.insert(0, HERE)
    main()
