#!/usr/bin/env bash
# bench_boilerplate_test.sh — the bookkeeping of bench/boilerplate_quality.py
# (the boilerplate weighting report) on small known cases: the sparse-product
# truth equals brute-force Jaccard, close_pairs equals brute-force Hamming
# distances, precision/recall counts, every edit changes the text, and a page
# holds its article and its site's chrome.
cd "$(dirname "$0")/.."
exec /usr/bin/python3 - <<'PY'
import html, itertools, random, sys
sys.path.insert(0, "bench")
import numpy as np
import boilerplate_quality as bq

passed = failed = 0
def check(name, cond):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print("FAIL", name)

rng = random.Random(11)
sets = [np.array(sorted(rng.sample(range(50), rng.randint(0, 25))), dtype=np.int64) for _ in range(30)]
sets += [sets[5].copy(), np.array([], dtype=np.int64)]
truth = bq.truth_pairs(sets, 0.3)
brute = {}
for i, j in itertools.combinations(range(len(sets)), 2):
    a, b = set(sets[i].tolist()), set(sets[j].tolist())
    jac = 1.0 if not a and not b else len(a & b) / len(a | b)
    if jac >= 0.3:
        brute[(i, j)] = jac
check("truth = brute force (pairs)", set(truth) == set(brute))
check("truth = brute force (values)", all(abs(truth[k] - brute[k]) < 1e-12 for k in brute))
check("copies have J = 1", truth.get((5, 30)) == 1.0)

fps = np.array([rng.getrandbits(64) for _ in range(40)] + [0, 1, 3, 2**64 - 1], dtype=np.uint64)
close = bq.close_pairs(fps, 8)
want = {(i, j): bin(int(fps[i]) ^ int(fps[j])).count("1") for i, j in itertools.combinations(range(len(fps)), 2)}
want = {k: d for k, d in want.items() if d <= 8}
check("close_pairs = brute-force distances", close == want)
check("distance 2 between 0 and 3", close.get((40, 42)) == 2)

p, r, f1, pos, pred = bq.scores({(1, 2): 1, (3, 4): 3, (5, 6): 7}, {(1, 2): 0.9, (7, 8): 0.85, (3, 4): 0.5}, 3, 0.8)
check("scores count", (pos, pred) == (2, 2) and p == 0.5 and r == 0.5 and abs(f1 - 0.5) < 1e-12)

text = "The tool reads files. It writes reports quickly. Please report bugs to the maintainers. Thanks."
for seed in range(40):
    out = bq.edit(text, random.Random(seed), ["A donor sentence from elsewhere."])
    check(f"edit {seed} changes the text", out != text)
chrome = bq.site_chrome(random.Random(3))
check("one chrome per site, all different", len(set(chrome)) == len(bq.SITES))
page = bq.page("first <para>\nsecond para", chrome[0])
check("page holds the escaped article", html.escape("first <para>") in page and "second para" in page)
check("page holds its site's menu and footer", chrome[0][0] in page and chrome[0][1] in page)
print(f"bench_boilerplate: {passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
PY
