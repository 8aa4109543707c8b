# Random damage to a simhash index on disk: in each round, a few bytes of
# random pages of the index file of a stopped server are overwritten (random
# bits, zeroes, 0xFF, or a random 32-bit value; half of them in the page
# header or the opaque area, where the decoder's bounds come from), then the
# server answers radius queries, KNN, index-only scans, the self-check, an
# INSERT and a VACUUM.  Each statement may fail, with index_corrupted (XX002)
# or, for a page header the server itself refuses, data_corrupted (XX001),
# but with no other error; no backend may crash, no statement may hang, and
# no PANIC may be logged.  The seed is fixed, so that every run of the suite
# damages the same bytes and its result does not depend on luck; to explore,
# SIMHASH_PAGE_FUZZ_SEED=... picks other damage (the seed is printed, and
# replays a run) and SIMHASH_PAGE_FUZZ_ROUNDS=... makes it longer.
# (test/t/021_index_corruption.pl covers chosen damage with exact expectations.)
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use constant BLCKSZ => 8192;

my $rounds = $ENV{SIMHASH_PAGE_FUZZ_ROUNDS} // 16;
my $seed = $ENV{SIMHASH_PAGE_FUZZ_SEED} // 20261126;
srand($seed);
note("seed $seed, $rounds rounds");

my $node = PostgreSQL::Test::Cluster->new('page_fuzz');
# (18's initdb turns data checksums on) damaged pages must reach the decoder.
# 1 MB WAL segments keep the data directory, copied back before each round,
# small.
$node->init(no_data_checksums => 1, extra => ['--wal-segsize=1']);
$node->append_conf('postgresql.conf', qq(
autovacuum = off
restart_after_crash = on
statement_timeout = '60s'
jit = off
max_parallel_workers_per_gather = 0
min_wal_size = '2MB'
max_wal_size = '32MB'
));
$node->start;

# Runs of several levels, pending entries, NULLs, deleted rows.
$node->safe_psql('postgres', q{
CREATE EXTENSION simhash;
CREATE TABLE t (id int, fp simhash);
INSERT INTO t SELECT i, ('x' || md5(i::text))::bit(64)::bigint::simhash
  FROM generate_series(1, 30000) i;
CREATE INDEX t_fp ON t USING simhash (fp) WITH (bits = 3, pending_pages = 1);
INSERT INTO t SELECT 30000 + i, (('x' || md5((i % 500)::text))::bit(64)::bigint # (1::bigint << (i % 64)))::simhash
  FROM generate_series(1, 6000) i;
INSERT INTO t VALUES (0, NULL);
DELETE FROM t WHERE id % 17 = 0;
VACUUM t;
INSERT INTO t SELECT 40000 + i, ('x' || md5((i * 7)::text))::bit(64)::bigint::simhash
  FROM generate_series(1, 300) i;
CHECKPOINT;
});
my $datadir = $node->data_dir;
my $file = "$datadir/" . $node->safe_psql('postgres', q{SELECT pg_relation_filepath('t_fp')});
$node->stop;
my $nblocks = (-s $file) / BLCKSZ;
note("index: $nblocks blocks");

# Each round starts from this copy of the whole data directory, so that no
# WAL or catalog state of an earlier round meets the restored files.
my $pristine = PostgreSQL::Test::Utils::tempdir() . '/pgdata';
system('cp', '-a', $datadir, $pristine) == 0 or die 'cp -a failed';

sub restore
{
	system('rm', '-rf', $datadir) == 0 or die 'rm failed';
	system('cp', '-a', $pristine, $datadir) == 0 or die 'cp -a failed';
}

my @statements = (
	q{SET enable_seqscan = off; SET enable_bitmapscan = off;
	  SELECT count(*) FROM t q, generate_series(0, 5) r, LATERAL (SELECT count(*) FROM t
	    WHERE simhash_within(t.fp, q.fp, r)) s WHERE q.id % 997 = 1},
	q{SET enable_seqscan = off; SET enable_indexscan = off;
	  SELECT count(*) FROM t q, LATERAL (SELECT count(*) FROM t WHERE t.fp %@ simhash_query(q.fp, 4)) s
	   WHERE q.id % 1499 = 1},
	q{SET enable_seqscan = off;
	  SELECT count(*) FROM t q, LATERAL (SELECT id FROM t ORDER BY t.fp <~> q.fp LIMIT 10) s
	   WHERE q.id % 2003 = 1},
	q{SET enable_seqscan = off; SELECT count(fp) FROM t WHERE fp % '0123456789abcdef'},
	q{SELECT simhash_index_check('t_fp')},
	q{SELECT count(*) FROM simhash_index_runs('t_fp')},
	q{INSERT INTO t SELECT 50000 + i, ('x' || md5((i * 13)::text))::bit(64)::bigint::simhash
	    FROM generate_series(1, 3000) i},
	q{DELETE FROM t WHERE id % 31 = 0},
	q{VACUUM t},
);

# Overwrite a few bytes of a few random pages of the stopped server's file.
sub damage
{
	my $fh;
	open $fh, '+<:raw', $file or die "open $file: $!";
	my $n = 1 + int(rand(6));
	my @what;
	for (1 .. $n)
	{
		my $blkno = int(rand($nblocks));
		my $offset;
		my $r = rand();
		if ($r < 0.25) { $offset = int(rand(24)); }                        # page header
		elsif ($r < 0.5) { $offset = BLCKSZ - 32 + int(rand(32)); }        # opaque area
		elsif ($blkno < 2 && $r < 0.75) { $offset = 24 + int(rand(1024)); }  # meta, run list
		else { $offset = int(rand(BLCKSZ)); }
		my $len = 1 + int(rand(4));
		$offset = BLCKSZ - $len if $offset + $len > BLCKSZ;
		my $kind = int(rand(4));
		my $bytes;
		if ($kind == 0)
		{
			seek($fh, $blkno * BLCKSZ + $offset, 0) or die;
			read($fh, $bytes, $len) == $len or die;
			my $bit = int(rand(8 * $len));
			vec($bytes, $bit, 1) = 1 - vec($bytes, $bit, 1);
		}
		elsif ($kind == 1) { $bytes = "\0" x $len; }
		elsif ($kind == 2) { $bytes = "\xff" x $len; }
		else { $bytes = pack('L<', int(rand(2**32))) ; $bytes = substr($bytes, 0, $len); }
		seek($fh, $blkno * BLCKSZ + $offset, 0) or die;
		print $fh $bytes;
		push @what, sprintf('%u+%u:%s', $blkno, $offset, unpack('H*', $bytes));
	}
	close $fh;
	return join(' ', @what);
}

my %outcomes;
my $crashes = 0;
my $other = 0;
for my $round (1 .. $rounds)
{
	restore();
	my $what = damage();
	my $log_start = -s $node->logfile;
	$node->start;
	for my $sql (@statements)
	{
		my $timed_out = 0;
		my ($rc, $out, $err) = $node->psql('postgres', "\\set VERBOSITY verbose\n$sql",
			timeout => 180, timed_out => \$timed_out);
		my $state = $rc == 0 ? 'ok' : ($err =~ /ERROR:\s+([0-9A-Z]{5})/ ? $1 : 'no SQLSTATE');
		$outcomes{$state}++;
		if ($state ne 'ok' && $state ne 'XX001' && $state ne 'XX002')
		{
			$other++;
			diag("round $round ($what): $sql\n$err");
		}
		if ($timed_out || $err =~ /server closed the connection|terminating connection|canceling statement due to statement timeout/)
		{
			$crashes++;
			diag("round $round ($what): $sql\n$err");
			last;
		}
	}
	my $log = slurp_file($node->logfile, $log_start);
	if ($log =~ /(was terminated by signal \d+|PANIC:.*)/)
	{
		$crashes++;
		diag("round $round ($what): $1");
	}
	$node->stop('immediate');
}
note(join(', ', map { "$_: $outcomes{$_}" } sort keys %outcomes));
is($crashes, 0, "no crash, hang or PANIC in $rounds rounds of random damage");
is($other, 0, 'every error is data_corrupted (XX001, from the server\'s page checks) or index_corrupted (XX002)');
ok(($outcomes{XX002} // 0) > 0, 'damage is reported as index_corrupted (XX002)');
ok(($outcomes{ok} // 0) > 0, 'statements not touching the damage still succeed');

# The undamaged index passes the self-check (the damage above was real).
restore();
$node->start;
like($node->safe_psql('postgres', q{SELECT simhash_index_check('t_fp')}),
	qr/^simhash index "t_fp" is consistent: /,
	'the restored index passes the self-check');
$node->stop;
done_testing();
