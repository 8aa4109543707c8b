#!/usr/bin/env bash
# bench_neardup_test.sh — the bookkeeping of bench/neardup_quality.py (the
# verified near-duplicates report) on small known cases: the sparse-product
# truth equals brute-force Jaccard, the datasketch-style band choice, MinHash
# estimates, precision/recall counts, and that every edit changes the text.
cd "$(dirname "$0")/.."
exec /usr/bin/python3 - <<'PY'
import itertools, random, sys
sys.path.insert(0, "bench")
import numpy as np
import neardup_quality as nq

passed = failed = 0
def check(name, cond):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print("FAIL", name)

rng = random.Random(7)
sets = [np.array(sorted(rng.sample(range(60), rng.randint(0, 30))), dtype=np.int64) for _ in range(40)]
sets += [sets[3].copy(), np.array([], dtype=np.int64)]
truth = nq.truth_pairs(sets, lo=0.3)
brute = {}
for i, j in itertools.combinations(range(len(sets)), 2):
    a, b = set(sets[i].tolist()), set(sets[j].tolist())
    jac = 1.0 if not a and not b else len(a & b) / len(a | b)
    if jac >= 0.3:
        brute[(i, j)] = jac
check("truth = brute force (pairs)", set(truth) == set(brute))
check("truth = brute force (values)", all(abs(truth[k] - brute[k]) < 1e-12 for k in brute))
check("copies have J = 1", truth.get((3, 40)) == 1.0)

b, r = nq.optimal_bands(0.8)
check("bands x rows within 128", b * r <= 128 and b >= 1 and r >= 1)
b5, r5 = nq.optimal_bands(0.5)
check("a lower threshold takes fewer rows per band", r5 < r)

big = [np.arange(0, 1000, dtype=np.int64), np.arange(200, 1200, dtype=np.int64)]  # J = 800/1200
sig = nq.minhashes(big)
est = float(np.mean(sig[0] == sig[1]))
check("minhash estimate near 2/3", abs(est - 2 / 3) < 0.15)
check("identical sets collide in every band", (0, 1) in nq.lsh_candidates(np.vstack([sig[0], sig[0]]), b, r))

p, rc, f, tp, fp, fn = nq.prf({(1, 2), (3, 4)}, {(1, 2), (5, 6)})
check("prf counts", (tp, fp, fn) == (1, 1, 1) and p == 0.5 and rc == 0.5)

text = ("Version 1.2 of the tool.\n\nIt reads files. It writes reports quickly.\n\n"
        "Please report bugs to the maintainers.\n\nThanks to everyone who helped.")
pool = ["A donor sentence from elsewhere. Another one here."]
for kind in nq.EDITS:
    fn_ = {"typo": lambda: nq.typo(text, rng), "insert": lambda: nq.insert_sentence(text, rng, pool),
           "delete": lambda: nq.delete_sentence(text, rng), "header": lambda: nq.header_footer(text, rng),
           "version": lambda: nq.version_bump(text, rng), "reorder": lambda: nq.reorder(text, rng),
           "truncate": lambda: nq.truncate(text, rng)}[kind]
    out = fn_()
    check(f"edit {kind} changes the text", out is not None and out != text)
check("version bump", "Version 1.3" in nq.version_bump(text, rng))
print(f"bench_neardup: {passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
PY
