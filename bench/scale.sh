#!/usr/bin/env bash
# scale.sh — the README's scale figures: the simhash index against btree and a
# sequential scan on one table of N fingerprints, for each N given.  Part
# `scale` of bench/run.sh (sizes from SCALE_ROWS, default 1,000,000 x SCALE);
# alone:
#
#   bash bench/scale.sh 1000000 10000000          # or SCALE_ROWS="..." bash bench/scale.sh
#
# Every N gets a throwaway cluster of its own (the cold measurements restart it),
# on the server that bench/run.sh installed (TMPC_BIN) or on a private
# installation of this tree.  Settings, the same for both sides of every ratio:
# shared_buffers 2GB, maintenance_work_mem 1GB, work_mem 64MB, temp_file_limit
# 30GB (TEMP_FILE_LIMIT: a runaway never fills the disk), fsync and full_page_writes off, synchronous_commit off, autovacuum off, no JIT, no
# parallel query (one backend per query).
#
# Data: N rows (id int, fp simhash), 90% random 64-bit values
# (hashint8extended(i, 0)), 10% planted copies of random rows with 1..6 bits
# flipped; generated in SQL.  Queries: QUERIES values, half sources of planted
# copies, half fresh random values.  Metrics, one CSV row per metric and baseline
# (ratio = simhash / baseline, always):
#   build_serial_s, build_parallel_s  CREATE INDEX with max_parallel_maintenance_workers
#       0 and 2, median of BUILD_REPS builds of each kind, interleaved
#       (btree, simhash, btree, simhash, ...); baseline btree on the same column
#   bytes_per_row    index size / N; baseline btree
#   radius3_warm_ms  p50 of `simhash_within(fp, q, 3)` (count), every query run once
#       before; baselines: btree equality `fp = q` (p50, same queries, paired per
#       query) and a sequential scan `simhash_distance(fp, q) <= 3` (median of a
#       sample of SEQ_SAMPLE queries)
#   knn10_warm_ms    p50 of `ORDER BY fp <~> q LIMIT 10`, KNN_QUERIES random queries;
#       baseline: sequential scan + top-N `ORDER BY simhash_distance(fp, q) LIMIT 10`
#   radius3_cold_ms, knn10_cold_ms  the same after a cluster restart and
#       `echo 3 > /proc/sys/vm/drop_caches` before each kind (p50 of COLD_QUERIES
#       queries in one new session; one query for the sequential scan); skipped
#       unless root
#   ingest_rows_per_s  INGEST rows in INSERT ... SELECT batches of 1,000, each
#       committed, into the N-row table with the index alone; baselines: the same
#       with a btree alone and with no index
#   pairs_s          simhash_pairs over the N loaded rows, radius 3, work_mem 256MB,
#       through the simhash index (built again after the ingestion rows are
#       deleted; the path taken goes into scale_info.csv as pairs_path),
#       run last (PAIRS_UNTIL gives up at a wall-clock time and records how long
#       it ran; the peak size of the temporary files goes into scale_info.csv);
#       baselines: an index nested loop (simhash_within self-join of PAIRS_SAMPLE
#       rows, scaled to N) and a sequential-scan nested loop (N x the sequential
#       scan's time per query; extrapolated, not run)
# Sampled answers are compared with the sequential scan's (counts, KNN distances);
# a difference fails the run.  pgvector (bench/pgvector.sh builds it) is
# measured beside simhash when the vector extension is installed (PGVECTOR=0
# skips it): HNSW on bit(64) (bit_hamming_ops, <~>) up to PGVECTOR_MAX_ROWS
# (200k: its builds take hours at 1M here) and IVFFlat up to
# PGVECTOR_IVF_MAX_ROWS (10M; lists N/1000 up to 1M rows, sqrt(N) above): the
# rows with baseline "pgvector HNSW ..." and "pgvector IVFFlat ...": builds,
# size, knn10_warm_ms and knn10_recall (recall@10 against sequential scans of
# every query) at ef_search 40 and PGVECTOR_EF (200), at ivfflat.probes 1,
# sqrt(lists) and lists/10, knn10_cold_ms; no radius row (pgvector has none).
# PGVECTOR_ONLY=1 loads the data and measures the pgvector part alone (no
# btree, radius, ingestion or all-pairs rows).  PGVECTOR_HNSW_WITH gives HNSW
# index options other than its defaults (e.g. "m = 8, ef_construction = 16").
# Debian 12 does not package it; without it the context row says so.  Writes $BENCH_RESULTS/scale.csv (rows of other N from
# earlier runs kept) and scale_info.csv (load time, heap size, pairs found, ...).
set -euo pipefail
# one brace group: bash reads the whole script before running it, so editing
# the file during a run of an hour does not change that run
{
cd "$(dirname "$0")/.."
ROOT=$PWD
SIZES=${*:-${SCALE_ROWS:-$((1000000 * ${SCALE:-1}))}}
QUERIES=${QUERIES:-1000}
KNN_QUERIES=${KNN_QUERIES:-100}
COLD_QUERIES=${COLD_QUERIES:-20}
INGEST=${INGEST:-100000}
PAIRS_SAMPLE=${PAIRS_SAMPLE:-5000}   # PAIRS=0 skips the all-pairs part
BENCH_RESULTS=${BENCH_RESULTS:-$ROOT/bench/results}
PGV_ONLY=${PGVECTOR_ONLY:-0}
# the source measured: HEAD when the run starts (a run of an hour outlives
# commits made meanwhile), "+changes" when the tree differed from it
SOURCE=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
git diff --quiet HEAD 2>/dev/null || SOURCE+="+changes"
SEQ_SAMPLE_SET=${SEQ_SAMPLE:-} BUILD_REPS_SET=${BUILD_REPS:-}
mkdir -p "$BENCH_RESULTS"

step() { printf '== %s: %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

# a cluster of our own even under bench/run.sh: that one's directory is not ours
unset TMPC_DIR
source tools/tmp-cluster.sh
if [ -z "${TMPC_BIN:-}" ]; then
	step "building and installing into a private prefix"
	tmpc_install scale
fi
PSQL=$TMPC_BIN/psql
pg() { "$PSQL" -X -q -A -t -v ON_ERROR_STOP=1 -P pager=off "$@"; }
restart() { # the cluster again, with nothing of the table in any cache
	tmpc_as_pg "$TMPC_BIN/pg_ctl" -D "$TMPC_DIR/data" -m fast -w restart >/dev/null
	sync
	echo 3 >/proc/sys/vm/drop_caches
}
COLD=${COLD:-1} COLD_WHY="turned off by COLD=0"
if [ "$COLD" = 1 ] && { [ "$(id -u)" != 0 ] || ! [ -w /proc/sys/vm/drop_caches ]; }; then
	COLD=0 COLD_WHY="dropping the OS cache needs root"
	step "cold measurements skipped: $COLD_WHY"
fi

csv=$(mktemp); info=$(mktemp)
trap 'rm -f "$csv" "$info"; tmpc_cleanup' EXIT
echo "n,metric,unit,simhash,baseline,baseline_value,ratio,note" >"$csv"
echo "n,key,value" >"$info"
row() { # row N METRIC UNIT SIMHASH BASELINE BASELINE_VALUE NOTE
	local r
	r=$(echo "scale=6; $4 / $6" | bc)
	echo "$1,$2,$3,$4,${5//,/;},$6,${r/#./0.},${7//,/;}" | tee -a "$csv"
}

for N in $SIZES; do
	# per N unless given (the first N's defaults must not stick to the next)
	SEQ_SAMPLE=${SEQ_SAMPLE_SET:-$([ "$N" -le 2000000 ] && echo 9 || { [ "$N" -le 20000000 ] && echo 5 || echo 3; })}
	BUILD_REPS=${BUILD_REPS_SET:-$([ "$N" -le 20000000 ] && echo 3 || echo 1)}
	step "N=$N: a new cluster"
	tmpc_mkdir scale
	rm -rf "$TMPC_DIR/data"
	tmpc_start -c shared_buffers=2GB -c maintenance_work_mem=1GB -c work_mem=64MB -c max_wal_size=8GB \
		-c temp_file_limit=${TEMP_FILE_LIMIT:-30GB} -c fsync=off -c full_page_writes=off -c synchronous_commit=off -c autovacuum=off -c jit=off \
		-c max_parallel_workers_per_gather=0 -c max_worker_processes=8 -c max_parallel_workers=8
	pg -c "CREATE EXTENSION simhash" -c "CREATE EXTENSION pg_prewarm"
	vector=0
	[ "$(pg -c "SELECT count(*) FROM pg_available_extensions WHERE name = 'vector'")" != 0 ] && vector=1

	step "N=$N: loading"
	t0=$(date +%s.%N)
	pg -v n="$N" -v queries="$QUERIES" <<'SQL'
BEGIN;
CREATE TABLE t (id int, fp simhash);
INSERT INTO t SELECT i, hashint8extended(i, 0)::simhash FROM generate_series(1, (:n * 9) / 10) i;
-- planted: a copy of row c with k = 1..6 distinct bits flipped (s, s+u, s+2u, ... mod 64, u odd)
INSERT INTO t SELECT (:n * 9) / 10 + i,
       (hashint8extended(c, 0) # (SELECT bit_or(1::bigint << ((s + j * u) & 63)::int) FROM generate_series(0, i % 6) j))::simhash
  FROM (SELECT i, 1 + (hashint8extended(i, 1) & 9223372036854775807) % ((:n * 9) / 10) AS c,
               hashint8extended(i, 2) & 63 AS s, 2 * (hashint8extended(i, 3) & 31) + 1 AS u
          FROM generate_series(1, :n - (:n * 9) / 10) i) p;
COMMIT;
CREATE TABLE bq (qid int, q simhash, fresh bool);
INSERT INTO bq SELECT i, hashint8extended(1 + (hashint8extended(2 * i, 1) & 9223372036854775807) % ((:n * 9) / 10), 0)::simhash, false
  FROM generate_series(1, :queries / 2) i;
INSERT INTO bq SELECT i, hashint8extended(-i, 9)::simhash, true FROM generate_series(:queries / 2 + 1, :queries) i;
VACUUM ANALYZE t;
CHECKPOINT;
CREATE TABLE lat (phase text, kind text, qid int, ms float8, res bigint);
CREATE TABLE builds (rep int, workers int, am text, s float8, bytes bigint);
-- every query shape in one loop, so simhash and btree meet the same machine
-- state query by query: radius (sh, bt) on every `every`-th query, KNN on every
-- knn_every-th fresh one, the sequential scans on every seq_every-th (seqknn:
-- seqknn_every-th fresh) one; 0 = none.  kinds: a subset of sh, bt, knn, seq, seqknn.
CREATE FUNCTION measure(phase text, kinds text[], every int, knn_every int, seq_every int, seqknn_every int)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE r record; t0 timestamptz; n bigint;
BEGIN
  FOR r IN SELECT qid, q, fresh FROM bq ORDER BY qid LOOP
    IF 'sh' = ANY (kinds) AND every > 0 AND r.qid % every = 0 THEN
      t0 := clock_timestamp();
      SELECT count(id) INTO n FROM t WHERE simhash_within(fp, r.q, 3);
      INSERT INTO lat VALUES (phase, 'sh', r.qid, extract(epoch FROM clock_timestamp() - t0) * 1000, n);
    END IF;
    IF 'bt' = ANY (kinds) AND every > 0 AND r.qid % every = 0 THEN
      t0 := clock_timestamp();
      SELECT count(id) INTO n FROM t WHERE fp = r.q;
      INSERT INTO lat VALUES (phase, 'bt', r.qid, extract(epoch FROM clock_timestamp() - t0) * 1000, n);
    END IF;
    IF 'knn' = ANY (kinds) AND r.fresh AND knn_every > 0 AND r.qid % knn_every = 0 THEN
      t0 := clock_timestamp();
      SELECT sum(d) INTO n FROM (SELECT fp <~> r.q AS d FROM t ORDER BY fp <~> r.q LIMIT 10) s;
      INSERT INTO lat VALUES (phase, 'knn', r.qid, extract(epoch FROM clock_timestamp() - t0) * 1000, n);
    END IF;
    IF 'seq' = ANY (kinds) AND seq_every > 0 AND r.qid % seq_every = 0 THEN
      t0 := clock_timestamp();
      SELECT count(id) INTO n FROM t WHERE simhash_distance(fp, r.q) <= 3;
      INSERT INTO lat VALUES (phase, 'seq', r.qid, extract(epoch FROM clock_timestamp() - t0) * 1000, n);
    END IF;
    IF 'seqknn' = ANY (kinds) AND r.fresh AND seqknn_every > 0 AND r.qid % seqknn_every = 0 THEN
      t0 := clock_timestamp();
      SELECT sum(d) INTO n FROM (SELECT simhash_distance(fp, r.q) AS d FROM t ORDER BY 1 LIMIT 10) s;
      INSERT INTO lat VALUES (phase, 'seqknn', r.qid, extract(epoch FROM clock_timestamp() - t0) * 1000, n);
    END IF;
  END LOOP;
END $$;
-- total rows in INSERT ... SELECT statements of 1,000 rows, each committed
-- (ids below -offset); the rate goes into ingest
CREATE TABLE ingest (config text, rows_per_s float8);
CREATE PROCEDURE ingest(config text, total int, off int) LANGUAGE plpgsql AS $$
DECLARE t0 timestamptz := clock_timestamp();
BEGIN
  FOR b IN 0 .. total / 1000 - 1 LOOP
    INSERT INTO t SELECT -(off + b * 1000 + j), hashint8extended(-(off + b * 1000 + j), 5)::simhash
      FROM generate_series(1, 1000) j;
    COMMIT;
  END LOOP;
  INSERT INTO ingest VALUES (config, (total / 1000) * 1000 / extract(epoch FROM clock_timestamp() - t0));
END $$;
SQL
	load_s=$(echo "$(date +%s.%N) - $t0" | bc)
	heap=$(pg -c "SELECT pg_relation_size('t')")
	echo "$N,load_s,$(printf '%.1f' "$load_s")" >>"$info"
	echo "$N,heap_bytes_per_row,$(echo "scale=2; $heap / $N" | bc)" >>"$info"

	# timed_build REP WORKERS LABEL INDEX DDL: index INDEX (re)built by DDL with
	# that many maintenance workers; its time and size go into table builds
	timed_build() {
		local t0 s
		pg -c "DROP INDEX IF EXISTS $4" >/dev/null
		t0=$(date +%s.%N)
		pg -c "SET max_parallel_maintenance_workers = $2" -c "$5"
		s=$(echo "$(date +%s.%N) - $t0" | bc)
		pg -c "INSERT INTO builds VALUES ($1, $2, '$3', $s, pg_relation_size('$4'))"
		echo "   rep $1, workers $2, ${3#pgv-}: $s s" >&2
	}
	bstat() { # median, min, max of the builds of $1 with $2 workers
		pg -F ' ' -c "SELECT round(percentile_cont(0.5) WITHIN GROUP (ORDER BY s)::numeric, 3), round(min(s)::numeric, 3), round(max(s)::numeric, 3)
			FROM builds WHERE am = '$1' AND workers = $2"
	}
	# every query shape uses the plan it stands for
	plan() { pg -c "EXPLAIN (COSTS OFF) $2" | grep -q -- "$1" || { echo "not a $1 plan: $2" >&2; pg -c "EXPLAIN $2" >&2; exit 1; }; }
	# qids: 1..QUERIES/2 planted sources, the rest fresh; KNN on every knn_every-th fresh one
	knn_every=$(((QUERIES / 2) / KNN_QUERIES)); [ $knn_every -ge 1 ] || knn_every=1
	q1=$(pg -c "SELECT q FROM bq WHERE fresh LIMIT 1")

	# PGVECTOR_ONLY=1: the pgvector part alone (below), on the same data
	if [ "$PGV_ONLY" != 1 ]; then
	step "N=$N: builds, $BUILD_REPS of each kind (max_parallel_maintenance_workers 0 and 2; btree, simhash in turn)"
	for rep in $(seq "$BUILD_REPS"); do
		for w in 0 2; do
			for am in btree simhash; do
				timed_build "$rep" "$w" "$am" "t_$am" "CREATE INDEX t_$am ON t USING $am (fp)"
			done
		done
	done
	pg -c "VACUUM ANALYZE t" -c "CHECKPOINT"
	for w in 0 2; do
		read -r sm smin smax < <(bstat simhash $w)
		read -r bm bmin bmax < <(bstat btree $w)
		metric=build_serial_s; [ $w = 2 ] && metric=build_parallel_s
		row "$N" $metric s "$sm" "btree (max_parallel_maintenance_workers = $w)" "$bm" \
			"median of $BUILD_REPS; simhash $(printf '%.2f-%.2f' "$smin" "$smax") s; btree $(printf '%.2f-%.2f' "$bmin" "$bmax") s"
	done
	shb=$(pg -c "SELECT pg_relation_size('t_simhash')")
	btb=$(pg -c "SELECT pg_relation_size('t_btree')")
	row "$N" bytes_per_row bytes "$(echo "scale=2; $shb / $N" | bc)" btree "$(echo "scale=2; $btb / $N" | bc)" "index size / N"

	plan t_simhash "SELECT count(id) FROM t WHERE simhash_within(fp, '$q1', 3)"
	plan t_btree "SELECT count(id) FROM t WHERE fp = '$q1'"
	plan t_simhash "SELECT fp <~> '$q1' AS d FROM t ORDER BY fp <~> '$q1' LIMIT 10"
	plan "Seq Scan" "SELECT count(id) FROM t WHERE simhash_distance(fp, '$q1') <= 3"
	plan "Seq Scan" "SELECT simhash_distance(fp, '$q1') AS d FROM t ORDER BY 1 LIMIT 10"

	step "N=$N: warm: $QUERIES radius-3 queries (simhash, btree equality), $KNN_QUERIES KNN, $SEQ_SAMPLE sequential scans of each kind"
	# the sampled KNN sequential scans fall on queries that the index also ran
	seq_every=$((QUERIES / SEQ_SAMPLE))
	seqknn_every=$((knn_every * (KNN_QUERIES / SEQ_SAMPLE > 0 ? KNN_QUERIES / SEQ_SAMPLE : 1)))
	pg -c "SELECT measure('warmup', '{sh,bt,knn}', 1, $knn_every, 0, 0)" >/dev/null
	pg -c "SELECT measure('warmup', '{seq}', 0, 0, $QUERIES, 0)" >/dev/null
	pg -c "SELECT measure('warm', '{sh,bt,knn,seq,seqknn}', 1, $knn_every, $seq_every, $seqknn_every)" >/dev/null
	bad=$(pg -c "SELECT count(*) FROM lat a JOIN lat b USING (phase, qid)
		WHERE a.phase = 'warm' AND (a.kind, b.kind) IN (('sh', 'seq'), ('knn', 'seqknn')) AND a.res <> b.res")
	[ "$bad" = 0 ] || { echo "FAIL: $bad sampled answers differ from the sequential scan's" >&2; exit 1; }
	lat() { # p50 p99 of a phase and kind
		pg -F ' ' -c "SELECT round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms)::numeric, 4),
			round(percentile_cont(0.99) WITHIN GROUP (ORDER BY ms)::numeric, 4), round(min(ms)::numeric, 4), round(max(ms)::numeric, 4), count(*)
			FROM lat WHERE phase = '$1' AND kind = '$2'"
	}
	read -r sh50 sh99 _ _ shn < <(lat warm sh)
	read -r bt50 bt99 _ _ _ < <(lat warm bt)
	read -r sq50 _ sqmin sqmax sqn < <(lat warm seq)
	read -r kn50 kn99 _ _ knn < <(lat warm knn)
	read -r sk50 _ skmin skmax skn < <(lat warm seqknn)
	row "$N" radius3_warm_ms ms "$sh50" "btree equality" "$bt50" \
		"p50 of $shn queries; p99 simhash $(printf '%.3f' "$sh99") ms; btree $(printf '%.3f' "$bt99") ms"
	row "$N" radius3_warm_ms ms "$sh50" "sequential scan" "$sq50" \
		"median of $sqn sequential scans ($(printf '%.0f-%.0f' "$sqmin" "$sqmax") ms)"
	row "$N" knn10_warm_ms ms "$kn50" "sequential scan + top-N" "$sk50" \
		"p50 of $knn random queries (p99 $(printf '%.2f' "$kn99") ms); median of $skn sequential scans ($(printf '%.0f-%.0f' "$skmin" "$skmax") ms)"
	echo "$N,radius3_answers_per_query,$(pg -c "SELECT round(avg(res), 2) FROM lat WHERE phase = 'warm' AND kind = 'sh'")" >>"$info"

	# the index nested loop baseline of simhash_pairs now, while the index is
	# there; simhash_pairs itself runs last (below), the longest part at 100M
	if [ "${PAIRS:-1}" != 0 ]; then
	step "N=$N: index nested loop at radius 3 on $PAIRS_SAMPLE rows (the baseline of simhash_pairs)"
	# the probe rows: ids 1..PAIRS_SAMPLE are random rows; taken out beforehand
	pg -c "CREATE TABLE ps AS SELECT id, fp FROM t WHERE id BETWEEN 1 AND $PAIRS_SAMPLE" -c "ANALYZE ps"
	plan t_simhash "SELECT count(*) FROM ps a JOIN t b ON simhash_within(b.fp, a.fp, 3) AND a.id < b.id"
	nl_s=$(pg -c "
CREATE TEMP TABLE pr AS SELECT clock_timestamp() AS t0,
  (SELECT count(*) FROM ps a JOIN t b ON simhash_within(b.fp, a.fp, 3) AND a.id < b.id) AS n;
SELECT round(extract(epoch FROM clock_timestamp() - t0) * $N / $PAIRS_SAMPLE, 3) FROM pr")
	fi

	if [ $COLD = 1 ]; then
		step "N=$N: cold: a restart and an emptied OS cache before each kind"
		for k in sh bt knn seq seqknn; do
			restart
			case $k in
				seq) pg -c "SELECT measure('cold', '{seq}', 0, 0, $QUERIES, 0)" >/dev/null ;;
				seqknn) pg -c "SELECT measure('cold', '{seqknn}', 0, 0, 0, $QUERIES)" >/dev/null ;;
				knn) pg -c "SELECT measure('cold', '{knn}', 0, $(((QUERIES / 2) / COLD_QUERIES)), 0, 0)" >/dev/null ;;
				*) pg -c "SELECT measure('cold', '{$k}', $((QUERIES / COLD_QUERIES)), 0, 0, 0)" >/dev/null ;;
			esac
		done
		read -r csh _ cshmin cshmax cshn < <(lat cold sh)
		read -r cbt _ cbtmin cbtmax _ < <(lat cold bt)
		read -r csq _ _ _ _ < <(lat cold seq)
		read -r ckn _ cknmin cknmax cknn < <(lat cold knn)
		read -r csk _ _ _ _ < <(lat cold seqknn)
		row "$N" radius3_cold_ms ms "$csh" "btree equality" "$cbt" \
			"p50 of $cshn queries after restart + drop_caches; simhash $(printf '%.2f-%.2f' "$cshmin" "$cshmax") ms; btree $(printf '%.2f-%.2f' "$cbtmin" "$cbtmax") ms"
		row "$N" radius3_cold_ms ms "$csh" "sequential scan" "$csq" "one sequential scan after restart + drop_caches"
		row "$N" knn10_cold_ms ms "$ckn" "sequential scan + top-N" "$csk" \
			"p50 of $cknn random queries ($(printf '%.2f-%.2f' "$cknmin" "$cknmax") ms); one sequential scan"
	fi

	fi # PGVECTOR_ONLY

	# pgvector, the approximate peer, on the same N fingerprints as bit(64)
	# (bit_hamming_ops, <~>), beside the simhash index: HNSW (pgvector's
	# defaults m 16, ef_construction 64, or the index options PGVECTOR_HNSW_WITH
	# gives, e.g. "m = 8, ef_construction = 16"; table tv) up to PGVECTOR_MAX_ROWS and
	# IVFFlat (lists by pgvector's guidance: N/1000 up to 1M rows, sqrt(N) above;
	# table tvi) up to PGVECTOR_IVF_MAX_ROWS.  Builds interleaved with simhash
	# builds (HNSW with max_parallel_maintenance_workers PGVECTOR_BUILD_WORKERS,
	# default "0 2"; IVFFlat PGVECTOR_IVF_BUILD_WORKERS, default "0"), size, KNN
	# LIMIT 10 on the KNN queries above, paired per query with simhash: HNSW at
	# ef_search 40 (pgvector's default) and PGVECTOR_EF (200), IVFFlat at
	# ivfflat.probes 1 (its default), sqrt(lists) (its guidance) and lists/10;
	# recall@10 against the exact answer (a sequential scan, for every query);
	# cold as above (HNSW at ef_search 40, IVFFlat at sqrt(lists)).  No radius
	# row: pgvector has no radius search through an index.  HNSW builds are
	# slow on these codes (bench/REPORT.md): a serial one of 200k rows took
	# 1,127 s here (2 shared cores, load 6-9).
	source bench/pgvector.sh
	PGV_MAX=${PGVECTOR_MAX_ROWS:-200000} PGV_IVF_MAX=${PGVECTOR_IVF_MAX_ROWS:-10000000}
	PGV_EF=${PGVECTOR_EF:-200} PGV_REPS=${PGVECTOR_BUILD_REPS:-1}
	PGV_WORKERS=${PGVECTOR_BUILD_WORKERS:-"0 2"} PGV_IVF_WORKERS=${PGVECTOR_IVF_BUILD_WORKERS:-0}
	hnsw=0 ivf=0
	[ "$N" -gt "$PGV_MAX" ] || hnsw=1
	[ "$N" -gt "$PGV_IVF_MAX" ] || ivf=1
	if [ $vector = 0 ]; then
		pgv="not installed ($PGVECTOR_HOWTO)"
	elif [ "${PGVECTOR:-1}" = 0 ]; then
		pgv="skipped (PGVECTOR=0)"
	elif [ $hnsw = 0 ] && [ $ivf = 0 ]; then
		pgv="skipped (N above PGVECTOR_MAX_ROWS = $PGV_MAX and PGVECTOR_IVF_MAX_ROWS = $PGV_IVF_MAX)"
	else
		pg -c "CREATE EXTENSION vector"
		lists=$(pgvector_ivf_lists "$N")
		read -r -a probes <<<"$(pgvector_ivf_probes "$lists")"
		pgv="$(pgvector_status "$(pg -c "SELECT setting FROM pg_config WHERE name = 'SHAREDIR'")/extension"); "
		hnsw_with=${PGVECTOR_HNSW_WITH:+ WITH ($PGVECTOR_HNSW_WITH)}
		if [ $hnsw = 1 ]; then pgv+="HNSW bit_hamming_ops, ${PGVECTOR_HNSW_WITH:-m 16, ef_construction 64}"
		else pgv+="HNSW skipped (N above PGVECTOR_MAX_ROWS = $PGV_MAX)"; fi
		# IVFFlat's k-means wants about 200 * lists^2 bytes (its bounds, 4 bytes per
		# sample and list, 50 samples a list) within maintenance_work_mem, 1GB
		# here: its build gets that much more when it needs it (2.1GB at 10M rows)
		ivf_mwm=$(((lists * lists * 220 >> 20) + 64)); [ $ivf_mwm -ge 1024 ] || ivf_mwm=1024
		if [ $ivf = 1 ]; then pgv+="; IVFFlat bit_hamming_ops, lists $lists, probes ${probes[*]}, maintenance_work_mem ${ivf_mwm}MB"
		else pgv+="; IVFFlat skipped (N above PGVECTOR_IVF_MAX_ROWS = $PGV_IVF_MAX)"; fi
		step "N=$N: pgvector: $pgv"
		kinds="sh" pgw=""
		[ $hnsw = 0 ] || { kinds+=",hnsw"; pg -c "CREATE TABLE tv AS SELECT id, fp::bigint::bit(64) AS b FROM t" -c "VACUUM ANALYZE tv"; }
		[ $ivf = 0 ] || { kinds+=",ivf"; pg -c "CREATE TABLE tvi AS SELECT id, fp::bigint::bit(64) AS b FROM t" -c "VACUUM ANALYZE tvi"; }
		pg <<'SQL'
CREATE TABLE pgv_lat (phase text, kind text, ef int, qid int, ms float8, d int[]);
-- the fresh queries with qid % every = 0; kinds: sh (the simhash index), hnsw
-- (once per ef_search in efs), ivf (once per ivfflat.probes in probes), exact
-- (a sequential scan); d: the distances
CREATE FUNCTION pgv_measure(phase text, kinds text[], efs int[], probes int[], every int) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE r record;
BEGIN
  FOR r IN SELECT qid, q FROM bq WHERE fresh AND qid % every = 0 ORDER BY qid LOOP
    PERFORM pgv_one(phase, r.qid, r.q, kinds, efs, probes);
  END LOOP;
END $$;
SQL
		pg -c "$PGVECTOR_ONE_SQL"
		# every maintenance_workers setting either peer is built with
		for w in $PGV_WORKERS $PGV_IVF_WORKERS; do [[ " $pgw " == *" $w "* ]] || pgw+=" $w"; done
		[ $hnsw = 1 ] || pgw=" $PGV_IVF_WORKERS"
		[ $ivf = 1 ] || pgw=" $PGV_WORKERS"
		on() { [[ " $2 " == *" $1 "* ]]; } # on W "LIST"
		step "N=$N: pgvector: builds, $PGV_REPS of each kind (max_parallel_maintenance_workers$pgw; simhash, HNSW, IVFFlat in turn)"
		for rep in $(seq "$PGV_REPS"); do
			for w in $pgw; do
				timed_build "$rep" "$w" pgv-simhash t_simhash "CREATE INDEX t_simhash ON t USING simhash (fp)"
				if [ $hnsw = 1 ] && on "$w" "$PGV_WORKERS"; then
					timed_build "$rep" "$w" pgv-hnsw tv_hnsw "CREATE INDEX tv_hnsw ON tv USING hnsw (b bit_hamming_ops)$hnsw_with"
				fi
				if [ $ivf = 1 ] && on "$w" "$PGV_IVF_WORKERS"; then
					timed_build "$rep" "$w" pgv-ivf tvi_ivf "SET maintenance_work_mem = '${ivf_mwm}MB'; CREATE INDEX tvi_ivf ON tvi USING ivfflat (b bit_hamming_ops) WITH (lists = $lists)"
				fi
			done
		done
		[ $hnsw = 0 ] || pg -c "VACUUM ANALYZE tv"
		[ $ivf = 0 ] || pg -c "VACUUM ANALYZE tvi"
		pg -c "CHECKPOINT"
		shbytes=$(echo "scale=2; $(pg -c "SELECT pg_relation_size('t_simhash')") / $N" | bc)
		prewarm="pg_prewarm('t'), pg_prewarm('t_simhash')"
		# peer_rows AM LABEL INDEX TABLE WORKERS: the build and size rows of one peer
		peer_rows() {
			local w sm smin smax pm pmin pmax metric
			for w in $5; do
				read -r sm smin smax < <(bstat pgv-simhash "$w")
				read -r pm pmin pmax < <(bstat "pgv-$1" "$w")
				metric=build_serial_s; [ "$w" = 0 ] || metric=build_parallel_s
				row "$N" $metric s "$sm" "pgvector $2 (max_parallel_maintenance_workers = $w)" "$pm" \
					"median of $PGV_REPS; simhash $(printf '%.2f-%.2f' "$smin" "$smax") s; $2 $(printf '%.2f-%.2f' "$pmin" "$pmax") s; interleaved"
			done
			row "$N" bytes_per_row bytes "$shbytes" "pgvector $2" "$(echo "scale=2; $(pg -c "SELECT pg_relation_size('$3')") / $N" | bc)" "index size / N"
			echo "$N,pgvector_${1}_heap_bytes_per_row,$(echo "scale=2; $(pg -c "SELECT pg_relation_size('$4')") / $N" | bc)" >>"$info"
		}
		qb1=$(pg -c "SELECT q::bigint::bit(64) FROM bq WHERE fresh LIMIT 1")
		if [ $hnsw = 1 ]; then
			peer_rows hnsw HNSW tv_hnsw tv "$PGV_WORKERS"
			prewarm+=", pg_prewarm('tv'), pg_prewarm('tv_hnsw')"
			plan tv_hnsw "SELECT b <~> '$qb1' AS d FROM tv ORDER BY b <~> '$qb1' LIMIT 10"
		fi
		if [ $ivf = 1 ]; then
			peer_rows ivf IVFFlat tvi_ivf tvi "$PGV_IVF_WORKERS"
			prewarm+=", pg_prewarm('tvi'), pg_prewarm('tvi_ivf')"
			for p in "${probes[@]}"; do
				pg -c "SET ivfflat.probes = $p" -c "EXPLAIN (COSTS OFF) SELECT b <~> '$qb1' AS d FROM tvi ORDER BY b <~> '$qb1' LIMIT 10" | grep -q tvi_ivf ||
					{ echo "not a tvi_ivf plan at ivfflat.probes $p" >&2; exit 1; }
			done
		fi
		efs="40,$PGV_EF" prs=$(IFS=,; echo "${probes[*]}")
		step "N=$N: pgvector: warm: $KNN_QUERIES KNN queries by {$kinds} in turn$([ $hnsw = 0 ] || echo " (HNSW ef_search $efs)")$([ $ivf = 0 ] || echo " (IVFFlat probes $prs)"); the exact answers by sequential scans"
		pg -c "SELECT $prewarm" >/dev/null
		pg -c "SELECT pgv_measure('warmup', '{$kinds}', '{$efs}', '{$prs}', $knn_every)" >/dev/null
		pg -c "SELECT pgv_measure('warm', '{$kinds}', '{$efs}', '{$prs}', $knn_every)" >/dev/null
		pg -c "SELECT pgv_measure('truth', '{exact}', '{}', '{}', $knn_every)" >/dev/null
		bad=$(pg -c "SELECT count(*) FROM pgv_lat a JOIN pgv_lat e USING (qid)
			WHERE a.phase = 'warm' AND a.kind = 'sh' AND e.phase = 'truth' AND a.d IS DISTINCT FROM e.d")
		[ "$bad" = 0 ] || { echo "FAIL: $bad simhash KNN answers differ from the sequential scan's" >&2; exit 1; }
		plat() { # p50 p99 min max count of a phase, kind and ef_search or probes
			pg -F ' ' -c "SELECT round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms)::numeric, 4),
				round(percentile_cont(0.99) WITHIN GROUP (ORDER BY ms)::numeric, 4), round(min(ms)::numeric, 4), round(max(ms)::numeric, 4), count(*)
				FROM pgv_lat WHERE phase = '$1' AND kind = '$2' AND ef IS NOT DISTINCT FROM ${3:-NULL}"
		}
		# recall@10: the returned distances that the exact answer's (a multiset) has
		# too, / 10: a row at a tied distance counts as right, a nearer row
		# missed counts as missed even when the 10th is tied
		recall() { # KIND EF: mean recall, queries answered exactly, queries
			pg -F ' ' -c "SELECT round(avg((SELECT coalesce(sum(least(a.c, b.c)), 0) FROM
					(SELECT x, count(*) AS c FROM unnest(h.d) x GROUP BY x) a JOIN
					(SELECT x, count(*) AS c FROM unnest(e.d) x GROUP BY x) b USING (x)) / 10.0), 4),
				count(*) FILTER (WHERE h.d = e.d), count(*)
				FROM pgv_lat h JOIN pgv_lat e USING (qid) WHERE h.phase = 'warm' AND h.kind = '$1' AND h.ef = $2 AND e.phase = 'truth'"
		}
		# knn_rows KIND LABEL PARAM VALUE NOTE: the warm KNN and recall rows of one setting
		knn_rows() {
			local p50 p99 rec rex rn
			read -r p50 p99 _ _ _ < <(plat warm "$1" "$4")
			read -r rec rex rn < <(recall "$1" "$4")
			row "$N" knn10_warm_ms ms "$s50" "pgvector $2 ($3)" "$p50" \
				"p50 of $sn random queries; p99 simhash $(printf '%.2f' "$s99") ms; $2 $(printf '%.2f' "$p99") ms; $2 recall@10 $rec$5"
			row "$N" knn10_recall fraction 1 "pgvector $2 ($3)" "$rec" \
				"$sn random queries; exact answers (sequential scan): simhash $sn of $sn; $2 $rex of $rn$5"
		}
		read -r s50 s99 _ _ sn < <(plat warm sh)
		if [ $hnsw = 1 ]; then
			for ef in 40 "$PGV_EF"; do knn_rows hnsw HNSW "ef_search = $ef" "$ef" ""; done
		fi
		if [ $ivf = 1 ]; then
			for i in "${!probes[@]}"; do
				knn_rows ivf IVFFlat "probes = ${PGVECTOR_IVF_PROBE_RULES[$i]}" "${probes[$i]}" "; probes ${probes[$i]} of $lists lists"
			done
		fi
		echo "$N,pgvector_radius,n/a (pgvector has no radius search through an index)" >>"$info"

		if [ $COLD = 1 ]; then
			step "N=$N: pgvector: cold: a restart and an emptied OS cache before each kind"
			for k in ${kinds//,/ }; do
				restart
				pg -c "SELECT pgv_measure('cold', '{$k}', '{40}', '{${probes[1]}}', $(((QUERIES / 2) / COLD_QUERIES)))" >/dev/null
			done
			read -r c50 _ cmin cmax cn < <(plat cold sh)
			if [ $hnsw = 1 ]; then
				read -r ch50 _ chmin chmax _ < <(plat cold hnsw 40)
				row "$N" knn10_cold_ms ms "$c50" "pgvector HNSW (ef_search = 40)" "$ch50" \
					"p50 of $cn random queries after restart + drop_caches; simhash $(printf '%.2f-%.2f' "$cmin" "$cmax") ms; HNSW $(printf '%.2f-%.2f' "$chmin" "$chmax") ms"
			fi
			if [ $ivf = 1 ]; then
				read -r ci50 _ cimin cimax _ < <(plat cold ivf "${probes[1]}")
				row "$N" knn10_cold_ms ms "$c50" "pgvector IVFFlat (probes = sqrt(lists))" "$ci50" \
					"p50 of $cn random queries after restart + drop_caches; simhash $(printf '%.2f-%.2f' "$cmin" "$cmax") ms; IVFFlat $(printf '%.2f-%.2f' "$cimin" "$cimax") ms; probes ${probes[1]} of $lists lists"
			fi
		fi
		pg -c "SET client_min_messages = warning" -c "DROP TABLE IF EXISTS tv, tvi"
	fi
	echo "$N,pgvector,${pgv//,/;}" >>"$info"

	if [ "$PGV_ONLY" = 1 ]; then
		echo "$N,pairs,skipped (PGVECTOR_ONLY=1)" >>"$info"
	else
	step "N=$N: ingestion, $INGEST rows in statements of 1,000: simhash alone, no index, btree alone"
	pg -c "DROP INDEX t_btree" -c "CALL ingest('simhash', $INGEST, 0)"
	pg -c "DROP INDEX t_simhash" -c "CALL ingest('none', $INGEST, $INGEST)"
	pg -c "CREATE INDEX t_btree ON t (fp)" -c "CALL ingest('btree', $INGEST, $((2 * INGEST)))"
	ing() { pg -c "SELECT round(rows_per_s) FROM ingest WHERE config = '$1'"; }
	ish=$(ing simhash)
	row "$N" ingest_rows_per_s rows/s "$ish" "btree alone" "$(ing btree)" "$INGEST rows: INSERT ... SELECT of 1000 rows a statement; each committed"
	row "$N" ingest_rows_per_s rows/s "$ish" "no index" "$(ing none)" "same"

	# simhash_pairs on the N loaded rows, as a user with the index runs it:
	# the ingested rows (ids below 0) deleted, the btree dropped, the simhash
	# index built again (not timed), so that simhash_pairs streams the
	# index's permuted tables (bench/pairs_index.sh pairs that path with the
	# per-table joins, which it replaced on such a table).  A join path, were
	# it taken, writes sort files: temp_file_limit (TEMP_FILE_LIMIT) guards
	# the disk, and the peak of base/pgsql_tmp is sampled every 2 s.
	# PAIRS_UNTIL (a time `date -d` reads, e.g. "08:30 UTC") gives up at that time
	# (statement_timeout) and writes how long it ran instead of the rows.
	need=$((N * 100)) free=$(df --output=avail -B1 "$TMPC_DIR" | tail -1)
	if [ "${PAIRS:-1}" = 0 ] || [ $((need * 2)) -gt "$free" ]; then
		why="PAIRS=0"; [ "${PAIRS:-1}" = 0 ] || why="about $((need >> 30)) GiB of temporary files expected, $((free >> 30)) GiB free"
		step "N=$N: all pairs skipped: $why"
		echo "$N,pairs,skipped ($why)" >>"$info"
	else
		timeout_ms=0
		if [ -n "${PAIRS_UNTIL:-}" ]; then
			timeout_ms=$((($(date -d "$PAIRS_UNTIL" +%s) - $(date +%s)) * 1000))
			[ $timeout_ms -gt 0 ] || timeout_ms=1
		fi
		step "N=$N: all pairs: the ingested rows deleted, the simhash index built again"
		pg -c "DELETE FROM t WHERE id <= 0" -c "DROP INDEX IF EXISTS t_btree" -c "VACUUM t" \
			-c "CREATE INDEX t_simhash ON t USING simhash (fp)"
		pairs_path=$(pg -c "SELECT coalesce(simhash_pairs_index_for('t', 'fp', 3)::text, 'the per-table joins')")
		step "N=$N: all pairs at radius 3 (simhash_pairs through $pairs_path; statement_timeout ${timeout_ms} ms)"
		echo "$N,pairs_path,$pairs_path" >>"$info"
		peakf=$TMPC_DIR/pairs_temp_peak
		echo 0 >"$peakf"
		(
			peak=0
			while :; do
				b=$(du -sb "$TMPC_DIR/data/base/pgsql_tmp" 2>/dev/null | cut -f1) || b=0
				[ "${b:-0}" -le $peak ] || { peak=$b; echo $peak >"$peakf"; }
				sleep 2
			done
		) &
		sampler=$!
		t0=$(date +%s.%N)
		pairs_out=$(pg -F ' ' -c "SET work_mem = '256MB'" -c "SET statement_timeout = $timeout_ms" \
			-c "
CREATE TEMP TABLE pr AS SELECT clock_timestamp() AS t0, (SELECT count(*) FROM simhash_pairs('t', 'fp', 'id', 3)) AS n;
SELECT round(extract(epoch FROM clock_timestamp() - t0), 3), n FROM pr" 2>&1) || true
		ran_s=$(echo "$(date +%s.%N) - $t0" | bc)
		kill $sampler; wait $sampler 2>/dev/null || true
		peak=$(cat "$peakf")
		echo "$N,pairs_temp_peak_bytes,$peak" >>"$info"
		echo "   temp files of simhash_pairs, peak: $peak bytes" >&2
		if read -r pairs_s npairs <<<"$pairs_out" && [[ $npairs =~ ^[0-9]+$ ]]; then
			row "$N" pairs_s s "$pairs_s" "index nested loop (simhash_within self-join)" "$nl_s" \
				"$npairs pairs through $pairs_path; work_mem 256MB; nested loop timed on $PAIRS_SAMPLE rows, scaled to N"
			row "$N" pairs_s s "$pairs_s" "sequential-scan nested loop" "$(echo "scale=3; $sq50 * $N / 1000" | bc)" \
				"extrapolated: N x the sequential scan's time per query"
			echo "$N,pairs_radius3,$npairs" >>"$info"
		else
			echo "$pairs_out" >&2
			why="did not finish: $(echo "$pairs_out" | grep -o 'ERROR: .*' | head -1 | tr , ';') after $(printf '%.0f' "$ran_s") s"
			step "N=$N: simhash_pairs $why"
			echo "$N,pairs,$why; index nested loop $nl_s s (scaled to N)" >>"$info"
		fi
	fi
	fi # PGVECTOR_ONLY
	[ "$COLD" = 1 ] || echo "$N,cold,skipped ($COLD_WHY)" >>"$info"
	echo "$N,load_1min_at_end,$(cut -d' ' -f1 /proc/loadavg)" >>"$info"
	echo "$N,commit,$SOURCE" >>"$info"
	echo "$N,postgresql,$("$TMPC_BIN/postgres" -V | awk '{print $3}')" >>"$info"
	tmpc_stop
	rm -rf "$TMPC_DIR/data"
done

# keep the rows of other sizes from earlier runs
for f in scale scale_info; do
	new=$csv; [ $f = scale_info ] && new=$info
	if [ -f "$BENCH_RESULTS/$f.csv" ]; then
		tail -n +2 "$BENCH_RESULTS/$f.csv" | awk -F, -v s=" $SIZES " 'index(s, " " $1 " ") == 0' >"$new.old"
		{ head -1 "$new"; sort -t, -k1,1n -s "$new.old" <(tail -n +2 "$new"); } >"$new.all"
		mv "$new.all" "$new"
		rm -f "$new.old"
	fi
	cp "$new" "$BENCH_RESULTS/$f.csv"
	chmod 644 "$BENCH_RESULTS/$f.csv"
done
step "results ($BENCH_RESULTS/scale.csv; ratio = simhash / baseline)"
column -t -s, "$BENCH_RESULTS/scale.csv" >&2
column -t -s, "$BENCH_RESULTS/scale_info.csv" >&2
exit
}
