# The documentation's SQL runs as written.  Every ```sql block of README.md,
# then of each docs/*.md (in name order), is run by psql, each block in its
# own session.  README.md's blocks run in order in one fresh database (its
# installation section creates the extension); each docs/*.md file runs in
# a fresh database of its own, after CREATE EXTENSION simhash, so a page's
# blocks may build on each other but never on another page's.
# - a block with a comment "-- ERROR" shows an error: it must fail (all its
#   statements are run; at least one must raise an error);
# - a block with a comment "-- needs: NAME" runs only when the server offers
#   the extension NAME (pg_available_extensions), and is skipped otherwise;
# - every other block must run without an error.
# Each result is reported with the file and the block's line number.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

# The ```sql blocks of a Markdown file, each { line => N, sql => TEXT }.
sub sql_blocks
{
	my ($file) = @_;
	open(my $fh, '<', $file) or die "cannot open $file: $!";
	my (@blocks, $current);
	while (my $line = <$fh>)
	{
		if (!$current && $line =~ /^\s*```sql\s*$/)
		{
			$current = { line => $. + 1, sql => '' };
		}
		elsif ($current && $line =~ /^\s*```\s*$/)
		{
			push @blocks, $current;
			undef $current;
		}
		elsif ($current)
		{
			$current->{sql} .= $line;
		}
	}
	close($fh);
	ok(!$current, "every sql block of $file is closed")
	  or diag("the block starting at line $current->{line} has no closing fence");
	return @blocks;
}

my @files = ('README.md', sort glob('docs/*.md'));
my %blocks = map { $_ => [ sql_blocks($_) ] } @files;
cmp_ok(scalar(@{ $blocks{'README.md'} }), '>', 0, 'README.md has sql blocks');

my $node = PostgreSQL::Test::Cluster->new('readme');
$node->init;
$node->append_conf('postgresql.conf', "max_parallel_workers_per_gather = 0\n");
$node->start;

my %available = map { $_ => 1 } split /\n/,
  $node->safe_psql('postgres', 'SELECT name FROM pg_available_extensions');

my ($ran, $skipped) = (0, 0);
for my $file (@files)
{
	next unless @{ $blocks{$file} };
	(my $db = lc($file)) =~ s/[^a-z0-9]+/_/g;
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	$node->safe_psql($db, 'CREATE EXTENSION simhash') if $file ne 'README.md';
	for my $block (@{ $blocks{$file} })
	{
		my $where = "$file line $block->{line}";
		my @needs = $block->{sql} =~ /--\s*needs:\s*([\w-]+)/g;
		my @missing = grep { !$available{$_} } @needs;
		if (@missing)
		{
		  SKIP:
			{
				skip "$where needs extension @missing", 1;
			}
			$skipped++;
			next;
		}
		my $expect_error = $block->{sql} =~ /--\s*ERROR\b/;
		my ($out, $err) = ('', '');
		my $ret = $node->psql(
			$db, $block->{sql},
			stdout => \$out,
			stderr => \$err,
			on_error_stop => $expect_error ? 0 : 1);
		my $failed = $ret != 0 || $err =~ /^(psql:[^\n]*)?ERROR:/m;
		if ($expect_error)
		{
			ok($failed, "$where (marked -- ERROR) raises an error")
			  or diag("no error from:\n$block->{sql}");
		}
		else
		{
			ok(!$failed, "$where runs without error")
			  or diag("psql exit $ret, stderr:\n$err\nblock:\n$block->{sql}");
		}
		$ran++;
	}
}
note("$ran sql blocks run, $skipped skipped");

$node->stop;
done_testing();
