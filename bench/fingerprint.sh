#!/usr/bin/env bash
# fingerprint.sh — MB/s of every fingerprint function on a real corpus (the
# PostgreSQL HTML documentation and Debian's license files), each beside
# md5(text) measured in the same run.  One backend, no parallel workers, the
# column stored uncompressed so detoasting costs the same for every function.
# Documents over 500 kB (a few license files) are left out: to_tsvector
# cannot take them.
source "$(dirname "$0")/lib.sh"
bench_setup_sql
CORPUS=${CORPUS:-/usr/share/doc/postgresql-doc-15/html}
REPS=${REPS:-5}
out=$BENCH_RESULTS/fingerprint.csv

sql -v corpus="$CORPUS" -v scale="$SCALE" <<'SQL'
SET client_min_messages = warning;
DROP TABLE IF EXISTS corpus;
CREATE TABLE corpus (id serial PRIMARY KEY, kind text NOT NULL, body text NOT NULL);
ALTER TABLE corpus ALTER body SET STORAGE EXTERNAL;
INSERT INTO corpus (kind, body)
  SELECT 'html', pg_read_file(:'corpus' || '/' || f)
    FROM pg_ls_dir(:'corpus') f, generate_series(1, :scale) WHERE f LIKE '%.html' ORDER BY f;
SET bench.scale = :scale;
DO $$
DECLARE pkg text;
BEGIN
  FOR pkg IN SELECT * FROM pg_ls_dir('/usr/share/doc') ORDER BY 1 LOOP
    BEGIN
      INSERT INTO corpus (kind, body) SELECT 'license', body
        FROM pg_read_file('/usr/share/doc/' || pkg || '/copyright', 0, 100000000, true) body,
             generate_series(1, current_setting('bench.scale')::int)
       WHERE body IS NOT NULL;
    EXCEPTION WHEN character_not_in_repertoire OR untranslatable_character THEN
      NULL;  -- not valid UTF-8: skipped
    END;
  END LOOP;
END $$;
-- to_tsvector refuses results over 1 MB: keep documents every function takes.
DELETE FROM corpus WHERE octet_length(body) > 500000;
-- the tsvectors once more, stored, to time simhash(tsvector) alone
ALTER TABLE corpus ADD tsv tsvector;
UPDATE corpus SET tsv = to_tsvector('english', body);
VACUUM ANALYZE corpus;
SQL
bytes=$(val "SELECT sum(octet_length(body)) FROM corpus")
docs=$(val "SELECT count(*) FROM corpus")
echo "corpus: $docs documents, $bytes bytes"

# name|expression over body; present only when its function is installed.
fns=("md5|md5(body)"
     "simhash_text|simhash(body)"
     "simhash_text_chars|simhash(body, tokens => 'chars')"
     "to_tsvector|to_tsvector('english', body)"
     "simhash_tsvector|simhash(to_tsvector('english', body))"
     "simhash_of_stored_tsvector|simhash(tsv)")
have_proc simhash_html && fns+=("simhash_html|simhash_html(body)")
have_proc simhash_seomoz && fns+=("simhash_seomoz|simhash_seomoz(body)")

# Rounds interleave the functions, so a burst of load from other processes
# hits all of them alike; each function keeps its best round.
declare -A best
for ((r = 1; r <= REPS; r++)); do
	for f in "${fns[@]}"; do
		name=${f%%|*} expr=${f#*|}
		s=$(val "SET max_parallel_workers_per_gather = 0; SELECT bench_seconds(\$q\$SELECT count($expr) FROM corpus\$q\$, 1)" | tail -1)
		if [ -z "${best[$name]:-}" ] || awk -v a="$s" -v b="${best[$name]}" 'BEGIN { exit !(a < b) }'; then
			best[$name]=$s
		fi
	done
done
echo "function,expression,documents,bytes,seconds,mb_per_s" > "$out.tmp"
for f in "${fns[@]}"; do
	name=${f%%|*} expr=${f#*|} s=${best[${f%%|*}]}
	mbs=$(awk -v b="$bytes" -v s="$s" 'BEGIN { printf "%.1f", b / s / 1e6 }')
	printf '%-20s %8.3f s %9s MB/s\n' "$name" "$s" "$mbs"
	printf '%s,"%s",%s,%s,%s,%s\n' "$name" "$expr" "$docs" "$bytes" "$s" "$mbs" >> "$out.tmp"
done
have_proc simhash_html || echo "simhash_html: not in this build (skipped)"
have_proc simhash_seomoz || echo "simhash_seomoz: not in this build (skipped)"
mv "$out.tmp" "$out"
