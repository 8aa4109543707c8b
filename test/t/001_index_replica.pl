# A streaming replica of a simhash index answers exactly as the primary,
# through the whole write workload (bulk build, inserts, single-row inserts
# that flush and merge, deletes, updates, VACUUM, concurrent clients,
# REINDEX, REINDEX CONCURRENTLY, a build with 1MB of maintenance_work_mem),
# and after its promotion.
#
# The primary runs with wal_consistency_checking = 'all', so the replica also
# compares every page it replays with the full-page image the primary logged:
# a redo routine that builds a different page fails the test at once.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use SimhashTAP;

my $primary = PostgreSQL::Test::Cluster->new('primary');
$primary->init(allows_streaming => 1);
$primary->append_conf('postgresql.conf', qq(
wal_consistency_checking = 'all'
wal_keep_size = '2GB'
max_parallel_workers_per_gather = 0
jit = off
));
$primary->start;
$primary->safe_psql('postgres', 'CREATE EXTENSION simhash');

my $backup = 'base';
$primary->backup($backup);
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, $backup, has_streaming => 1);
$standby->append_conf('postgresql.conf', "max_standby_streaming_delay = '5s'\n");
$standby->start;

# Every query answer, as text, through the index only (and by a sequential scan).
my ($queries, $seqscan) = index_queries(radius_to => 5, radius_every => 211, knn_every => 401,
	extra => "SELECT count(*) FROM t WHERE h ~% 1891547140177887264;\n");

sub compare
{
	my ($step) = @_;
	$primary->wait_for_catchup($standby);
	my $on_primary = $primary->safe_psql('postgres', $queries);
	my $on_standby = $standby->safe_psql('postgres', $queries);
	my $by_seqscan = $primary->safe_psql('postgres', $seqscan);
	ok(length($on_primary) > 1000, "$step: queries return rows");
	is($on_primary, $by_seqscan, "$step: primary index scan = sequential scan");
	is($on_standby, $on_primary, "$step: standby = primary");

	my ($rc, $out, $err) = $standby->psql('postgres',
		"SELECT simhash_index_check('t_fp'), simhash_index_check('t_h')");
	if ($rc == 0)
	{
		pass("$step: simhash_index_check on the standby");
	}
	else
	{
		note "simhash_index_check refused on the standby: $err";
		$primary->safe_psql('postgres',
			"SELECT simhash_index_check('t_fp'), simhash_index_check('t_h')");
		pass("$step: simhash_index_check on the primary");
	}
}

# near copies of a few centres, so that answers are not empty
$primary->safe_psql('postgres', q{
CREATE TABLE t (id int PRIMARY KEY, fp simhash, h bigint);
INSERT INTO t SELECT i, v::simhash, v
  FROM (SELECT i, ('x' || md5((i / 4)::text))::bit(64)::bigint # (7::bigint << (i % 60)) AS v
          FROM generate_series(1, 8000) i) s;
INSERT INTO t VALUES (0, NULL, NULL);
CREATE INDEX t_fp ON t USING simhash (fp) WITH (bits = 3, blocks = 5);
CREATE INDEX t_h ON t USING simhash (h simhash_bigint_ops) WITH (bits = 2, blocks = 4);
});
compare('bulk build');

# single-row inserts beyond the pending-list limit, then deletes and updates
$primary->safe_psql('postgres', q{
INSERT INTO t SELECT i, v::simhash, v
  FROM (SELECT i, ('x' || md5((i / 3)::text))::bit(64)::bigint # (1::bigint << (i % 64)) AS v
          FROM generate_series(8001, 14000) i) s;
});
compare('inserts');
$primary->safe_psql('postgres', q{
DELETE FROM t WHERE id % 5 = 0;
UPDATE t SET fp = (fp::bigint # 1)::simhash, h = h # 2 WHERE id % 7 = 0;
});
compare('deletes and updates');
$primary->safe_psql('postgres', 'VACUUM t');
compare('vacuum');

# Index-only scans rest on the scan/VACUUM interlock, which replay does not
# honour: the primary plans them, the standby plain index scans (whose heap
# visit decides), radius and KNN alike.  The heap is all-visible after the
# VACUUM, so the primary's plan is the index-only one.
for my $q (q{SELECT fp FROM t WHERE simhash_within(fp, (SELECT fp FROM t WHERE id = 1), 3)},
	q{SELECT fp FROM t ORDER BY fp <~> (SELECT fp FROM t WHERE id = 1) LIMIT 8},
	q{SELECT h FROM t WHERE h ~% 1891547140177887264})
{
	my $explain = "SET enable_seqscan = off; SET enable_bitmapscan = off; EXPLAIN (COSTS OFF) $q";
	$primary->wait_for_catchup($standby);
	like($primary->safe_psql('postgres', $explain), qr/Index Only Scan using t_(fp|h)\b/,
		"primary plans an index-only scan: $q");
	my $plan = $standby->safe_psql('postgres', $explain);
	like($plan, qr/Index Scan using t_(fp|h)\b/, "standby plans a plain index scan: $q");
	unlike($plan, qr/Index Only Scan/, "standby plans no index-only scan: $q");
}
$primary->safe_psql('postgres', q{
INSERT INTO t SELECT i, v::simhash, v
  FROM (SELECT i, ('x' || md5((i / 2)::text))::bit(64)::bigint AS v FROM generate_series(20001, 23000) i) s;
});
compare('inserts after vacuum');
# Four clients at once: inserts (pending-list merges), deletes, VACUUM, and
# scans that compare the index with a sequential scan in one snapshot (a
# difference divides by zero, which aborts the client and fails pgbench).
$primary->safe_psql('postgres', 'CREATE SEQUENCE ids START 100000');
my $snapshot_check = sub {
	my ($count_sql) = @_;
	return qq{\\set g random(1, 5000)
BEGIN ISOLATION LEVEL REPEATABLE READ;
SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off;
$count_sql \\gset by_index_
SET LOCAL enable_seqscan = on; SET LOCAL enable_indexscan = off;
$count_sql \\gset by_seqscan_
SELECT CASE WHEN :by_index_n = :by_seqscan_n THEN 1 ELSE 1 / 0 END;
COMMIT;
};
};
$primary->pgbench(
	'--no-vacuum --client=4 --jobs=2 --transactions=750',
	0,
	[qr{actually processed: 3000/3000}],
	[qr{}],
	'concurrent inserts, deletes, VACUUM and checked scans',
	{
		'insert@8' => q{\set g random(1, 5000)
INSERT INTO t SELECT nextval('ids'), v::simhash, v
  FROM (SELECT ('x' || md5((:g / 4)::text))::bit(64)::bigint # (3::bigint << (:g % 62)) AS v) s;
},
		'delete@2' => q{\set d random(1, 23000)
DELETE FROM t WHERE id = :d;
},
		'vacuum@1' => q{VACUUM t;
},
		'within@3' => $snapshot_check->(
			q{SELECT count(*) AS n FROM t WHERE simhash_within(fp, ('x' || md5((:g / 4)::text))::bit(64)::simhash, 3);}),
		'knn@2' => $snapshot_check->(
			q{SELECT sum(d) AS n FROM (SELECT fp <~> ('x' || md5((:g / 4)::text))::bit(64)::simhash AS d FROM t ORDER BY 1 LIMIT 10) s;}),
	});
compare('concurrent clients');

# A scan open on the standby while the primary's inserts merge the pending
# list three times (merges recycle the pages earlier merges retired): the scan
# either returns exactly what its snapshot holds or fails (40001, or a
# recovery conflict), never wrong rows.  Only inserts on the primary, no
# VACUUM, so the heap gives no recovery conflict of its own.
$primary->safe_psql('postgres', 'VACUUM t');    # nothing left for the heap to prune later
$primary->wait_for_catchup($standby);
my $q = q{('x' || md5('17'))::bit(64)::simhash};
my $scan = $standby->background_psql('postgres', on_error_stop => 0);
$scan->query_safe(qq{\\set VERBOSITY verbose
BEGIN ISOLATION LEVEL REPEATABLE READ;
SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off;
DECLARE c NO SCROLL CURSOR FOR SELECT fp <~> $q AS d FROM t ORDER BY fp <~> $q});
my $want = $scan->query_safe(qq{SET LOCAL enable_indexscan = off;
SELECT string_agg(d::text, ',' ORDER BY d) FROM (SELECT fp <~> $q AS d FROM t ORDER BY 1 LIMIT 400) s;
SET LOCAL enable_indexscan = on});
my $first = $scan->query_safe('FETCH 5 FROM c');
for my $round (1 .. 3)
{
	$primary->safe_psql('postgres', qq{
INSERT INTO t SELECT nextval('ids'), v::simhash, v
  FROM (SELECT ('x' || md5(('r$round' || i)::text))::bit(64)::bigint AS v FROM generate_series(1, 9000) i) s});
}
$primary->wait_for_catchup($standby);
my ($rest, $failed) = ('', 1);
eval { ($rest, $failed) = $scan->query('FETCH 395 FROM c'); };
my $err = $scan->{stderr} . ($@ // '');
eval { $scan->quit; };
my $got = join(',', split(/\n/, "$first\n$rest"));
if ($failed)
{
	like($err, qr/ 40001: |conflict with recovery/, "standby scan across recycled pages: fails with 40001 ($err)");
}
else
{
	is($got, $want, 'standby scan across recycled pages: same rows as its snapshot');
}

# Single-row INSERT statements into a one-page pending buffer: they flush it
# into runs, and the flushes lead to tier merges (a run of level >= 1 newer
# than every run before: only a merge writes one).
sub single_row_inserts
{
	my ($node, $n) = @_;
	$node->safe_psql('postgres', qq{
DO \$\$BEGIN
  FOR i IN 1..$n LOOP
    INSERT INTO t SELECT nextval('ids'), v::simhash, v
      FROM (SELECT ('x' || md5((i / 4)::text))::bit(64)::bigint # (5::bigint << (i % 61)) AS v) s;
  END LOOP;
END\$\$});
}
my $newest_sql = q{SELECT coalesce(max(generation), 0) FROM simhash_index_runs('t_fp') WHERE kind = 'run'};
$primary->safe_psql('postgres', 'ALTER INDEX t_fp SET (pending_pages = 1)');
my $gen0 = $primary->safe_psql('postgres', $newest_sql);
single_row_inserts($primary, 4000);
is($primary->safe_psql('postgres', qq{SELECT count(*) > 0 FROM simhash_index_runs('t_fp')
  WHERE kind = 'run' AND level >= 1 AND generation > $gen0}), 't',
	'single-row inserts flushed the pending buffer and merged the runs');
compare('single-row inserts that flush and merge');

$primary->safe_psql('postgres', 'REINDEX INDEX t_fp');
compare('reindex');
$primary->safe_psql('postgres', 'REINDEX INDEX CONCURRENTLY t_fp');
$primary->safe_psql('postgres', 'REINDEX INDEX CONCURRENTLY t_h');
compare('reindex concurrently');
# the smallest maintenance_work_mem holds 32,768 rows: more spill to a
# tuplestore and are sorted table by table
cmp_ok($primary->safe_psql('postgres', 'SELECT count(fp) FROM t'), '>', 32768,
	'the table outgrows what a build holds in 1MB of maintenance_work_mem');
$primary->safe_psql('postgres', q{SET maintenance_work_mem = '1MB'; REINDEX INDEX t_fp});
compare('build with maintenance_work_mem = 1MB');

# Promotion: the standby answers as before, then takes writes of its own.
sub compare_alone
{
	my ($node, $step) = @_;
	my $by_index = $node->safe_psql('postgres', $queries);
	ok(length($by_index) > 1000, "$step: queries return rows");
	is($by_index, $node->safe_psql('postgres', $seqscan), "$step: index scan = sequential scan");
	like($node->safe_psql('postgres', "SELECT simhash_index_check('t_fp'), simhash_index_check('t_h')"),
		qr/^simhash index "t_fp" is consistent: .*\|simhash index "t_h" is consistent: /,
		"$step: simhash_index_check passes");
}
$primary->wait_for_catchup($standby);
my $before = $primary->safe_psql('postgres', $queries);
$primary->stop;
$standby->promote;
$standby->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
  or die 'the standby was not promoted';
is($standby->safe_psql('postgres', $queries), $before, 'promoted: the same answers as the primary had');
compare_alone($standby, 'promoted');
single_row_inserts($standby, 3000);
$standby->safe_psql('postgres', 'DELETE FROM t WHERE id % 11 = 0');
$standby->safe_psql('postgres', 'VACUUM t');
compare_alone($standby, 'promoted, after inserts, deletes and VACUUM');

$standby->stop;
done_testing();
