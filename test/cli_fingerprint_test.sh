#!/usr/bin/env bash
# CLI tests of simhash-fingerprint: golden values, stdin, options, errors.
set -u
cd "$(dirname "$0")/.."
BIN=./src/cli/simhash-fingerprint
pass=0 fail=0
check() {  # check NAME EXPECTED ACTUAL
	if [ "$2" == "$3" ]; then pass=$((pass + 1)); else fail=$((fail + 1)); printf 'FAIL %s\n  expected: %q\n  actual:   %q\n' "$1" "$2" "$3"; fi
}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
printf 'hello world' > "$tmp/a.txt"
# golden values: test/golden/text_reference.py
check file-hex "2b1502900150c14d	$tmp/a.txt" "$($BIN "$tmp/a.txt")"
check stdin-nul "$(printf '2b1502900150c14d\t1\n2b1502900150c14d\t2\n0000000000000000\t3')" \
	"$(printf 'hello world\0Hello, World!\0\0' | $BIN)"
check decimal "3104390335662440781	1" "$(printf 'hello world' | $BIN --decimal)"
check shingle-1 "8212868318d29267	1" "$(printf 'the quick brown fox jumps over the lazy dog' | $BIN --shingle 1)"
check chars "14e04c0b3b46c4e8	1" "$(printf '日本語のテキスト' | $BIN --tokens chars)"
check no-casefold "3e6b567ce4cdc5b4	1" "$(printf 'The Quick Brown Fox' | $BIN --shingle 2 --no-casefold)"
$BIN --shingle 0 </dev/null >/dev/null 2>&1; check bad-shingle-exit 2 $?
$BIN --tokens bytes </dev/null >/dev/null 2>&1; check bad-tokens-exit 2 $?
$BIN "$tmp/missing.txt" >/dev/null 2>"$tmp/err"; check missing-file-exit 1 $?
check missing-file-message 1 "$(grep -c "cannot read $tmp/missing.txt" "$tmp/err")"
$BIN --help >/dev/null; check help-exit 0 $?
# --seomoz: the seomoz simhash-cpp values (test/golden/seomoz_reference.py, upstream's tests)
check seomoz-hello "1a40201a26358020	1" "$(printf 'hello world' | $BIN --seomoz)"
check seomoz-decimal "1891547140177887264	1" "$(printf 'hello world' | $BIN --seomoz --decimal)"
check seomoz-files "$(printf '52a4ee1526a6f3c6\ttest/data/lighthouse.txt\n3dcde7a6c0de5f12\ttest/data/bakery.txt')" \
	"$($BIN --seomoz test/data/lighthouse.txt test/data/bakery.txt)"
$BIN --seomoz --shingle 2 </dev/null >/dev/null 2>&1; check seomoz-no-options-exit 2 $?
$BIN --seomoz --html </dev/null >/dev/null 2>&1; check seomoz-html-exclusive-exit 2 $?
# --html: the visible text's simhash(text) fingerprint, as SQL simhash_html
check html-hello "2b1502900150c14d	1" "$(printf '<html><head><title>t</title></head><body><nav>menu</nav><p>hello <b>world</b></p></body>' | $BIN --html)"
check html-options "$(printf 'the quick brown fox jumps over the lazy dog' | $BIN --shingle 1)" \
	"$(printf '<p>the quick <i>brown</i> fox</p><p>jumps over the lazy dog</p><script>x()</script>' | $BIN --html --shingle 1)"
check html-malformed-ok 0 "$(printf '<p><b>unclosed</div>&&<<' | $BIN --html >/dev/null; echo $?)"
# A directory is an error, not the fingerprint of nothing.
$BIN "$tmp" >/dev/null 2>"$tmp/err"; check directory-exit 1 $?
check directory-message 1 "$(grep -c "cannot read $tmp: Is a directory" "$tmp/err")"
# An output that cannot be written (a full disk) is an error.
printf 'hello world' | $BIN >/dev/full 2>"$tmp/err"; check full-output-exit 1 $?
check full-output-message 1 "$(grep -c "cannot write the output: No space left on device" "$tmp/err")"
# Documents are read in blocks up to --max-bytes (default 256 MiB): an endless
# file costs bounded memory and is an error; 600 MB of address space suffice.
check endless-file "1 1" "$( (ulimit -v 600000; $BIN /dev/zero >/dev/null 2>"$tmp/err"; echo -n "$? ") ; grep -c '/dev/zero: larger than --max-bytes (268435456 bytes)' "$tmp/err")"
head -c 1000 /dev/zero | tr '\0' a > "$tmp/1000.txt"
check max-bytes-ok "0" "$($BIN --max-bytes 1000 "$tmp/1000.txt" >/dev/null; echo $?)"
$BIN --max-bytes 999 "$tmp/1000.txt" >/dev/null 2>&1; check max-bytes-exceeded-exit 1 $?
$BIN --max-bytes 0 </dev/null >/dev/null 2>&1; check max-bytes-zero-exit 2 $?
# On stdin, a document over the limit is reported and skipped; the others are fingerprinted.
check stdin-skip-big "$(printf '2b1502900150c14d\t1\n2b1502900150c14d\t3')" \
	"$(printf 'hello world\0%s\0hello world' "$(head -c 100 "$tmp/1000.txt")" | $BIN --max-bytes 50 2>"$tmp/err")"
check stdin-skip-big-message 1 "$(grep -c 'document 2: larger than --max-bytes (50 bytes)' "$tmp/err")"
# Names are written as COPY's text format writes a field, so that every
# document is one line and \copy reads the name back: backslash, tab, newline.
mkdir "$tmp/odd"; printf 'hello world' > "$tmp/odd/back\\slash"; printf 'hello world' > "$tmp/odd/tab	name"
printf 'hello world' > "$tmp/odd/new
line"
check escaped-names "$(printf '2b1502900150c14d\t%s/odd/back\\\\slash\n2b1502900150c14d\t%s/odd/new\\nline\n2b1502900150c14d\t%s/odd/tab\\tname' "$tmp" "$tmp" "$tmp")" \
	"$($BIN "$tmp/odd/back\\slash" "$tmp/odd/new
line" "$tmp/odd/tab	name")"
check escaped-one-line-each 3 "$($BIN "$tmp"/odd/* | wc -l)"
echo "cli-fingerprint: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
