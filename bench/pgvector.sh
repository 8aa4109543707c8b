#!/usr/bin/env bash
# pgvector.sh — pgvector (https://github.com/pgvector/pgvector), the approximate
# peer of the simhash index in bench/scale.sh and bench/planner_knn.sh: an HNSW
# index on the same fingerprints stored as bit(64), operator class
# bit_hamming_ops, queried with `ORDER BY b <~> q LIMIT 10` (<~> is pgvector's
# Hamming distance on bit), and an IVFFlat index (lists by pgvector's guidance,
# several ivfflat.probes).  Debian 12 has no postgresql-15-pgvector and the
# product does not depend on it: the benches measure it when the `vector`
# extension is installed in the server they run on, and otherwise say so and go
# on (CI has no pgvector).
#
#   bash bench/pgvector.sh                 # available to $PG_CONFIG's server? how to get it
#   bash bench/pgvector.sh install SRCDIR  # build SRCDIR (a pgvector source tree) and install it
#                                          # into $PG_CONFIG's server (as root)
#
# Getting the source (a release tag; the figures in bench/REPORT.md are of v0.8.6):
#
#   git clone --branch v0.8.6 https://github.com/pgvector/pgvector.git /tmp/pgvector
#   sudo bash bench/pgvector.sh install /tmp/pgvector
#
# `install` runs pgvector's own `make PG_CONFIG=... && make install` (its default
# flags, -march=native) and writes vector.build-info next to vector.control:
# version, commit and build command, which the benches print beside the
# figures.  The benches' throwaway clusters copy the server's installation, so
# they see what is installed there.
#
# Sourced, it defines pgvector_status (one line: installed or not, and what) and
# PGVECTOR_HOWTO (the sentence the benches print when it is absent).
set -euo pipefail
PGVECTOR_HOWTO="Debian 12 does not package pgvector; bash bench/pgvector.sh says how to build it from source"

# PGVECTOR_ONE_SQL: SQL defining pgv_one(label, qid, q, kinds, efs[, probes]),
# one query measured by each kind in turn: sh (the simhash index on t.fp), hnsw
# (the HNSW index on tv.b, once per ef_search in efs), ivf (the IVFFlat index
# on tvi.b, once per ivfflat.probes in probes), exact (a sequential scan of t);
# each appends (label, kind, ef or probes, qid, ms, the 10 distances sorted) to
# pgv_lat.  HNSW and IVFFlat index copies of their own (tv, tvi), so each query
# uses the index it stands for.
read -r -d '' PGVECTOR_ONE_SQL <<'SQL' || true
CREATE FUNCTION pgv_one(label text, qid int, q simhash, kinds text[], efs int[], probes int[] DEFAULT '{}') RETURNS void
LANGUAGE plpgsql AS $$
DECLARE t0 timestamptz; ds int[]; qb bit(64) := q::bigint::bit(64); e int;
BEGIN
  IF 'sh' = ANY (kinds) THEN
    t0 := clock_timestamp();
    SELECT array_agg(d ORDER BY d) INTO ds FROM (SELECT (fp <~> q)::int AS d FROM t ORDER BY fp <~> q LIMIT 10) s;
    INSERT INTO pgv_lat VALUES (label, 'sh', NULL, qid, extract(epoch FROM clock_timestamp() - t0) * 1000, ds);
  END IF;
  IF 'hnsw' = ANY (kinds) THEN
    FOREACH e IN ARRAY efs LOOP
      PERFORM set_config('hnsw.ef_search', e::text, false);
      t0 := clock_timestamp();
      SELECT array_agg(d ORDER BY d) INTO ds FROM (SELECT (b <~> qb)::int AS d FROM tv ORDER BY b <~> qb LIMIT 10) s;
      INSERT INTO pgv_lat VALUES (label, 'hnsw', e, qid, extract(epoch FROM clock_timestamp() - t0) * 1000, ds);
    END LOOP;
  END IF;
  IF 'ivf' = ANY (kinds) THEN
    FOREACH e IN ARRAY probes LOOP
      PERFORM set_config('ivfflat.probes', e::text, false);
      t0 := clock_timestamp();
      SELECT array_agg(d ORDER BY d) INTO ds FROM (SELECT (b <~> qb)::int AS d FROM tvi ORDER BY b <~> qb LIMIT 10) s;
      INSERT INTO pgv_lat VALUES (label, 'ivf', e, qid, extract(epoch FROM clock_timestamp() - t0) * 1000, ds);
    END LOOP;
  END IF;
  IF 'exact' = ANY (kinds) THEN
    t0 := clock_timestamp();
    SELECT array_agg(d ORDER BY d) INTO ds FROM (SELECT simhash_distance(fp, q) AS d FROM t ORDER BY 1 LIMIT 10) s;
    INSERT INTO pgv_lat VALUES (label, 'exact', NULL, qid, extract(epoch FROM clock_timestamp() - t0) * 1000, ds);
  END IF;
END $$;
SQL

# pgvector_ivf_lists N: IVFFlat lists for N rows by pgvector's guidance
# (README, "IVFFlat"): rows / 1000 up to 1M rows, sqrt(rows) above; at least 1
pgvector_ivf_lists() {
	local n=$1 l
	if [ "$n" -le 1000000 ]; then l=$((n / 1000)); else l=$(echo "sqrt($n)" | bc); fi
	echo $((l < 1 ? 1 : l))
}

# pgvector_ivf_probes LISTS: the ivfflat.probes values measured, one per rule in
# PGVECTOR_IVF_PROBE_RULES order: 1 (pgvector's default), sqrt(lists) (its
# guidance for a start), lists/10 (a tenth of the rows read); at least 1 each
PGVECTOR_IVF_PROBE_RULES=("1" "sqrt(lists)" "lists/10")
pgvector_ivf_probes() {
	local l=$1 s t
	s=$(echo "sqrt($l)" | bc) t=$((l / 10))
	echo "1 $((s < 1 ? 1 : s)) $((t < 1 ? 1 : t))"
}

pgvector_extdir() { echo "$("${PG_CONFIG:-pg_config}" --sharedir)/extension"; }

# pgvector_status [EXTDIR]: "pgvector 0.8.6 (commit ..., built with ...)" or "not installed (...)"
pgvector_status() {
	local dir=${1:-$(pgvector_extdir)} ver
	if [ ! -f "$dir/vector.control" ]; then
		echo "not installed ($PGVECTOR_HOWTO)"
		return
	fi
	ver=$(sed -n "s/^default_version *= *'\(.*\)'/\1/p" "$dir/vector.control")
	if [ -f "$dir/vector.build-info" ]; then
		echo "pgvector $ver ($(cat "$dir/vector.build-info"))"
	else
		echo "pgvector $ver (build not recorded)"
	fi
}

pgvector_install() { # SRCDIR
	local src=$1 pgc=${PG_CONFIG:-pg_config} commit desc
	[ -f "$src/vector.control" ] || { echo "pgvector.sh: $src is not a pgvector source tree (no vector.control)" >&2; exit 2; }
	commit=$(git -C "$src" rev-parse HEAD 2>/dev/null || echo "${PGVECTOR_COMMIT:-unknown}")
	desc=$(git -C "$src" describe --tags 2>/dev/null || echo "${PGVECTOR_DESCRIBE:-}")
	nice make -C "$src" -s -j"$(nproc)" PG_CONFIG="$pgc"
	make -C "$src" -s install PG_CONFIG="$pgc"
	echo "${desc:+$desc, }commit ${commit:0:12}, built with make PG_CONFIG=$pgc && make install" \
		>"$(pgvector_extdir)/vector.build-info"
	pgvector_status
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	case ${1:-status} in
		status)
			s=$(pgvector_status)
			echo "$("${PG_CONFIG:-pg_config}" --version): $s"
			case $s in
				"not installed"*)
					sed -n '/^# Getting the source/,/^#   sudo bash/p' "$0" | sed 's/^# \{0,1\}//'
					exit 1 ;;
			esac ;;
		install) pgvector_install "${2:?usage: bench/pgvector.sh install SRCDIR}" ;;
		*) echo "usage: bash bench/pgvector.sh [status | install SRCDIR]" >&2; exit 2 ;;
	esac
fi
