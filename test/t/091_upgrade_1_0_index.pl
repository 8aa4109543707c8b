# A real index of release 1.0 (on-disk format 2), after ALTER EXTENSION
# simhash UPDATE: every path that reads it refuses it with SQLSTATE 55000 and
# the hint "REINDEX INDEX <name>", planning prices it out so queries still run
# on a sequential scan, and REINDEX makes it answer again.
#
# The index is built by the released 1.0 code: commit 09178db (release 1.0
# in CHANGELOG.md; releases are named by commit, not tagged) is taken out of
# git history, built with PGXS against this server's headers and installed into
# a private copy of the server's installation; a cluster made with that
# install builds the index, and the same data directory is then started with
# the current build.  Skipped when the history or the server headers are not
# at hand.
use strict;
use warnings;
use File::Temp ();
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::RecursiveCopy;
use PostgreSQL::Test::Utils;
use Test::More;

my $v10 = '09178dba4d2f781fce15f70c22489219e3ce748a';

# git may refuse a tree owned by another user (the tests run as postgres on
# a copy): safe.directory for this command only.
my @git = ('git', '-c', 'safe.directory=*');
plan skip_all => "git history with the 1.0 commit $v10 is not available (a shallow clone or a tarball)"
  unless system("@git cat-file -e $v10^{commit} >/dev/null 2>&1") == 0;

# The pg_config of this server's version whose server headers exist (the
# private install's own copy on PATH reports headers it does not hold).
my $version = `pg_config --version`;
my $pg_config;
for my $dir (split /:/, $ENV{PATH})
{
	my $c = "$dir/pg_config";
	next unless -x $c && `$c --version` eq $version;
	my $inc = `$c --includedir-server`;
	chomp $inc;
	if (-e "$inc/postgres.h") { $pg_config = $c; last; }
}
plan skip_all => "no pg_config of $version with server headers on PATH" unless $pg_config;
# Release 1.0 was written for PostgreSQL 15 and does not build against later majors.
plan skip_all => "release 1.0 builds only against PostgreSQL 15 (this is $version)"
  unless $version =~ /^PostgreSQL 15\./;

# The builds below are makes of their own: not the sub-makes of make
# installcheck, whose command-line variables (bindir=...) MAKEFLAGS passes on.
delete @ENV{qw(MAKEFLAGS MFLAGS MAKEOVERRIDES MAKELEVEL)};

my $tmp = File::Temp->newdir('simhash-v10-XXXXXX', TMPDIR => 1);
my ($bindir, $sharedir) = map { my $d = `$pg_config --$_`; chomp $d; $d } qw(bindir sharedir);
(my $pkgdir = $bindir) =~ s{/bin$}{};

# 1.0's module, built as released (without -Werror: today's compiler may
# warn); not its command-line tools (TOOLS=), which this test does not run.
my $src = "$tmp/src";
mkdir $src or die;
system_or_bail("@git archive $v10 | tar -x -C $src");
{
	local $ENV{WERROR} = '0';
	my $out = `make -s -C $src -j2 TOOLS= PG_CONFIG=$pg_config 2>&1`;
	BAIL_OUT("building 1.0 failed:\n$out") if $?;
}
# Its own copy of the server's installation, with 1.0 installed into it.
my $inst = "$tmp/install";
system_or_bail('mkdir', '-p', $inst . ($pkgdir =~ s{/[^/]*$}{}r), $inst . ($sharedir =~ s{/[^/]*$}{}r));
system_or_bail('cp', '-a', $pkgdir, $inst . ($pkgdir =~ s{/[^/]*$}{}r) . '/');
system_or_bail('cp', '-a', $sharedir, $inst . ($sharedir =~ s{/[^/]*$}{}r) . '/');
system_or_bail("make -s -C $src install TOOLS= DESTDIR=$inst PG_CONFIG=$pg_config >/dev/null");

my $old = PostgreSQL::Test::Cluster->new('v10', install_path => "$inst$pkgdir");
$old->init;
$old->start;
$old->safe_psql('postgres', q{
	CREATE EXTENSION simhash VERSION '1.0';
	CREATE TABLE t (id int PRIMARY KEY, fp simhash);
	INSERT INTO t SELECT g, (g * 2654435761)::bigint::simhash FROM generate_series(1, 3000) g;
	CREATE INDEX t_fp ON t USING simhash (fp);
	INSERT INTO t SELECT g, (g * 2654435761)::bigint::simhash FROM generate_series(3001, 3100) g;
});
my $radius_q = q{SELECT count(*) FROM t WHERE fp %@ simhash_query((7 * 2654435761)::bigint::simhash, 20)};
my $old_count = $old->safe_psql('postgres', "SET enable_seqscan = off; $radius_q");
is($old->safe_psql('postgres', "SET enable_seqscan = off; EXPLAIN (COSTS OFF) $radius_q") =~ /t_fp/ ? 1 : 0,
	1, '1.0 answers with its index');
ok($old_count > 0, "1.0's index finds rows ($old_count)");
$old->stop;

# The same data directory, started with the current build.
my $new = PostgreSQL::Test::Cluster->new('current');
PostgreSQL::Test::RecursiveCopy::copypath($old->data_dir, $new->data_dir);
chmod 0700, $new->data_dir;
$new->append_conf('postgresql.conf', 'port = ' . $new->port);
$new->start;
$new->safe_psql('postgres', 'ALTER EXTENSION simhash UPDATE');
isnt($new->safe_psql('postgres', "SELECT extversion FROM pg_extension WHERE extname = 'simhash'"),
	'1.0', 'extension updated');

# Planning never fails: the planner prices the index out.
is($new->safe_psql('postgres', $radius_q), $old_count, 'radius query runs, on a sequential scan');
like($new->safe_psql('postgres', "EXPLAIN (COSTS OFF) $radius_q"), qr/Seq Scan on t/, 'planned as a sequential scan');
is($new->safe_psql('postgres', 'SELECT count(*) FROM t WHERE simhash_within(fp, (7 * 2654435761)::bigint::simhash, 20)'),
	$old_count, 'simhash_within plans and runs');

# Every path that reads the index: 55000 and the REINDEX hint.
my $forced = "SET enable_seqscan = off; SET seq_page_cost = 1000;";  # any other path costs more
my @paths = (
	'vacuum, no dead rows' => 'VACUUM t',
	'index scan' => "$forced $radius_q",
	'bitmap scan' => "$forced SET enable_indexscan = off; $radius_q",
	'KNN scan' => "$forced SELECT id FROM t ORDER BY fp <~> (7 * 2654435761)::bigint::simhash LIMIT 3",
	'insert' => "INSERT INTO t VALUES (100000, '0123456789abcdef')",
	'vacuum, dead rows' => 'DELETE FROM t WHERE id = 1; VACUUM t',
	'simhash_index_check' => "SELECT simhash_index_check('t_fp')",
	'simhash_index_runs' => "SELECT * FROM simhash_index_runs('t_fp')",
);
while (my ($path, $sql) = splice(@paths, 0, 2))
{
	my ($rc, $out, $err) = $new->psql('postgres', "\\set VERBOSITY verbose\n$sql");
	like($err, qr/ERROR:  55000: simhash index "t_fp" has on-disk format version 2/, "$path: 55000");
	like($err, qr/HINT:  REINDEX INDEX t_fp;/, "$path: REINDEX hint");
}

# REINDEX: the index answers again, as a sequential scan does.
$new->safe_psql('postgres', 'REINDEX INDEX t_fp');
my $seq = $new->safe_psql('postgres', "SET enable_indexscan = off; SET enable_bitmapscan = off; $radius_q");
is($new->safe_psql('postgres', "SET enable_seqscan = off; $radius_q"), $seq, 'after REINDEX the index answers as a sequential scan');
like($new->safe_psql('postgres', "SET enable_seqscan = off; EXPLAIN (COSTS OFF) $radius_q"), qr/t_fp/, 'and is used');
like($new->safe_psql('postgres', "SELECT simhash_index_check('t_fp')"),
	qr/^simhash index "t_fp" is consistent: /, 'simhash_index_check passes');

$new->stop;
done_testing();
