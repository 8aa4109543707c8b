# SimhashTAP.pm: what several TAP tests of test/t/ share — the queries that compare
# a simhash index with a sequential scan, the check built on them, a simulated
# power loss, and the rows the crash tests insert.  A test loads it with
#   use FindBin; use lib $FindBin::RealBin; use SimhashTAP;
package SimhashTAP;
use strict;
use warnings;
use Exporter 'import';
use Test::More;
use Time::HiRes qw(usleep);

our @EXPORT = qw(index_queries check_index kill_server kill_backend rows_sql citus_cluster);

# ($through_index, $through_seqscan): radius queries at 0..$radius_to for every
# row whose id is a multiple of $radius_every, and the distances of the 8
# nearest rows for every multiple of $knn_every, on table t (id, fp), forced
# through the index, then the same forced through a sequential scan.  $extra
# (SQL) is appended to both.
sub index_queries
{
	my (%o) = @_;
	my $index = qq{SET enable_seqscan = off; SET enable_bitmapscan = off;
SELECT q.id, r, (SELECT array_agg(id ORDER BY id) FROM t WHERE simhash_within(fp, q.fp, r))
  FROM t q, generate_series(0, $o{radius_to}) r WHERE q.id % $o{radius_every} = 0 ORDER BY 1, 2;
SELECT q.id, (SELECT array_agg(d) FROM (SELECT fp <~> q.fp AS d FROM t ORDER BY fp <~> q.fp LIMIT 8) s)
  FROM t q WHERE q.id % $o{knn_every} = 0 ORDER BY 1;
} . ($o{extra} // '');
	my $seqscan = $index =~ s/SET enable_seqscan = off; SET enable_bitmapscan = off;/SET enable_indexscan = off; SET enable_bitmapscan = off;/r;
	return ($index, $seqscan);
}

# Three tests: the queries return rows, the index answers as the sequential
# scan, and simhash_index_check('t_fp') passes.
sub check_index
{
	my ($node, $step, $queries, $seqscan) = @_;
	my $by_index = $node->safe_psql('postgres', $queries);
	my $by_seqscan = $node->safe_psql('postgres', $seqscan);
	ok(length($by_index) > 500, "$step: queries return rows");
	is($by_index, $by_seqscan, "$step: index scan = sequential scan");
	my ($rc, $out, $err) = $node->psql('postgres', "SELECT simhash_index_check('t_fp')");
	is($rc, 0, "$step: simhash_index_check passes");
	diag($err) if $rc != 0;
}

# SIGKILL of the postmaster and of every process it started, as a power
# loss would do; then a normal start, which runs crash recovery.
sub kill_server
{
	my ($node) = @_;
	my $pid = $node->{_pid};
	# Stopped first, the postmaster can fork no child (a backend, an autovacuum
	# or I/O worker) after the list of its children is taken; every process on
	# the list is killed and gone before the restart, or the new postmaster
	# finds the old shared memory still attached and refuses to start.
	kill 'STOP', $pid;
	my @children = grep { /^\d+$/ } split /\s+/, `pgrep -P $pid`;
	$node->kill9;
	kill 'KILL', @children;
	for my $proc ($pid, @children)
	{
		my $waited = 0;
		# until reaped: a new postmaster takes a zombie's PID in postmaster.pid
		# for a live server
		while (kill 0, $proc)
		{
			die "process $proc did not exit after SIGKILL" if ++$waited > 20 * 180;
			usleep(50_000);
		}
	}
	$node->start;
}

# SIGKILL of one backend: the postmaster ends every process and restarts
# with crash recovery.  Returns once the log says the restart is over and a
# query is answered: a query sent during the restart may meet a closed socket
# (psql's stdin: a broken pipe in the test harness).
sub kill_backend
{
	my ($node, $pid) = @_;
	my $log_at = -s $node->logfile;
	my $killed = kill 'KILL', $pid;
	$node->wait_for_log(qr/all server processes terminated; reinitializing/, $log_at);
	$node->wait_for_log(qr/database system is ready to accept connections/, $log_at);
	$node->poll_query_until('postgres', 'SELECT 1', '1') or die 'the server did not come back';
	return $killed;
}

# A Citus coordinator and two workers, each with citus loaded and created, the
# workers added to the coordinator; the test is skipped where Citus is not
# installed.  Returns ($coordinator, @workers).
sub citus_cluster
{
	my $coord = PostgreSQL::Test::Cluster->new('coordinator');
	my $libdir = $coord->config_data('--pkglibdir');
	plan skip_all => "Citus is not installed ($libdir/citus.so is absent; "
	  . "../shared/deps/citus/install.sh builds it)"
	  unless -e "$libdir/citus.so";

	my @workers = map { PostgreSQL::Test::Cluster->new("worker$_") } (1, 2);
	for my $node ($coord, @workers)
	{
		$node->init;
		$node->append_conf('postgresql.conf', qq(
shared_preload_libraries = 'citus'
max_connections = 50
max_worker_processes = 16
jit = off
));
		$node->start;
		$node->safe_psql('postgres', 'CREATE EXTENSION citus');
	}
	$coord->safe_psql('postgres', sprintf(
			"SELECT citus_set_coordinator_host('%s', %d)", $coord->host, $coord->port));
	$coord->safe_psql('postgres', sprintf("SELECT citus_add_node('%s', %d)", $_->host, $_->port))
	  for @workers;
	return ($coord, @workers);
}

# INSERT of rows $from..$to into t: groups of 4 near copies of a random
# fingerprint, each with 3 bits flipped at a place that moves with the id.
sub rows_sql
{
	my ($from, $to) = @_;
	return qq{INSERT INTO t SELECT i, (('x' || md5((i / 4)::text))::bit(64)::bigint # (7::bigint << (i % 60)))::simhash
	            FROM generate_series($from, $to) i};
}

1;
