#!/usr/bin/env bash
# CLI tests of simhash-find-all and simhash-find-clusters: the seomoz output
# format, stdin/stdout and files, duplicates, options, errors, atomic output.
set -u
cd "$(dirname "$0")/.."
ALL=./src/cli/simhash-find-all
CLU=./src/cli/simhash-find-clusters
pass=0 fail=0
check() {  # check NAME EXPECTED ACTUAL
	if [ "$2" == "$3" ]; then pass=$((pass + 1)); else fail=$((fail + 1)); printf 'FAIL %s\n  expected: %q\n  actual:   %q\n' "$1" "$2" "$3"; fi
}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
# 1, 3 (1 bit from 1), 7 (2 bits from 1), 1024+1 (1 bit from 1), far values,
# the top of the range, and a repeated 3.  Distances worked out by hand.
printf '%s\n' 1 3 7 1025 3 18446744073709551615 18446744073709551614 4294967296000 > "$tmp/in.txt"

check pairs-d1 "$(printf '[1, 3]\n[1, 1025]\n[3, 7]\n[18446744073709551614, 18446744073709551615]')" \
	"$($ALL --distance 1 < "$tmp/in.txt")"
check pairs-d2 "$(printf '[1, 3]\n[1, 7]\n[1, 1025]\n[3, 7]\n[3, 1025]\n[18446744073709551614, 18446744073709551615]')" \
	"$($ALL --distance 2 --input - --output - < "$tmp/in.txt")"
check clusters-d1 "$(printf '[1, 3, 7, 1025]\n[18446744073709551614, 18446744073709551615]')" \
	"$($CLU --distance 1 --input "$tmp/in.txt")"
check duplicates-not-a-pair "" "$(printf '5\n5\n5\n' | $ALL --distance 0)"
check duplicates-not-a-cluster "" "$(printf '5\n5\n' | $CLU --distance 3)"
check distance-0 "" "$(printf '5\n4\n' | $ALL --distance 0)"
# pairs come in no set order (threads hand out their chunks as they fill): compare sorted
check blocks-equal "$($ALL --distance 2 < "$tmp/in.txt" | sort)" "$($ALL --distance 2 --blocks 6 --threads 2 < "$tmp/in.txt" | sort)"
check equals-form "$($ALL --distance 2 < "$tmp/in.txt")" "$($ALL --distance=2 --blocks=3 < "$tmp/in.txt")"
check crlf "[1, 3]" "$(printf '1\r\n3\r\n' | $ALL --distance 1)"
check empty-input "" "$($ALL --distance 3 < /dev/null)"
check no-final-newline "[1, 3]" "$(printf '1\n3' | $ALL --distance 1)"

# --output writes the file; a failed run leaves an existing file untouched and no temporary file.
$ALL --distance 1 --input "$tmp/in.txt" --output "$tmp/out.txt"; check output-exit 0 $?
check output-file "$($ALL --distance 1 < "$tmp/in.txt")" "$(cat "$tmp/out.txt")"
printf '1\n2\n-3\n' > "$tmp/bad.txt"
$ALL --distance 1 --input "$tmp/bad.txt" --output "$tmp/out.txt" 2> "$tmp/err"; check malformed-exit 1 $?
check malformed-line-named 1 "$(grep -c "bad.txt:3: expected a 64-bit hash (an unsigned decimal, or 16 hex digits), got \"-3\"" "$tmp/err")"
check output-untouched "$($ALL --distance 1 < "$tmp/in.txt")" "$(cat "$tmp/out.txt")"
$CLU --distance 1 --input "$tmp/bad.txt" --output "$tmp/new.txt" 2>/dev/null; check clusters-malformed-exit 1 $?
check no-partial-file "out.txt" "$(ls "$tmp" | grep -E '^(out|new)\.txt' | tr '\n' ' ' | sed 's/ $//')"
check no-temp-files 0 "$(ls "$tmp" | grep -c tmp)"
# Paths that are not regular files are written in place, never replaced
# (a rename over a device such as /dev/null would replace the device).
echo old > "$tmp/target"; ln -s target "$tmp/link"; chmod 640 "$tmp/target"
$ALL --distance 1 --input "$tmp/in.txt" --output "$tmp/link"; check symlink-exit 0 $?
check symlink-kept link "$([ -L "$tmp/link" ] && echo link)"
check symlink-target-written "$($ALL --distance 1 < "$tmp/in.txt")" "$(cat "$tmp/target")"
$ALL --distance 2 --input "$tmp/in.txt" --output "$tmp/target"
check replaced-file-mode-kept 640 "$(stat -c %a "$tmp/target")"
check replaced-file-content "$($ALL --distance 2 < "$tmp/in.txt")" "$(cat "$tmp/target")"
check dev-stdout "[1, 3]" "$(printf '1\n3\n' | $CLU --distance 1 --output /dev/stdout)"
printf '18446744073709551616\n' | $ALL --distance 1 >/dev/null 2>&1; check overflow-exit 1 $?
printf '1\n\n2\n' | $ALL --distance 1 2> "$tmp/err" >/dev/null; check blank-line-exit 1 $?
check blank-line-named 1 "$(grep -c '<stdin>:2:' "$tmp/err")"
printf ' 1\n' | $ALL --distance 1 >/dev/null 2>&1; check leading-space-exit 1 $?
$ALL --distance 1 --input "$tmp/missing.txt" >/dev/null 2> "$tmp/err"; check missing-input-exit 1 $?
check missing-input-message 1 "$(grep -c "cannot read $tmp/missing.txt" "$tmp/err")"

# options
$ALL < /dev/null >/dev/null 2>&1; check distance-required 2 $?
$ALL --distance 65 < /dev/null >/dev/null 2>&1; check distance-range 2 $?
$ALL --distance -1 < /dev/null >/dev/null 2>&1; check distance-negative 2 $?
$CLU --distance 65 < /dev/null >/dev/null 2>&1; check clusters-distance-range 2 $?
check distance-range-message 1 "$($ALL --distance 65 < /dev/null 2>&1 | grep -c '(expected 0\.\.64)')"
$ALL --distance 3 --blocks 3 < /dev/null >/dev/null 2>&1; check blocks-gt-distance 2 $?
$ALL --distance 3 --blocks 17 < /dev/null >/dev/null 2>&1; check blocks-max 2 $?
$ALL --distance 3 --bogus < /dev/null >/dev/null 2>&1; check unknown-option 2 $?
$CLU --help | grep -q -- '--threads'; check help 0 $?

# a larger planted set: the two tools agree (clusters = components of the pairs) and threads agree
python3 -c "
import random
r = random.Random(5); out = [r.getrandbits(64) for _ in range(3000)]
for _ in range(600):
    v = r.choice(out)
    for _ in range(r.randint(1, 4)): v ^= 1 << r.randrange(64)
    out.append(v)
print('\n'.join(map(str, out)))" > "$tmp/planted.txt"
check threads-agree "$($ALL --distance 3 --threads 1 < "$tmp/planted.txt" | sort | md5sum)" \
	"$($ALL --distance 3 --threads 2 --blocks 6 < "$tmp/planted.txt" | sort | md5sum)"
# brute-force reference in Python over the distinct hashes
check pairs-brute-force "$(python3 -c "
h = sorted(set(int(l) for l in open('$tmp/planted.txt')))
import itertools
for a, b in itertools.combinations(h, 2):
    if bin(a ^ b).count('1') <= 3: print('[%d, %d]' % (a, b))
" | sort | md5sum)" "$($ALL --distance 3 < "$tmp/planted.txt" | sort | md5sum)"
check clusters-from-pairs "$($ALL --distance 3 < "$tmp/planted.txt" | python3 -c "
import sys
parent = {}
def find(x):
    while parent.setdefault(x, x) != x: x = parent[x]
    return x
for l in sys.stdin:
    a, b = map(int, l.strip()[1:-1].split(', '))
    ra, rb = find(a), find(b)
    if ra != rb: parent[max(ra, rb)] = min(ra, rb)
comp = {}
for x in list(parent): comp.setdefault(find(x), []).append(x)
for m in sorted(sorted(c) for c in comp.values()): print('[' + ', '.join(map(str, m)) + ']')
" | md5sum)" "$($CLU --distance 3 < "$tmp/planted.txt" | md5sum)"

# Input read in 1 MiB blocks: 80000 lines (1.6 MB) split across blocks all
# arrive.  Half are 1-bit copies of the other half; Python lists the pairs
# within 1 bit by probing all 64 one-bit neighbours of each distinct hash.
python3 -c "
import random
r = random.Random(8); v = [r.getrandbits(64) for _ in range(40000)]
v += [x ^ (1 << r.randrange(64)) for x in v] + [5, 5]
print('\\n'.join(map(str, v)))" > "$tmp/big.txt"
check block-boundaries "$(python3 -c "
s = set(int(l) for l in open('$tmp/big.txt'))
for a in sorted(s):
    for b in sorted(a ^ (1 << i) for i in range(64)):
        if b > a and b in s: print('[%d, %d]' % (a, b))" | sort | md5sum)" \
	"$($ALL --distance 1 --input "$tmp/big.txt" | sort | md5sum)"

# Leading zeros: any number of them, even split across the 1 MiB input blocks.
check leading-zeros "$(printf '[1, 3]\n[3, 7]')" "$(printf '1\n00000000000000000000007\n0003\n' | $ALL --distance 1)"
check leading-zeros-long "[6, 7]" "$(python3 -c "import sys; sys.stdout.write('0' * 3000000 + '7\\n6\\n')" | $ALL --distance 1)"
check leading-zeros-overflow 1 "$(printf '0018446744073709551616\n' | $ALL --distance 1 2>/dev/null; echo $?)"
# An error message shows the whole bad line, a NUL byte escaped, not cut there.
printf '1\n12\0003\n' | $ALL --distance 1 2> "$tmp/err"; check nul-exit 1 $?
check nul-message '<stdin>:2: expected a 64-bit hash (an unsigned decimal, or 16 hex digits), got "12\x003"' \
	"$(sed 's/^simhash-find-all: //' "$tmp/err")"

# Pairs are written as found: 12.5M pairs (all pairs of 5000 hashes at
# distance 64, 100 MB if held) in 100 MB of address space, all of them.
python3 -c "
import random
r = random.Random(3); print('\\n'.join(str(r.getrandbits(64)) for _ in range(5000)))" > "$tmp/5000.txt"
check all-pairs-bounded-memory "12497500 0" \
	"$( (ulimit -v 100000; $ALL --distance 64 --input "$tmp/5000.txt" | wc -l; echo "${PIPESTATUS[0]}") | tr '\n' ' ' | sed 's/ $//')"

# simhash-fingerprint's output, hex and a tab and the label, goes straight in
# (hex read by Python here, as an independent reference); its --decimal form too.
FP=./src/cli/simhash-fingerprint
printf 'hello world' > "$tmp/a.txt"; printf 'Hello, World!' > "$tmp/b.txt"   # the same fingerprint
printf 'the quick brown fox' > "$tmp/c.txt"; printf 'the quick brown fox jumps' > "$tmp/d.txt"
$FP "$tmp"/[abcd].txt > "$tmp/fp.txt"
check fingerprint-pipe "$(python3 -c "
import itertools
h = sorted(set(int(l.split('\t')[0], 16) for l in open('$tmp/fp.txt')))
for a, b in itertools.combinations(h, 2): print('[%d, %d]' % (a, b))" | sort)" \
	"$($FP "$tmp"/[abcd].txt | $ALL --distance 64 --hashes | sort)"
check fingerprint-decimal-pipe "$($ALL --distance 64 --hashes < "$tmp/fp.txt" | sort)" \
	"$($FP --decimal "$tmp"/[abcd].txt | $ALL --distance 64 --hashes | sort)"
check fingerprint-pipe-clusters "$($FP --decimal "$tmp"/[abcd].txt | cut -f1 | $CLU --distance 64)" \
	"$($FP "$tmp"/[abcd].txt | $CLU --distance 64 --hashes)"

# Named input (the first line has a name): the output names the lines.
# Reference: Python over fp.txt, a.txt and b.txt being exact copies.
named_ref() {  # named_ref DISTANCE EVERY_LINE: "name_a<TAB>name_b<TAB>distance", sorted
	python3 -c "
import itertools, sys
rows = [l.rstrip('\n').split('\t') for l in open('$tmp/fp.txt')]
seen = set(); keep = []
for h, n in rows:
    if $2 or h not in seen: keep.append((int(h, 16), n)); seen.add(h)
for (ha, na), (hb, nb) in itertools.combinations(keep, 2):
    d = bin(ha ^ hb).count('1')
    if d <= $1: print('%s\t%s\t%d' % (na, nb, d))" | sort
}
check named-pairs "$(named_ref 64 False)" "$($ALL --distance 64 < "$tmp/fp.txt" 2>/dev/null | sort)"
check named-pairs-copies-said 1 "$($ALL --distance 64 < "$tmp/fp.txt" 2>&1 >/dev/null | grep -c '^simhash-find-all: 1 line repeats the hash of an earlier line: left out as exact copies (--exact-copies lists them)$')"
check named-pairs-exact-copies "$(named_ref 64 True)" "$($ALL --distance 64 --exact-copies < "$tmp/fp.txt" 2>"$tmp/err" | sort)"
check named-exact-copies-quiet "" "$(cat "$tmp/err")"
check named-copies-distance-0 "$(printf '%s\t%s\t0' "$tmp/a.txt" "$tmp/b.txt")" "$($ALL --distance 0 --exact-copies < "$tmp/fp.txt")"
check named-no-copies-distance-0 "" "$($ALL --distance 0 < "$tmp/fp.txt" 2>/dev/null)"
check named-clusters "$(printf '%s\t%s\t%s' "$tmp/a.txt" "$tmp/c.txt" "$tmp/d.txt")" "$($CLU --distance 64 < "$tmp/fp.txt" 2>/dev/null)"
check named-clusters-exact-copies "$(printf '%s\t%s\t%s\t%s' "$tmp/a.txt" "$tmp/b.txt" "$tmp/c.txt" "$tmp/d.txt")" \
	"$($CLU --distance 64 --exact-copies < "$tmp/fp.txt")"
check named-clusters-copies-alone "$(printf '%s\t%s' "$tmp/a.txt" "$tmp/b.txt")" "$($CLU --distance 0 --exact-copies < "$tmp/fp.txt")"
check named-line-without-name "$(printf 'five\tline 2\t1\nfive\tline 3\t1')" "$(printf '5\tfive\n7\n4\n' | $ALL --distance 1 | sort)"
check named-crlf "$(printf 'a\tb\t1')" "$(printf '1\ta\r\n3\tb\r\n' | $ALL --distance 1)"
check named-hex-and-order "$(printf 'second\tfirst\t1')" "$(printf '000000000000000b\tsecond\n000000000000000a\tfirst\n' | $ALL --distance 1)"
# the threads and blocks give the same named pairs as one thread
awk '{ printf "%s\tdoc%d\n", $1, NR }' "$tmp/planted.txt" > "$tmp/planted_named.txt"
check named-threads-agree "$($ALL --distance 3 < "$tmp/planted_named.txt" 2>/dev/null | sort | md5sum)" \
	"$($ALL --distance 3 --threads 2 --blocks 6 < "$tmp/planted_named.txt" 2>/dev/null | sort | md5sum)"
check named-pairs-brute-force "$(python3 -c "
import itertools
rows = [l.split() for l in open('$tmp/planted_named.txt')]
seen = {}
for h, n in rows: seen.setdefault(int(h), n)
for (ha, na), (hb, nb) in itertools.combinations(sorted(seen.items(), key=lambda x: int(x[1][3:])), 2):
    d = bin(ha ^ hb).count('1')
    if d <= 3: print('%s\t%s\t%d' % (na, nb, d))" | sort | md5sum)" \
	"$($ALL --distance 3 < "$tmp/planted_named.txt" 2>/dev/null | sort | md5sum)"
check hex-upper-case "[17, 18]" "$(printf '0000000000000011\n0000000000000012\t x\n000000000000001A\n' | $ALL --distance 2 | head -1)"
check long-label "[5, 7]" "$(python3 -c "import sys; sys.stdout.write('5\t' + 'x' * 300000 + '\n7\tb\r\n')" | $ALL --distance 1 --hashes)"
check long-label-named "300000 b 1" "$(python3 -c "import sys; sys.stdout.write('5\t' + 'x' * 300000 + '\n7\tb\r\n')" | $ALL --distance 1 | awk -F'\t' '{ print length($1), $2, $3 }')"

# The input's form: 16 decimal digits read either way wait for a line that is
# only one; an input of nothing else must be told; no mixing.
check auto-waits-hex "[17, 12379813738877118345]" "$(printf '0000000000000011\nabcdef0123456789\n' | $ALL --distance 64)"
check auto-waits-decimal "[5, 11]" "$(printf '0000000000000011\n5\n' | $ALL --distance 64)"
printf '1234567890123456\n' | $ALL --distance 1 >/dev/null 2>"$tmp/err"; check undecided-exit 1 $?
check undecided-message 1 "$(grep -c 'every hash is 16 decimal digits.*--input-format decimal or --input-format hex' "$tmp/err")"
check format-decimal "[1234567890123456, 1234567890123457]" "$(printf '1234567890123456\n1234567890123457\n' | $ALL --distance 1 --input-format decimal)"
check format-hex "[1311768467284833366, 1311768467284833367]" "$(printf '1234567890123456\n1234567890123457\n' | $ALL --distance 1 --input-format hex)"
printf '5\nabcdef0123456789\n' | $ALL --distance 1 >/dev/null 2>"$tmp/err"; check mixed-exit 1 $?
check mixed-message '<stdin>:2: expected an unsigned decimal as on line 1, got "abcdef0123456789"' "$(sed 's/^simhash-find-all: //' "$tmp/err")"
printf 'abcdef0123456789\n5\n' | $CLU --distance 1 >/dev/null 2>"$tmp/err"; check mixed-hex-exit 1 $?
check mixed-hex-message '<stdin>:2: expected 16 hex digits as on line 1, got "5"' "$(sed 's/^simhash-find-clusters: //' "$tmp/err")"
printf 'abcdef0123456789\n' | $ALL --distance 1 --input-format decimal >/dev/null 2>"$tmp/err"; check format-decimal-rejects-hex 1 $?
check format-decimal-message '<stdin>:1: expected an unsigned decimal, got "abcdef0123456789"' "$(sed 's/^simhash-find-all: //' "$tmp/err")"
printf '12345\n' | $ALL --distance 1 --input-format hex >/dev/null 2>"$tmp/err"; check format-hex-rejects-short 1 $?
check format-hex-message '<stdin>:1: expected 16 hex digits, got "12345"' "$(sed 's/^simhash-find-all: //' "$tmp/err")"
printf 'abcdef012345678\n' | $ALL --distance 1 >/dev/null 2>"$tmp/err"; check hex-15-digits 1 $?
$ALL --distance 1 --input-format octal </dev/null >/dev/null 2>&1; check format-bad-option 2 $?

# Exact copies: none by default (seomoz reads a set), [a, a] once each with --exact-copies.
check copies-default "$(printf '[4, 5]\n[5, 7]')" "$(printf '5\n5\n5\n7\n7\n4\n' | $ALL --distance 1 | sort)"
check exact-copies "$(printf '[4, 5]\n[5, 5]\n[5, 7]\n[7, 7]')" "$(printf '5\n5\n5\n7\n7\n4\n' | $ALL --distance 1 --exact-copies | sort)"
check exact-copies-distance-0 "$(printf '[5, 5]\n[7, 7]')" "$(printf '5\n7\n5\n4\n7\n5\n' | $ALL --distance 0 --exact-copies)"
check exact-copies-fingerprints "[3104390335662440781, 3104390335662440781]" \
	"$($FP "$tmp"/[ab].txt | $ALL --distance 0 --exact-copies --hashes)"
# find-clusters: --exact-copies writes a hash once per line; a repeated hash alone is a cluster
check clusters-copies-default "[4, 5, 7]" "$(printf '5\n5\n7\n4\n9\n9\n' | $CLU --distance 1)"
check clusters-exact-copies "$(printf '[4, 5, 5, 7]\n[9, 9]')" "$(printf '5\n5\n7\n4\n9\n9\n' | $CLU --distance 1 --exact-copies)"
check clusters-exact-copies-distance-0 "$(printf '[5, 5, 5]\n[9, 9]')" "$(printf '5\n9\n5\n4\n9\n5\n' | $CLU --distance 0 --exact-copies)"
for t in "$ALL" "$CLU"; do
	check "help-says-copies-${t##*-}" 1 "$($t --help | grep -c '^Exact copies (a hash on several lines) count once by default')"
	check "help-exact-copies-option-${t##*-}" 1 "$($t --help | grep -c '^  --exact-copies ')"
	check "help-hashes-option-${t##*-}" 1 "$($t --help | grep -c '^  --hashes ')"
done

# Every tool: --help (exit 0, on stdout) and --version (the Makefile's EXTVERSION).
version=$(sed -n 's/^EXTVERSION *= *//p' Makefile)
for t in simhash-find-all simhash-find-clusters simhash-fingerprint; do
	check "$t-version" "$t (simhash) $version" "$(./src/cli/$t --version)"
	check "$t-help" "0 usage: $t " "$(out=$(./src/cli/$t --help 2>/dev/null); echo "$? ${out:0:$((8 + ${#t}))}")"
done

echo "cli-batch: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
