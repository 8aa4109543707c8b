#!/usr/bin/env python3
# short_text.py — how far apart are the fingerprints of short texts with one
# word replaced, and of unrelated texts of the same length?  Texts: 1,000
# random windows of N words of the PostgreSQL 15 HTML documentation
# (postgresql-doc-15, tags stripped); fingerprints by simhash-fingerprint,
# which gives SQL simhash(text)'s values, with --shingle 3 (the default) and 1.
# Usage: python3 bench/short_text.py (after make); the table is in
# docs/performance.md, "Short texts".
import glob, random, re, subprocess, html, statistics
import os
FP = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'src', 'cli', 'simhash-fingerprint')
words = []
for f in sorted(glob.glob('/usr/share/doc/postgresql-doc-15/html/*.html'))[:400]:
    t = open(f, encoding='utf-8', errors='replace').read()
    t = re.sub(r'(?s)<(script|style|head).*?</\1>', ' ', t)
    t = html.unescape(re.sub(r'<[^>]+>', ' ', t))
    words += re.findall(r'\w+', t)
r = random.Random(7)
def fps(docs, extra=()):
    out = subprocess.run([FP, *extra], input='\0'.join(docs).encode(), capture_output=True, check=True).stdout.decode()
    return [int(l.split('\t')[0], 16) for l in out.splitlines()]
def dist(a, b): return bin(a ^ b).count('1')
print('| words | shingle | one word replaced: median, 90th pct | unrelated: 1st pct, median | radius r: edits within r, unrelated within r |')
print('|---|---|---|---|---|')
for n in (5, 10, 20, 50, 100, 200, 500):
    for sh in (3, 1):
        base, edit, other = [], [], []
        for _ in range(1000):
            i = r.randrange(len(words) - n); j = r.randrange(len(words) - n)
            w = words[i:i + n]; e = list(w); e[r.randrange(n)] = 'zqxjkv'
            base.append(' '.join(w)); edit.append(' '.join(e)); other.append(' '.join(words[j:j + n]))
        ex = ('--shingle', str(sh))
        a, b, c = fps(base, ex), fps(edit, ex), fps(other, ex)
        de = sorted(dist(x, y) for x, y in zip(a, b))
        du = sorted(dist(x, y) for x, y in zip(a, c) if True)
        q = lambda v, p: v[min(len(v) - 1, int(p * len(v)))]
        rad = q(de, 0.9)
        fu = sum(d <= rad for d in du) / len(du)
        print(f'| {n} | {sh} | {statistics.median(de):g}, {q(de, .9)} | {q(du, .01)}, {statistics.median(du):g} | r = {rad}: 90%, {100*fu:.1f}% |')
