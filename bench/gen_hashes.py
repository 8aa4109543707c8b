"""gen_hashes.py N — N unsigned 64-bit decimal fingerprints, one per line, the
input format of simhash-find-all: 90% random, 10% copies of earlier ones with
1..3 bits flipped.  Fixed seed: every run gets the same file."""
import random
import sys


def main():
    n = int(sys.argv[1])
    rng = random.Random(20261123)
    base = n - n // 10
    hashes = [rng.getrandbits(64) for _ in range(base)]
    for i in range(n - base):
        h = hashes[rng.randrange(base)]
        for b in rng.sample(range(64), 1 + i % 3):
            h ^= 1 << b
        hashes.append(h)
    out = sys.stdout
    for start in range(0, n, 100000):
        out.write("\n".join(map(str, hashes[start:start + 100000])))
        out.write("\n")


if __name__ == "__main__":
    main()
