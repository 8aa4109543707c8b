"""gen_hashes.py N — N unsigned 64-bit decimal fingerprints, one per line, the
input format of simhash-find-all: 90% random, then 10% copies of random
earlier ones with 1..3 bits flipped.  The i-th random hash is splitmix64(i),
so the file is the same in every run and is written without holding it in
memory (100M lines are fine)."""
import random
import sys

MASK = (1 << 64) - 1


def splitmix64(i):
    z = (i * 0x9E3779B97F4A7C15) & MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def main():
    n = int(sys.argv[1])
    base = n - n // 10
    rng = random.Random(20261123)
    out = sys.stdout
    chunk = []
    for i in range(n):
        if i < base:
            h = splitmix64(i + 1)
        else:
            h = splitmix64(rng.randrange(base) + 1)
            for b in rng.sample(range(64), 1 + i % 3):
                h ^= 1 << b
        chunk.append(str(h))
        if len(chunk) == 100000:
            out.write("\n".join(chunk) + "\n")
            chunk = []
    if chunk:
        out.write("\n".join(chunk) + "\n")


if __name__ == "__main__":
    main()
