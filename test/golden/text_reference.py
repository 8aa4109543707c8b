#!/usr/bin/python3
"""An independent reference of simhash(text), used once to compute the golden
values in test/unit/text_test.cpp and sql/fingerprint.sql.  It follows the
documented pipeline, not the C++ code:

  tokens   maximal runs of Unicode letters/digits (general category L*, N*),
           with combining marks (M*) inside a token kept; 'chars' mode makes
           every letter/digit its own token
  fold     str.lower() of each code point for the test inputs chosen here
           (ASCII, Greek, Cyrillic, where simple case folding = lowercase)
  feature  XXH3-64 of the little-endian bytes of k consecutive token hashes
           (token hash = XXH3-64 of its UTF-8); a document with 0 < n < k
           tokens has one feature of all n; with k = 1 the token hash itself
  vote     bit i set when more than half of the features have it

Run with Debian's python3 and python3-xxhash:  /usr/bin/python3 text_reference.py
"""
import struct
import sys
import unicodedata

import xxhash


def tokens(text, mode):
    out, cur = [], ""
    for ch in text:
        cat = unicodedata.category(ch)
        if cat[0] in "LN":
            if mode == "chars" and cur:
                out.append(cur)
                cur = ""
            cur += ch
        elif cat[0] == "M" and cur:
            cur += ch
        elif cur:
            out.append(cur)
            cur = ""
    if cur:
        out.append(cur)
    return out


def fingerprint(text, shingle=3, mode="words", casefold=True):
    toks = [t.lower() if casefold else t for t in tokens(text, mode)]
    hashes = [xxhash.xxh3_64_intdigest(t.encode("utf-8")) for t in toks]
    feats = []
    if shingle == 1:
        feats = hashes
    elif hashes:
        windows = [hashes[i:i + shingle] for i in range(len(hashes) - shingle + 1)] or [hashes]
        feats = [xxhash.xxh3_64_intdigest(struct.pack("<%dQ" % len(w), *w)) for w in windows]
    result = 0
    for bit in range(64):
        if 2 * sum((f >> bit) & 1 for f in feats) > len(feats):
            result |= 1 << bit
    return result


CASES = [
    ("", 3, "words", True),
    ("hello", 3, "words", True),
    ("hello world", 3, "words", True),
    ("Hello, World!", 3, "words", True),
    ("the quick brown fox jumps over the lazy dog", 3, "words", True),
    ("the quick brown fox jumps over the lazy dog", 1, "words", True),
    ("The Quick Brown Fox", 2, "words", False),
    ("Καλημέρα κόσμε, привет мир 2024", 3, "words", True),
    ("日本語のテキスト", 3, "chars", True),
    ("abc", 2, "chars", True),
]

if __name__ == "__main__":
    args = sys.argv[1:]
    cases = [(args[0], int(args[1]), args[2], args[3] == "true")] if args else CASES
    for text, k, mode, fold in cases:
        print("%016x  %r shingle=%d tokens=%s casefold=%s" % (fingerprint(text, k, mode, fold), text, k, mode, fold))
