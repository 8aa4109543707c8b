#!/usr/bin/python3
"""An independent reference of simhash_similarity(a, b), used once to compute
the golden values in test/unit/text_test.cpp and sql/similarity.sql.  It follows
the documented definition, not the C++ code, and compares shingles as tuples
of token strings (no hashing at all):

  tokens   maximal runs of Unicode letters/digits (general category L*, N*),
           combining marks (M*) inside a token kept; 'chars' mode makes every
           letter/digit its own token (as text_reference.py)
  fold     str.lower() (the inputs here are ASCII, Greek and Cyrillic, where
           simple case folding is lowercasing)
  shingles the set of k consecutive tokens; a text with 0 < n < k tokens has
           the one shingle of all n
  result   |A & B| / |A | B|; 1.0 when both sets are empty

Run with Debian's python3:  /usr/bin/python3 similarity_reference.py
"""
import os
import sys
import unicodedata


def tokens(text, mode):
    out, cur = [], ""
    for ch in text:
        cat = unicodedata.category(ch)[0]
        if cat in "LN":
            if mode == "chars" and cur:
                out.append(cur)
                cur = ""
            cur += ch
        elif cat == "M" and cur:
            cur += ch
        elif cur:
            out.append(cur)
            cur = ""
    if cur:
        out.append(cur)
    return out


def shingles(text, k=3, mode="words", casefold=True):
    toks = [t.lower() if casefold else t for t in tokens(text, mode)]
    if not toks:
        return set()
    if len(toks) < k:
        return {tuple(toks)}
    return {tuple(toks[i:i + k]) for i in range(len(toks) - k + 1)}


def similarity(a, b, k=3, mode="words", casefold=True):
    sa, sb = shingles(a, k, mode, casefold), shingles(b, k, mode, casefold)
    if not sa and not sb:
        return 1.0
    return len(sa & sb) / len(sa | sb)


def data(name):
    """A file of test/data; name[a:] drops its first a characters (bytes: the files are ASCII)."""
    cut = 0
    if name.endswith("]"):
        name, cut = name[:-1].split("[")
        cut = int(cut.rstrip(":"))
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "..", "data", name), encoding="utf-8") as f:
        return f.read()[cut:]


FOX = "the quick brown fox jumps over the lazy dog"
CASES = [
    ("", "", 3, "words", True),
    ("", "hello", 3, "words", True),
    ("!!! ...", "--", 3, "words", True),
    (FOX, FOX.upper(), 3, "words", True),
    (FOX, "the quick brown fox jumped over the lazy dog", 3, "words", True),
    (FOX, "the quick brown fox jumped over the lazy dog", 1, "words", True),
    ("a b c a b c a b c", "a b c", 3, "words", True),
    ("Hello World", "hello world", 2, "words", False),
    ("hello world", "hello world again", 3, "words", True),
    ("Καλημέρα κόσμε, привет мир 2024", "καλημέρα ΚΌΣΜΕ привет мир 2025", 3, "words", True),
    ("日本語のテキスト", "日本語のテキスト です", 2, "chars", True),
    ("@bakery.txt", "@lighthouse.txt", 3, "words", True),
    ("@bakery.txt", "@lighthouse.txt", 1, "words", True),
    ("@bakery.txt", "@bakery.txt[400:]", 3, "words", True),
]

if __name__ == "__main__":
    for a, b, k, mode, fold in CASES:
        ta = data(a[1:]) if a.startswith("@") else a
        tb = data(b[1:]) if b.startswith("@") else b
        s = similarity(ta, tb, k, mode, fold)
        print("%.17g  |A|=%d |B|=%d  %r %r shingle=%d tokens=%s casefold=%s"
              % (s, len(shingles(ta, k, mode, fold)), len(shingles(tb, k, mode, fold)), a, b, k, mode, fold))
