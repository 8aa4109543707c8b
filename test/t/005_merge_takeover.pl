# A merge whose backend is gone does not stall later merges.  A merge is
# stopped midway (simhash.debug_pause_merge holds it after its first table),
# then its backend is cancelled (pg_cancel_backend), times out
# (statement_timeout) or is killed with SIGKILL; the merge-in-progress mark
# stays in the metapage.  The next INSERT that merges must take it over:
# after 40,000 single-row INSERTs the index keeps no more runs and pending
# pages than a copy that was never interrupted, answers as a sequential
# scan, and passes simhash_index_check.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use SimhashTAP;

my $node = PostgreSQL::Test::Cluster->new('takeover');
$node->init;
$node->append_conf('postgresql.conf', qq(
restart_after_crash = on
autovacuum = off
jit = off
));
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION simhash');

# Fingerprints: groups of 4 near copies, as the crash tests insert.
sub fp_sql
{
	my ($i) = @_;
	return "(('x' || md5(($i / 4)::text))::bit(64)::bigint # (7::bigint << ($i % 60)))::simhash";
}

# A table and its index (10 permuted tables, a one-page pending buffer), 2,000
# rows inserted after the build: a few small runs.
sub make_table
{
	my ($name) = @_;
	$node->safe_psql('postgres', qq{
CREATE TABLE $name (id int, fp simhash);
CREATE INDEX ${name}_fp ON $name USING simhash (fp) WITH (bits = 3, blocks = 5, pending_pages = 1);
INSERT INTO $name SELECT i, @{[fp_sql('i')]} FROM generate_series(1, 2000) i;
});
}

# $n single-row INSERT statements into $name, ids from $from.
sub single_row_inserts
{
	my ($name, $from, $n) = @_;
	my $to = $from + $n - 1;
	$node->safe_psql('postgres', qq{
DO \$\$BEGIN
  FOR i IN $from..$to LOOP
    INSERT INTO $name VALUES (i, @{[fp_sql('i')]});
  END LOOP;
END\$\$;
});
}

# (runs, pending pages, interrupted merges) of the index of $name.
sub shape
{
	my ($name) = @_;
	return split /\|/, $node->safe_psql('postgres', qq{
SELECT count(*) FILTER (WHERE kind = 'run'),
       coalesce(sum(pages) FILTER (WHERE kind = 'pending'), 0),
       count(*) FILTER (WHERE kind = 'merge')
  FROM simhash_index_runs('${name}_fp')});
}

# 3 runs per level of the index of $name: levels 0 .. log4(entries / 581).
sub tier_bound
{
	my ($name) = @_;
	my $entries = $node->safe_psql('postgres',
		"SELECT sum(entries) FROM simhash_index_runs('${name}_fp') WHERE kind IN ('run', 'pending')");
	my $levels = 1;
	for (my $x = int($entries / 581); $x >= 4; $x = int($x / 4))
	{
		$levels++;
	}
	return 3 * $levels;
}

# The index of $name answers as a sequential scan (radius 0..4 around every
# 997th row, and the 8 nearest distances of every 4999th) and passes the check.
sub check_answers
{
	my ($name, $step) = @_;
	my $q = qq{
SELECT q.id, r, (SELECT array_agg(id ORDER BY id) FROM $name WHERE simhash_within(fp, q.fp, r))
  FROM $name q, generate_series(0, 4) r WHERE q.id % 997 = 0 ORDER BY 1, 2;
SELECT q.id, (SELECT array_agg(d) FROM (SELECT fp <~> q.fp AS d FROM $name ORDER BY fp <~> q.fp LIMIT 8) s)
  FROM $name q WHERE q.id % 4999 = 0 ORDER BY 1;};
	my $by_index = $node->safe_psql('postgres', "SET enable_seqscan = off; SET enable_bitmapscan = off; $q");
	my $by_seqscan = $node->safe_psql('postgres', "SET enable_indexscan = off; SET enable_bitmapscan = off; $q");
	ok(length($by_index) > 500, "$step: queries return rows");
	is($by_index, $by_seqscan, "$step: index scan = sequential scan");
	my ($rc, $out, $err) = $node->psql('postgres', "SELECT simhash_index_check('${name}_fp')");
	is($rc, 0, "$step: simhash_index_check passes");
	diag($err) if $rc != 0;
}

# Start, in a session of its own, a statement whose merge pauses; wait until
# it is paused in the merge (its wait event, and the mark in the metapage).
# Returns the session and its backend's pid.
sub paused_merge
{
	my ($name, $settings, $sql) = @_;
	my $s = $node->background_psql('postgres', on_error_stop => 0);
	my $pid = $s->query_safe('SELECT pg_backend_pid()');
	chomp $pid;
	$s->query_safe("SET simhash.debug_pause_merge = on; $settings");
	$s->query_until(qr/started/, "\\echo started\n$sql\n");
	$node->poll_query_until('postgres', qq{
SELECT count(*) > 0 FROM pg_stat_activity
 WHERE (pid = $pid OR leader_pid = $pid) AND wait_event_type = 'Extension' AND wait_event = 'Extension'})
	  or die "the merge of backend $pid did not pause";
	my (undef, undef, $marks) = shape($name);
	is($marks, 1, "$name: backend $pid is paused in the middle of a merge");
	return ($s, $pid);
}

# ---- the reference: the same workload, never interrupted -----------------
make_table('ref');
$node->safe_psql('postgres', "INSERT INTO ref SELECT i, @{[fp_sql('i')]} FROM generate_series(2001, 7000) i");
single_row_inserts('ref', 7001, 40000);
my ($ref_runs, $ref_pending) = shape('ref');
note "never interrupted: $ref_runs runs, $ref_pending pending pages";

# The statement each victim runs (and is interrupted in): 5,000 rows, whose
# flushes start a tier merge.
my $victim_insert = "INSERT INTO %s SELECT i, @{[fp_sql('i')]} FROM generate_series(2001, 7000) i;";

# After the interruption: the mark is there; 40,000 single-row INSERTs take
# the merge over and keep merging.
sub after_interruption
{
	my ($name, $how) = @_;
	my (undef, undef, $marks) = shape($name);
	is($marks, 1, "$name: $how leaves the merge-in-progress mark");
	single_row_inserts($name, 7001, 40000);
	my ($runs, $pending, $left) = shape($name);
	note "$name after $how and 40,000 INSERTs: $runs runs, $pending pending pages";
	is($left, 0, "$name: the interrupted merge was taken over");
	# What the tier policy keeps without interruptions: fewer than
	# SIMHASH_TIER_RATIO = 4 runs per level (level = log4(entries / rows of a
	# pending buffer)), and the pending buffer's one page (a flush waits when
	# it is twice over).  A stalled index keeps up to 63 runs instead.  The
	# copy never interrupted is shown beside it.
	my $bound = tier_bound($name);
	cmp_ok($runs, '<=', $bound,
		"$name: $runs runs, within the tier bound $bound (an uninterrupted copy: $ref_runs)");
	cmp_ok($pending, '<=', 2,
		"$name: $pending pending pages, within the buffer's bound (an uninterrupted copy: $ref_pending)");
	check_answers($name, "$name after $how");
}

# ---- 1. pg_cancel_backend ---------------------------------------------------
make_table('cancelled');
my ($s, $pid) = paused_merge('cancelled', '', sprintf($victim_insert, 'cancelled'));
$node->safe_psql('postgres', "SELECT pg_cancel_backend($pid)");
$s->query('SELECT 1');
like($s->{stderr}, qr/canceling statement due to user request/, 'cancelled: the INSERT was cancelled');
$s->quit;
after_interruption('cancelled', 'pg_cancel_backend');

# ---- 2. statement_timeout -------------------------------------------------
# The statement waits in the paused merge until its timeout ends it; the check
# that the merge was paused comes first, so a timeout that struck before the
# merge fails the test instead of passing it.
make_table('timedout');
($s, $pid) = paused_merge('timedout', "SET statement_timeout = '30s';", sprintf($victim_insert, 'timedout'));
$s->query('SELECT 1');
like($s->{stderr}, qr/canceling statement due to statement timeout/, 'timedout: the INSERT timed out');
$s->quit;
after_interruption('timedout', 'statement_timeout');

# ---- 3. SIGKILL of the backend (the server restarts and recovers) ------------
make_table('killed');
($s, $pid) = paused_merge('killed', '', sprintf($victim_insert, 'killed'));
# the mark's WAL record reaches the disk (else the kill may lose it with the
# WAL buffers, and with it what this test is about)
$node->safe_psql('postgres', 'CHECKPOINT');
kill_backend($node, $pid) or die "could not signal backend $pid";
eval { $s->quit; };
after_interruption('killed', 'SIGKILL of the backend');

# ---- 4. a VACUUM merge cancelled: the next INSERT takes it over ------------
make_table('vacuumed');
$node->safe_psql('postgres', "INSERT INTO vacuumed SELECT i, @{[fp_sql('i')]} FROM generate_series(2001, 7000) i");
($s, $pid) = paused_merge('vacuumed', '', 'VACUUM vacuumed;');
$node->safe_psql('postgres', "SELECT pg_cancel_backend($pid)");
$s->query('SELECT 1');
like($s->{stderr}, qr/canceling statement due to user request/, 'vacuumed: the VACUUM was cancelled');
$s->quit;
after_interruption('vacuumed', 'a cancelled VACUUM');

ok($node->log_contains('taking over the merge into run \d+ that an interrupted backend left after 1 of 10 tables'),
	'the server log names the merges taken over');

$node->stop;
done_testing();
