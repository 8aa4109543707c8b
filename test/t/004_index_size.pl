# The index's size under deletes and inserts: VACUUM removes dead entries
# from the runs in place (no new copy), rewrites only runs left sparse,
# reuses the pages it frees at once and cuts free pages off the end of the
# file, so rounds of "delete 8%, insert as many, VACUUM" keep the file
# within a small factor of a bulk build of the same rows; single-row inserts
# reuse the pages their own merges retire.  And a server killed while VACUUM
# removes entries in place recovers to an index that answers as a
# sequential scan; the next VACUUM finishes the job.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use SimhashTAP;

my $node = PostgreSQL::Test::Cluster->new('size');
$node->init;
$node->append_conf('postgresql.conf', qq(
restart_after_crash = on
autovacuum = off
jit = off
max_parallel_maintenance_workers = 0
));
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION simhash');

my ($queries, $seqscan) = index_queries(radius_to => 4, radius_every => 997, knn_every => 9973,
	extra => "SELECT count(*), sum(id) FROM t WHERE simhash_within(fp, '0123456789abcdef', 12);\n");

sub size { return $node->safe_psql('postgres', "SELECT pg_relation_size('t_fp')"); }

# ---- 1. rounds of deletes and inserts, each followed by a VACUUM ---------
my $n = 100000;
$node->safe_psql('postgres', 'CREATE TABLE t (id int PRIMARY KEY, fp simhash)');
$node->safe_psql('postgres', rows_sql(1, $n));
$node->safe_psql('postgres', 'CREATE INDEX t_fp ON t USING simhash (fp)');
my $bulk = size();
my $next = $n + 1;
my $largest = 0;
for my $round (1 .. 12)
{
	# 8% of the rows, spread over the whole table, then as many new ones
	$node->safe_psql('postgres', "DELETE FROM t WHERE hashint4(id) % 25 IN (2 * $round, 2 * $round + 1)");
	my $deleted = $n - $node->safe_psql('postgres', 'SELECT count(*) FROM t');
	$node->safe_psql('postgres', rows_sql($next, $next + $deleted - 1));
	$next += $deleted;
	$node->safe_psql('postgres', 'VACUUM t');
	my $s = size();
	$largest = $s if $s > $largest;
	note sprintf("round %d: %d rows deleted and inserted, index %.2f x its bulk size, runs: %s", $round, $deleted,
		$s / $bulk, $node->safe_psql('postgres', q{SELECT string_agg(entries::text, ' ') FROM simhash_index_runs('t_fp') WHERE kind = 'run'}));
	check_index($node, "round $round", $queries, $seqscan) if $round % 4 == 0;
}
$node->safe_psql('postgres', 'CREATE INDEX t_fp_bulk ON t USING simhash (fp)');
my $rebuilt = $node->safe_psql('postgres', "SELECT pg_relation_size('t_fp_bulk')");
$node->safe_psql('postgres', 'DROP INDEX t_fp_bulk');
note "bulk build $bulk bytes, largest after a VACUUM $largest, rebuilt at the end $rebuilt";
cmp_ok($largest, '<=', 2 * $bulk, sprintf('after every VACUUM the index is at most 2 x its bulk size (%.2f x)', $largest / $bulk));
cmp_ok(size(), '<=', 1.75 * $rebuilt, sprintf('at the end it is at most 1.75 x a bulk build of the same rows (%.2f x)', size() / $rebuilt));

# a VACUUM that finds no dead rows and nothing to merge leaves the file alone
my $before = size();
$node->safe_psql('postgres', 'VACUUM t');
is(size(), $before, 'a VACUUM with nothing to do does not change the size');

# free pages at the end of the file are cut off: delete most rows, VACUUM
# (it rewrites the sparse runs), consume a transaction id (a page retired
# with the next id as its horizon is recyclable once an id was given out
# after it), VACUUM again
$node->safe_psql('postgres', 'DELETE FROM t WHERE id % 10 <> 0');
$node->safe_psql('postgres', 'VACUUM t');
$node->safe_psql('postgres', 'SELECT txid_current()');
$node->safe_psql('postgres', 'VACUUM t');
cmp_ok(size(), '<', $before, sprintf('after deleting 90%% of the rows the file shrinks (%d -> %d bytes)', $before, size()));
check_index($node, 'after deleting 90%', $queries, $seqscan);

# ---- 2. single-row inserts, each its own transaction, no VACUUM ----------
# Flushes and tier merges run inside the INSERTs; the pages they retire must
# be reused by the later INSERTs (not wait for a VACUUM), so the file stays
# near the size of a bulk build of the same rows.
$node->safe_psql('postgres', q{
CREATE TABLE ins (id int, fp simhash);
CREATE INDEX ins_fp ON ins USING simhash (fp) WITH (pending_pages = 1);
CREATE PROCEDURE ins_rows(n int) LANGUAGE plpgsql AS $$
BEGIN
  FOR i IN 1..n LOOP
    INSERT INTO ins VALUES (i, ('x' || md5(i::text))::bit(64)::simhash);
    IF i % 20 = 0 THEN COMMIT; END IF;
  END LOOP;
END $$;
});
$node->safe_psql('postgres', 'CALL ins_rows(60000)');
my $ins = $node->safe_psql('postgres', "SELECT pg_relation_size('ins_fp')");
my $merges = $node->safe_psql('postgres', q{SELECT count(*) FROM simhash_index_runs('ins_fp') WHERE kind = 'run'});
$node->safe_psql('postgres', 'CREATE INDEX ins_fp_bulk ON ins USING simhash (fp)');
my $ins_bulk = $node->safe_psql('postgres', "SELECT pg_relation_size('ins_fp_bulk')");
note "60,000 single-row inserts: index $ins bytes in $merges runs, a bulk build $ins_bulk";
cmp_ok($ins, '<=', 2 * $ins_bulk,
	sprintf('inserts reuse the pages their merges retire: %.2f x a bulk build', $ins / $ins_bulk));
is($node->safe_psql('postgres', q{SET enable_seqscan = off;
SELECT count(*) FROM ins WHERE simhash_within(fp, ('x' || md5('777'))::bit(64)::simhash, 3)}), '1',
	'the inserted index answers');
like($node->safe_psql('postgres', "SELECT simhash_index_check('ins_fp')"),
	qr/^simhash index "ins_fp" is consistent: /, 'and passes the check');
$node->safe_psql('postgres', 'DROP TABLE ins');

# ---- 3. SIGKILL while VACUUM removes dead entries in place ---------------
$node->safe_psql('postgres', 'TRUNCATE t');
$node->safe_psql('postgres', rows_sql(1, 60000));
$node->safe_psql('postgres', 'CREATE INDEX t_fp2 ON t USING simhash (fp) WITH (bits = 3, blocks = 5)');
$node->safe_psql('postgres', 'DROP INDEX t_fp');
$node->safe_psql('postgres', 'ALTER INDEX t_fp2 RENAME TO t_fp');
$node->safe_psql('postgres', 'DELETE FROM t WHERE id % 7 = 0');
$node->safe_psql('postgres', 'CHECKPOINT');
$node->safe_psql('postgres', 'CREATE EXTENSION IF NOT EXISTS pageinspect');
my $lsn = $node->safe_psql('postgres', 'SELECT pg_current_wal_insert_lsn()');

# VACUUM slowed down to about 10 ms a page, so that the kill lands while it
# removes entries from the run: after a first run page changed (its LSN passed
# $lsn; blocks 0 and 1 are the metapage and the run list), before the last
# (the flag checked after the crash says VACUUM had not finished).
my $vac = $node->background_psql('postgres', on_error_stop => 0);
$vac->query_until(qr/started/, "SET vacuum_cost_delay = 10; SET vacuum_cost_limit = 1;\n\\echo started\nVACUUM t;\n");
$node->poll_query_until('postgres', q{SELECT count(*) > 0 FROM simhash_index_runs('t_fp') WHERE kind = 'clean'})
  or die 'VACUUM did not start removing entries';
$node->poll_query_until('postgres', qq{
SELECT count(*) > 0 FROM generate_series(2, pg_relation_size('t_fp') / current_setting('block_size')::int - 1) b
 WHERE (page_header(get_raw_page('t_fp', b::int))).lsn > '$lsn'})
  or die 'VACUUM changed no page of the run';
# The flag and the page change are in WAL buffers the WAL writer may not have
# flushed yet, and a SIGKILL loses what is unflushed: flush them (a WAL
# switch flushes everything before it), so the crash sees what was polled.
$node->safe_psql('postgres', 'SELECT pg_switch_wal()');
kill_server($node);
eval { $vac->quit; };
is($node->safe_psql('postgres', q{SELECT count(*) FROM simhash_index_runs('t_fp') WHERE kind = 'clean'}),
	'1', 'after the crash the run is flagged as being cleaned');
check_index($node, 'crash while VACUUM removed entries in place', $queries, $seqscan);

# inserts merge runs, but never the flagged one
$node->safe_psql('postgres', rows_sql(100001, 130000));
is($node->safe_psql('postgres', q{SELECT count(*) FROM simhash_index_runs('t_fp') WHERE kind = 'clean'}),
	'1', 'inserts leave the flagged run alone');
check_index($node, 'inserts after the crash', $queries, $seqscan);

# the next VACUUM is handed the same dead rows and finishes the run
$node->safe_psql('postgres', 'VACUUM t');
is($node->safe_psql('postgres', q{SELECT count(*) FROM simhash_index_runs('t_fp') WHERE kind = 'clean'}),
	'0', 'the next VACUUM clears the flag');
check_index($node, 'VACUUM after the crash', $queries, $seqscan);

$node->stop;
done_testing();
