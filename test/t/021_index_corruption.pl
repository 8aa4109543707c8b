# A simhash index damaged on disk: a run page, a directory page, the metapage,
# the run list, a page's trailer bounds and a pending page are each corrupted
# in the relation file of a stopped server.  simhash_index_check() must raise
# index_corrupted (XX002) naming the block, and index scans must raise an
# error (XX002) or return exactly what a sequential scan returns: never a
# crash, never silently wrong rows, never an endless loop, and never a
# read-only scan that extends the file (block 0xFFFFFFFF is P_NEW).
use strict;
use warnings;
use File::Copy;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use constant BLCKSZ => 8192;

# ---------------------------------------------------------------------------
# The pages of a simhash index file: a list of { blkno, kind, table, next }.
# This is the only place that knows the page format (src/am/format.h):
# every page ends with SimhashPageOpaqueData, 32 bytes at BLCKSZ - 32:
#   uint64 hikey, uint64 safexid, uint32 next, uint32 gen, uint16 table,
#   uint16 flags, uint16 unused, uint16 page_id (0xFF53)     (little-endian)
# and flags are 1 META, 2 RUN, 4 PENDING, 8 NULLS, 16 DELETED, 32 DIR,
# 64 RUNLIST (format 3).  Update it, and the offsets below, when the page
# format changes.
# ---------------------------------------------------------------------------
use constant OPAQUE       => BLCKSZ - 32;    # start of the opaque area
use constant OFF_NEXT     => OPAQUE + 16;    # uint32 next (chains)
use constant OFF_FLAGS    => OPAQUE + 26;    # uint16 flags
use constant OFF_PD_LOWER => 12;             # uint16 pd_lower of the page header
use constant OFF_PD_UPPER => 14;             # uint16 pd_upper of the page header
use constant OFF_PD_SPECIAL => 16;           # uint16 pd_special of the page header
# directory entries of 12 bytes (uint64 hikey, uint32 block) from byte 24 on
use constant DIR_ENTRY    => 12;
# the run list (block 1) from byte 24: int32 nruns, int32 unused, 64 runs of
# 16 bytes (uint32 gen, uint32 npages, uint64 count), then uint32 run_dir[]
use constant OFF_RUN_DIR0 => 24 + 8 + 64 * 16;    # run_dir[0]: run 0, table 0
# entries of 14 bytes (uint64 key, 6-byte heap TID) from byte 24 on
use constant FULL_PAGE    => int((BLCKSZ - 24 - 32) / 14);

sub index_pages
{
	my ($file) = @_;
	my %kinds = (1 => 'meta', 2 => 'run', 4 => 'pending', 8 => 'nulls', 16 => 'deleted', 32 => 'dir',
		64 => 'runlist');
	my @pages;
	open my $fh, '<:raw', $file or die "open $file: $!";
	for (my $blkno = 0;; $blkno++)
	{
		my $page;
		last if read($fh, $page, BLCKSZ) != BLCKSZ;
		my (undef, undef, $next, undef, $table, $flags, undef, $page_id) =
		  unpack('Q< Q< L< L< S< S< S< S<', substr($page, OPAQUE));
		die "block $blkno is not a simhash page" unless $page_id == 0xFF53;
		push @pages, { blkno => $blkno, kind => $kinds{$flags} // "flags $flags",
			table => $table, next => $next };
	}
	close $fh;
	return @pages;
}

# Overwrite bytes at an offset of a block of the file.
sub poke
{
	my ($file, $blkno, $offset, $bytes) = @_;
	open my $fh, '+<:raw', $file or die "open $file: $!";
	seek($fh, $blkno * BLCKSZ + $offset, 0) or die;
	print $fh $bytes;
	close $fh;
}

my $node = PostgreSQL::Test::Cluster->new('corrupt');
$node->init(no_data_checksums => 1);    # (18 initdb turns them on) damaged pages must reach the AM
$node->append_conf('postgresql.conf', qq(
autovacuum = off
jit = off
max_parallel_workers_per_gather = 0
statement_timeout = '60s'
));
$node->start;
$node->safe_psql('postgres', q{
CREATE EXTENSION simhash;
CREATE TABLE t (id int, fp simhash);
INSERT INTO t SELECT i, ('x' || md5(i::text))::bit(64)::simhash FROM generate_series(1, 5000) i;
-- neighbours of the query point at distances 1..8, and NULLs
INSERT INTO t SELECT 10000 + i, ('0123456789abcdef'::simhash::bigint # ((1::bigint << (i % 9)) - 1))::simhash
  FROM generate_series(1, 40) i;
INSERT INTO t SELECT 20000 + i, NULL FROM generate_series(1, 10) i;
CREATE INDEX t_fp ON t USING simhash (fp) WITH (bits = 3, blocks = 4);
-- rows inserted after the build go to the pending chain
INSERT INTO t SELECT 30000 + i, ('x' || md5('late' || i))::bit(64)::simhash FROM generate_series(1, 200) i;
INSERT INTO t VALUES (40000, '0123456789abcdee');
});

my %queries = (
	probe  => "SELECT array_agg(id ORDER BY id) FROM t WHERE simhash_within(fp, '0123456789abcdef', 2)",
	linear => "SELECT array_agg(id ORDER BY id) FROM t WHERE simhash_within(fp, '0123456789abcdef', 12)",
	knn    => "SELECT array_agg(d) FROM (SELECT fp <~> '0123456789abcdef' AS d FROM t ORDER BY fp <~> '0123456789abcdef' LIMIT 30) s",
	full   => "SELECT count(*), sum(id) FROM (SELECT id FROM t ORDER BY fp <~> '0123456789abcdef') s",
);
my $by_index = "SET enable_seqscan = off; SET enable_bitmapscan = off;\n";
my %truth;
for my $q (sort keys %queries)
{
	$truth{$q} = $node->safe_psql('postgres', "SET enable_indexscan = off; SET enable_bitmapscan = off; $queries{$q}");
	is($node->safe_psql('postgres', $by_index . $queries{$q}), $truth{$q}, "intact index: $q = sequential scan");
}
like($node->safe_psql('postgres', "SELECT simhash_index_check('t_fp')"),
	qr/^simhash index "t_fp" is consistent: /, 'intact index passes the check');

my $file = $node->data_dir . '/' . $node->safe_psql('postgres', "SELECT pg_relation_filepath('t_fp')");
$node->stop;
my @pages = index_pages($file);
my ($run) = grep { $_->{kind} eq 'run' && $_->{table} == 0 } @pages;
my @run0 = grep { $_->{kind} eq 'run' && $_->{table} == 0 } @pages;
$run = $run0[ int(@run0 / 2) ];
my ($dir) = grep { $_->{kind} eq 'dir' && $_->{table} == 0 } @pages;
my ($pending) = grep { $_->{kind} eq 'pending' } @pages;
ok(@run0 >= 3 && $dir && $pending, 'the index has runs of several pages, a directory and a pending page')
  or BAIL_OUT('index layout not as expected: ' . join(' ', map { "$_->{blkno}:$_->{kind}" } @pages));
copy($file, "$file.intact") or die;

# the bytes at an offset of a block of the file
sub peek
{
	my ($file, $blkno, $offset, $len) = @_;
	open my $fh, '<:raw', $file or die "open $file: $!";
	seek($fh, $blkno * BLCKSZ + $offset, 0) or die;
	read($fh, my $bytes, $len) == $len or die;
	close $fh;
	return $bytes;
}
my $run_dir0 = unpack('L<', peek($file, 1, OFF_RUN_DIR0, 4));
my ($dir0) = grep { $_->{blkno} == $run_dir0 } @pages;
ok($dir0 && $dir0->{kind} eq 'dir' && $dir0->{table} == 0, "run list: run 0, table 0 at directory block $run_dir0")
  or BAIL_OUT('run list layout not as expected');
my $ndir_entries = (unpack('S<', peek($file, $dir0->{blkno}, OFF_PD_LOWER, 2)) - 24) / DIR_ENTRY;
my $file_size = -s $file;

# Each case: which block, how it is damaged, and the scans that must read it.
my @cases = (
	# a full page that lost its last 10 entries (a valid page header)
	[ 'run page missing entries', $run->{blkno},
		sub { poke($file, $run->{blkno}, OFF_PD_LOWER, pack('S<', 24 + (FULL_PAGE - 10) * 14)) },
		[ 'linear', 'full' ] ],
	[ 'directory page flagged as a run page', $dir->{blkno},
		sub { poke($file, $dir->{blkno}, OFF_FLAGS, pack('S<', 2)) }, [ 'probe', 'knn' ] ],
	[ 'metapage without its flag', 0,
		sub { poke($file, 0, OFF_FLAGS, pack('S<', 0)) }, [ 'probe', 'linear', 'knn', 'full' ] ],
	# every run page of run 0, table 0 listed at block 0xFFFFFFFF (P_NEW)
	[ 'directory entries linking to P_NEW', $dir0->{blkno},
		sub {
			poke($file, $dir0->{blkno}, 24 + $_ * DIR_ENTRY + 8, pack('L<', 0xFFFFFFFF))
			  for 0 .. $ndir_entries - 1;
		},
		[ 'probe', 'linear', 'knn', 'full' ] ],
	# (the check names the block linked to)
	[ 'run list linking past the end', 1,
		sub { poke($file, 1, OFF_RUN_DIR0, pack('L<', 0x7FFFFFF0)) },
		[ 'probe', 'linear', 'knn', 'full' ], 0x7FFFFFF0 ],
	[ 'run list linking to the last block number', 1,
		sub { poke($file, 1, OFF_RUN_DIR0, pack('L<', 0xFFFFFFFE)) },
		[ 'probe', 'linear', 'knn', 'full' ], 0xFFFFFFFE ],
	# the trailer (special space) said to start at the end of the page, so
	# that it would be read from the next buffer (PostgreSQL's own page check
	# allows pd_special = BLCKSZ), or inside the entries (pd_upper moved too)
	[ 'run page trailer past the page', $run->{blkno},
		sub { poke($file, $run->{blkno}, OFF_PD_SPECIAL, pack('S<', BLCKSZ)) },
		[ 'linear', 'full' ] ],
	# the run list read without a look at where its trailer starts (it is
	# read at its fixed place whatever pd_special says)
	[ 'run list trailer past the page', 1,
		sub { poke($file, 1, OFF_PD_SPECIAL, pack('S<', BLCKSZ)) },
		[ 'probe', 'linear', 'knn', 'full' ] ],
	[ 'directory page trailer past the page', $dir0->{blkno},
		sub { poke($file, $dir0->{blkno}, OFF_PD_SPECIAL, pack('S<', BLCKSZ)) },
		[ 'probe', 'linear', 'knn', 'full' ] ],
	[ 'directory page trailer inside the page', $dir0->{blkno},
		sub { poke($file, $dir0->{blkno}, OFF_PD_UPPER, pack('S< S<', BLCKSZ - 64, BLCKSZ - 64)) },
		[ 'probe', 'linear', 'knn', 'full' ] ],
	[ 'pending page linked to itself', $pending->{blkno},
		sub { poke($file, $pending->{blkno}, OFF_NEXT, pack('L<', $pending->{blkno})) },
		[ 'probe', 'linear', 'knn', 'full' ] ],
);

for my $case (@cases)
{
	my ($name, $blkno, $damage, $must_fail, $check_names) = @$case;
	$check_names //= $blkno;
	copy("$file.intact", $file) or die;
	$damage->();
	$node->start;

	my ($rc, $out, $err) = $node->psql('postgres', "\\set VERBOSITY verbose\nSELECT simhash_index_check('t_fp')");
	isnt($rc, 0, "$name: the check fails");
	like($err, qr/XX002/, "$name: the check raises index_corrupted");
	like($err, qr/block $check_names\b/, "$name: the check names block $check_names");

	for my $q (sort keys %queries)
	{
		($rc, $out, $err) = $node->psql('postgres', "\\set VERBOSITY verbose\n" . $by_index . $queries{$q});
		if (grep { $_ eq $q } @$must_fail)
		{
			like($err, qr/XX002.*block $blkno\b/s, "$name: $q scan raises index_corrupted naming block $blkno");
		}
		else
		{
			ok(($rc != 0 && $err =~ /XX002/) || ($rc == 0 && $out eq $truth{$q}),
				"$name: $q scan fails with XX002 or returns the sequential scan's rows");
		}
	}
	is($node->safe_psql('postgres', 'SELECT 1'), '1', "$name: the server is up");
	is(-s $file, $file_size, "$name: the scans did not extend the file");
	$node->stop;
	unlike(slurp_file($node->logfile), qr/terminated by signal/, "$name: no backend crashed");
}

copy("$file.intact", $file) or die;
$node->start;
is($node->safe_psql('postgres', $by_index . $queries{probe}), $truth{probe}, 'restored file: scans answer again');
$node->stop;
done_testing();
