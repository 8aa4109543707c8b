# The log-structured index on disk: an index of an older on-disk format is
# refused with a REINDEX hint (not misread); a server killed in the middle of
# a merge recovers to an index that answers as a sequential scan, and the
# next VACUUM retires the pages the interrupted merge had written.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use SimhashTAP;

my $node = PostgreSQL::Test::Cluster->new('runs');
# no data checksums (18's initdb default): part 1 rewrites the metapage on disk
# and must meet the format check, not a checksum failure
$node->init(no_data_checksums => 1);
$node->append_conf('postgresql.conf', qq(
restart_after_crash = on
checkpoint_timeout = '1h'
max_wal_size = '4GB'
autovacuum = off
jit = off
));
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION simhash');

# ---- 1. an index written in an older format -----------------------------
$node->safe_psql('postgres', q{
CREATE TABLE old (id int, fp simhash);
INSERT INTO old SELECT i, ('x' || md5(i::text))::bit(64)::simhash FROM generate_series(1, 2000) i;
CREATE INDEX old_fp ON old USING simhash (fp);
CHECKPOINT;
});
my $path = $node->data_dir . '/' . $node->safe_psql('postgres', "SELECT pg_relation_filepath('old_fp')");
$node->stop;
# the metapage: page header (24 bytes), then magic (4 bytes) and version (4 bytes)
open(my $fh, '+<:raw', $path) or die "open $path: $!";
seek($fh, 24, 0);
read($fh, my $head, 8);
my ($magic, $version) = unpack('VV', $head);
is(sprintf('%08x', $magic), '53484958', 'the metapage starts with the magic number');
seek($fh, 28, 0);
print $fh pack('V', 2);
close($fh);
$node->start;

my ($rc, $out, $err) = $node->psql('postgres', q{SET enable_seqscan = off;
SELECT count(*) FROM old WHERE fp % ('x' || md5('5'))::bit(64)::simhash});
isnt($rc, 0, 'a scan of an old-format index fails');
like($err, qr/has on-disk format version 2, this release reads version \d+/, 'the error names both versions');
like($err, qr/HINT:\s+REINDEX INDEX old_fp/, 'the hint says REINDEX');
($rc, $out, $err) = $node->psql('postgres', q{INSERT INTO old VALUES (0, '0123456789abcdef')});
like($err, qr/has on-disk format version 2/, 'an insert into it fails the same way');
($rc, $out, $err) = $node->psql('postgres', q{SELECT simhash_index_check('old_fp')});
like($err, qr/has on-disk format version 2/, 'so does the self-check');
$node->safe_psql('postgres', 'REINDEX INDEX old_fp');
is($node->safe_psql('postgres', q{SET enable_seqscan = off;
SELECT count(*) FROM old WHERE fp % ('x' || md5('5'))::bit(64)::simhash}), '1', 'after REINDEX the index answers');

# ---- 2. SIGKILL of the server in the middle of a merge -----------------
my ($queries, $seqscan) = index_queries(radius_to => 4, radius_every => 4999, knn_every => 9973);

$node->safe_psql('postgres', 'CREATE TABLE t (id int PRIMARY KEY, fp simhash)');
$node->safe_psql('postgres', rows_sql(1, 150000));
$node->safe_psql('postgres', 'CREATE INDEX t_fp ON t USING simhash (fp) WITH (bits = 3, blocks = 5, pending_pages = 1)');

# New rows go into small runs, then VACUUM merges every run (the new ones
# hold more than a quarter of the large one).  simhash.debug_pause_merge
# holds that merge after its first table is switched over, and the server is
# killed while the VACUUM waits there: the kill lands mid-merge every time.
$node->safe_psql('postgres', rows_sql(150001, 209999));
my $next = 210000;
$node->safe_psql('postgres', 'CHECKPOINT');
my $vac = $node->background_psql('postgres', on_error_stop => 0);
my $vac_pid = $vac->query_safe('SELECT pg_backend_pid()');
chomp $vac_pid;
$vac->query_safe('SET simhash.debug_pause_merge = on');
# (PARALLEL 0: the merge runs in this backend, not in a parallel worker)
$vac->query_until(qr/started/, "\\echo started\nVACUUM (PARALLEL 0) t;\n");
$node->poll_query_until('postgres', qq{
SELECT wait_event_type = 'Extension' AND wait_event = 'Extension' FROM pg_stat_activity WHERE pid = $vac_pid})
  or die 'the VACUUM did not pause in its merge';
is($node->safe_psql('postgres', "SELECT count(*) FROM simhash_index_runs('t_fp') WHERE kind = 'merge'"),
	'1', 'the VACUUM is paused in the middle of a merge');
ok($node->log_contains("merge into run \\d+ paused after table 0"), 'the server log says where it paused');
# the merge's WAL so far reaches the disk (the kill loses the WAL buffers)
$node->safe_psql('postgres', 'CHECKPOINT');
kill_server($node);
eval { $vac->quit; };
my $interrupted = $node->safe_psql('postgres',
	"SELECT count(*) FROM simhash_index_runs('t_fp') WHERE kind = 'merge'");
ok($interrupted, 'the server was killed in the middle of a merge');
check_index($node, 'crash mid-merge', $queries, $seqscan);
$node->safe_psql('postgres', 'VACUUM t');
is($node->safe_psql('postgres', "SELECT count(*) FROM simhash_index_runs('t_fp') WHERE kind IN ('merge', 'flush')"),
	'0', 'VACUUM takes the interrupted merge over');
check_index($node, 'VACUUM after the crash', $queries, $seqscan);

# No page leaks: once the retired pages are past every snapshot (an xid is
# consumed, then VACUUM sweeps), every page but the metapage and the run
# list is referenced by a run or a chain, or free in the FSM.
$node->safe_psql('postgres', 'CREATE EXTENSION pg_freespacemap');
$node->safe_psql('postgres', 'SELECT txid_current()');
$node->safe_psql('postgres', 'VACUUM t');
my $pages_sql = q{SELECT pg_relation_size('t_fp') / 8192 - 2 AS total,
  (SELECT sum(pages) FROM simhash_index_runs('t_fp')) AS used,
  (SELECT count(*) FROM pg_freespace('t_fp') WHERE avail > 0) AS free};
my ($total, $used, $free) = split /\|/, $node->safe_psql('postgres', $pages_sql);
note "after the crash and two VACUUMs: $total pages, $used used, $free free";
cmp_ok($free, '>', 0, 'pages of the interrupted merge and of the merged runs are free');
is($used + $free, $total, "every page is used or free ($used + $free = $total)");

# the free pages are reused: new rows and deletes, VACUUM rewrites the runs
$node->safe_psql('postgres', rows_sql($next, $next + 5999));
$node->safe_psql('postgres', 'DELETE FROM t WHERE id % 5 = 0');
$node->safe_psql('postgres', 'VACUUM t');
check_index($node, 'inserts, deletes and VACUUM after the crash', $queries, $seqscan);
my ($total2) = split /\|/, $node->safe_psql('postgres', $pages_sql);
cmp_ok($total2, '<=', $total * 1.05, "the file barely grows ($total2 <= 1.05 x $total pages): free pages were reused");

$node->stop;
done_testing();
