# The simhash index survives crashes: SIGKILL of a backend in the middle of
# single-row inserts, SIGKILL of the whole server right after CREATE INDEX,
# during an uncommitted bulk insert, and right after VACUUM.  After each
# recovery the index answers exactly as a sequential scan and passes
# simhash_index_check; an unlogged table's index comes back empty and usable.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use SimhashTAP;
use IPC::Run;

my $node = PostgreSQL::Test::Cluster->new('crash');
$node->init;
# No checkpoint may hide the index's WAL: recovery must replay it.
$node->append_conf('postgresql.conf', qq(
restart_after_crash = on
checkpoint_timeout = '1h'
max_wal_size = '4GB'
max_parallel_workers_per_gather = 0
jit = off
autovacuum = off
));
$node->start;

my ($queries, $seqscan) = index_queries(radius_to => 4, radius_every => 97, knn_every => 503);

$node->safe_psql('postgres', 'CREATE EXTENSION simhash');
$node->safe_psql('postgres', 'CREATE TABLE t (id int PRIMARY KEY, fp simhash)');
$node->safe_psql('postgres', rows_sql(1, 6000));
$node->safe_psql('postgres', 'INSERT INTO t VALUES (0, NULL)');
$node->safe_psql('postgres', 'CHECKPOINT');

# 1. crash right after CREATE INDEX
$node->safe_psql('postgres', 'CREATE INDEX t_fp ON t USING simhash (fp) WITH (bits = 3, blocks = 5)');
kill_server($node);
check_index($node, 'crash after CREATE INDEX', $queries, $seqscan);

# 2. SIGKILL of a backend busy with single-row inserts, each committed
$node->safe_psql('postgres', 'CHECKPOINT');
my $bg = $node->background_psql('postgres', on_error_stop => 0);
my $bgpid = $bg->query_safe('SELECT pg_backend_pid()');
chomp $bgpid;
$bg->query_until(qr/started/, q{
\echo started
DO $$
BEGIN
  FOR i IN 100001 .. 400000 LOOP
    INSERT INTO t SELECT i, (('x' || md5((i / 4)::text))::bit(64)::bigint # (7::bigint << (i % 60)))::simhash;
    COMMIT;
  END LOOP;
END $$;
});
$node->poll_query_until('postgres', 'SELECT count(*) >= 12000 FROM t WHERE id > 100000')
  or die 'the inserts did not progress';
my $before = $node->safe_psql('postgres', 'SELECT count(*) FROM t WHERE id > 100000');
ok(kill_backend($node, $bgpid), "SIGKILL the inserting backend $bgpid after $before rows");
eval { $bg->quit; };
my $after = $node->safe_psql('postgres', 'SELECT count(*) FROM t WHERE id > 100000');
cmp_ok($after, '>=', $before, "committed inserts survive ($after >= $before)");
# the precondition: the kill interrupted the loop (300,000 rows) rather than an idle backend
cmp_ok($after, '<', 300000, "the SIGKILL landed while the inserts ran ($after of 300000 rows)");
check_index($node, 'SIGKILL of an inserting backend', $queries, $seqscan);
like($node->safe_psql('postgres', "SELECT count(*) FROM t WHERE id > 100000 AND fp % (SELECT fp FROM t WHERE id = 100004)"),
	qr/^[1-9]/, 'rows inserted before the crash are found by the index');

# 3. crash during an uncommitted bulk insert: the rows are gone, the index is sound
my $bulk = $node->background_psql('postgres', on_error_stop => 0);
$bulk->query_safe('BEGIN');
$bulk->query_safe(rows_sql(500001, 530000));
kill_server($node);
eval { $bulk->quit; };
is($node->safe_psql('postgres', 'SELECT count(*) FROM t WHERE id > 500000'), '0', 'uncommitted rows are gone');
check_index($node, 'crash during an uncommitted insert', $queries, $seqscan);

# 4. crash right after VACUUM, then new rows into the freed space
$node->safe_psql('postgres', 'DELETE FROM t WHERE id % 3 = 0');
$node->safe_psql('postgres', 'VACUUM t');
kill_server($node);
check_index($node, 'crash after VACUUM', $queries, $seqscan);
$node->safe_psql('postgres', rows_sql(600001, 603000));
check_index($node, 'inserts after the crash', $queries, $seqscan);

# 5. SIGKILL of the server under concurrent inserts and VACUUMs (merges and
#    page recycling in flight in several backends at once)
$node->safe_psql('postgres', 'CREATE SEQUENCE ids START 700001');
my $dir = $node->basedir;
PostgreSQL::Test::Utils::append_to_file("$dir/insert.sql", q{\set g random(1, 3000)
INSERT INTO t SELECT nextval('ids'), (('x' || md5((:g / 4)::text))::bit(64)::bigint # (7::bigint << (:g % 60)))::simhash;
});
PostgreSQL::Test::Utils::append_to_file("$dir/delete.sql", q{\set d random(1, 6000)
DELETE FROM t WHERE id = :d;
});
PostgreSQL::Test::Utils::append_to_file("$dir/vacuum.sql", "VACUUM t;\n");
my ($pgb_out, $pgb_err) = ('', '');
my $pgbench = IPC::Run::start(
	[ 'pgbench', '--no-vacuum', '--client=3', '--jobs=1', '--time=120',
	  '-f', "$dir/insert.sql\@20", '-f', "$dir/delete.sql\@4", '-f', "$dir/vacuum.sql\@1",
	  $node->connstr('postgres') ],
	'>', \$pgb_out, '2>', \$pgb_err);
$node->poll_query_until('postgres', q{SELECT count(*) >= 6000 FROM t WHERE id > 700000})
  or die 'the concurrent inserts did not progress';
kill_server($node);
$pgbench->finish;
note "pgbench after the crash: $pgb_err";
check_index($node, 'crash under concurrent inserts and VACUUM', $queries, $seqscan);
$node->safe_psql('postgres', 'VACUUM t');
check_index($node, 'VACUUM after that crash', $queries, $seqscan);

# 6. an unlogged table's index is reset to empty by crash recovery and works
$node->safe_psql('postgres', q{
CREATE UNLOGGED TABLE u (fp simhash);
CREATE INDEX u_fp ON u USING simhash (fp);
INSERT INTO u SELECT ('x' || md5(i::text))::bit(64)::simhash FROM generate_series(1, 3000) i;
});
kill_server($node);
is($node->safe_psql('postgres', q{
SET enable_seqscan = off;
SELECT count(*) FROM u WHERE fp % ('x' || md5('5'))::bit(64)::simhash;
SELECT simhash_index_check('u_fp') LIKE 'simhash index "u_fp" is consistent: %';
INSERT INTO u SELECT ('x' || md5(i::text))::bit(64)::simhash FROM generate_series(1, 10) i;
SELECT count(*) FROM u WHERE fp % ('x' || md5('5'))::bit(64)::simhash;
SELECT simhash_index_check('u_fp') LIKE 'simhash index "u_fp" is consistent: %';
}), "0\nt\n1\nt", 'unlogged index after a crash: empty, then usable');

$node->stop;
done_testing();
