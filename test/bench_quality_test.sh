#!/usr/bin/env bash
# bench_quality_test.sh — the ground truth and the bookkeeping of `make quality`
# (bench/quality.py) on small known cases: exact Jaccard of word 3-shingles,
# synthetic edits touching the intended share of words, paragraph reordering,
# boilerplate swap, popcount distances, precision/recall counts, Wilson
# intervals.  The report is only as good as these.
cd "$(dirname "$0")/.."
exec /usr/bin/python3 - <<'PY'
import collections, random, sys
sys.path.insert(0, "bench")
import numpy as np
import quality as q

passed = failed = 0
def check(name, cond):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print("FAIL", name)

sh = q.Shingler()
a, n = sh("The quick brown fox jumps")            # 3 shingles
b, _ = sh("the QUICK brown fox sleeps")            # shares 2 of them, case folded
check("shingle count", len(a) == 3 and n == 5)
check("jaccard exact", abs(q.jaccard(a, b) - 2 / 4) < 1e-12)
c, _ = sh("one two")                              # fewer tokens than a shingle: one feature
check("short text one shingle", len(c) == 1)
e1, _ = sh("")
check("empty texts identical", q.jaccard(e1, e1) == 1.0)
check("underscore separates", q.WORD.findall("a_b c1") == ["a", "b", "c1"])

html = ('<html><head><title>T</title><style>p{x:1}</style></head><body>'
        '<div class="navheader"><table><tr><td>Prev</td><td>Up</td></tr></table></div>'
        + "".join(f"<p>para{i} " + " ".join(f"w{i}x{j}" for j in range(20)) + "</p>" for i in range(10))
        + '<div class="navfooter">Next Home</div></body></html>')
text = q.visible_text(html, "html")
check("head and style hidden", "x:1" not in text and "T" not in text.split())
check("cells separate words", "Prev" in text.split() and "Up" in text.split())
words = q.WORD.findall(text)
rng = random.Random(7)
for op, dn in (("delete", -1), ("insert", 1), ("replace", 0)):
    out = q.edit_words(html, "html", op, 10, rng, ["zz"])
    w2 = q.WORD.findall(q.visible_text(out, "html"))
    c0, c1 = collections.Counter(words), collections.Counter(w2)
    k = round(len(words) * 0.10)
    check(f"{op} 10% length", len(w2) == len(words) + dn * k)
    check(f"{op} 10% changed words", sum((c0 - c1).values()) == (0 if op == "insert" else k))
    check(f"{op} keeps markup", out.count("<p>") == 10 and "navheader" in out)
r = q.reorder_paragraphs(html, "html", random.Random(1))
check("reorder keeps words", collections.Counter(q.WORD.findall(q.visible_text(r, "html"))) == collections.Counter(words))
check("reorder changes order", r != html)
other = html.replace("Prev", "Back").replace("Next Home", "Forward")
sw = q.swap_boilerplate(html, other)
check("boilerplate swapped", "Back" in sw and "Forward" in sw and sw.count("<p>") == 10)
check("boilerplate body kept", q.PARA.findall(sw) == q.PARA.findall(html))

fp = np.array([0, 0xFFFFFFFFFFFFFFFF, 0b1011, 1 << 63], dtype=np.uint64)
d = q.distances(fp, np.array([0, 0, 2, 0]), np.array([1, 2, 3, 3]))
check("popcount distances", list(d) == [64, 3, 4, 1])
dist = np.array([0, 2, 3, 5, 9], dtype=np.uint8)
truth = np.array([True, True, False, True, False])
counts = {k: (tp, fp_, fn) for k, tp, fp_, fn in q.pr_counts(dist, truth)}
check("pr counts k=3", counts[3] == (2, 1, 1))
check("pr counts k=8", counts[8] == (3, 1, 0))
p, r_, f = q.prf(2, 1, 1)
check("precision recall f1", abs(p - 2 / 3) < 1e-12 and abs(r_ - 2 / 3) < 1e-12 and abs(f - 2 / 3) < 1e-12)
lo, hi = q.wilson(6, 24)
check("wilson 6/24", abs(lo - 0.1200) < 1e-3 and abs(hi - 0.4490) < 1e-3)
print(f"bench_quality: {passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
PY
