#!/usr/bin/env bash
# memory.sh — wall time and peak resident memory (GNU time's maximum RSS) of
# the command-line tools simhash-find-all and simhash-find-clusters on 1M and
# 10M fingerprints (90% random, 10% copies with 1..3 bits flipped), blocks 6,
# distance 3.  Sizes: MEM_SIZES (default "1000000 10000000") times SCALE.
source "$(dirname "$0")/lib.sh"
BIN=${TMPC_BIN:-$(pg_config --bindir)}
tools=()
for t in simhash-find-all simhash-find-clusters; do [ -x "$BIN/$t" ] && tools+=("$t"); done
[ ${#tools[@]} -gt 0 ] || skip "no simhash-find-all / simhash-find-clusters in this build"
[ -x /usr/bin/time ] || skip "GNU time (package time) is not installed"
SIZES=${MEM_SIZES:-"1000000 10000000"}
out=$BENCH_RESULTS/memory.csv
W=$(mktemp -d /tmp/simhash-mem.XXXXXX)
trap 'rm -rf "$W"' EXIT

echo "tool,hashes,blocks,distance,seconds,peak_rss_mb,bytes_per_hash,output_lines" > "$out.tmp"
for n0 in $SIZES; do
	n=$((n0 * SCALE))
	/usr/bin/python3 "$BENCH_DIR/gen_hashes.py" "$n" > "$W/in.txt"
	for t in "${tools[@]}"; do
		/usr/bin/time -f '%e %M' -o "$W/time" "$BIN/$t" --input "$W/in.txt" --output "$W/out.txt" \
			--blocks 6 --distance 3 || { echo "$t failed on $n hashes"; exit 1; }
		read -r secs kb < "$W/time"
		lines=$(wc -l < "$W/out.txt")
		bph=$(awk -v kb="$kb" -v n="$n" 'BEGIN { printf "%.1f", kb * 1024 / n }')
		printf '%-22s n=%-9s %7s s  %8.1f MB  %6s B/hash  %s lines\n' "$t" "$n" "$secs" "$(awk -v kb="$kb" 'BEGIN{print kb/1024}')" "$bph" "$lines"
		echo "$t,$n,6,3,$secs,$(awk -v kb="$kb" 'BEGIN{printf "%.1f", kb/1024}'),$bph,$lines" >> "$out.tmp"
		rm -f "$W/out.txt"
	done
done
mv "$out.tmp" "$out"
