# The README's SQL runs as written.  Every ```sql block of README.md is run by
# psql, in order, each block in its own session, all in one fresh database:
# - a block with a comment "-- ERROR" shows an error: it must fail (all its
#   statements are run; at least one must raise an error);
# - a block with a comment "-- needs: NAME" runs only when the server offers
#   the extension NAME (pg_available_extensions), and is skipped otherwise;
# - every other block must run without an error.
# Each result is reported with the block's line number in README.md.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $readme = 'README.md';
open(my $fh, '<', $readme) or die "cannot open $readme: $!";
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
ok(!$current, "every sql block of $readme is closed")
  or diag("the block starting at line $current->{line} has no closing fence");
cmp_ok(scalar(@blocks), '>', 0, "$readme has sql blocks");

my $node = PostgreSQL::Test::Cluster->new('readme');
$node->init;
$node->append_conf('postgresql.conf', "max_parallel_workers_per_gather = 0\n");
$node->start;
$node->safe_psql('postgres', 'CREATE DATABASE readme');

my %available = map { $_ => 1 } split /\n/,
  $node->safe_psql('postgres', 'SELECT name FROM pg_available_extensions');

my ($ran, $skipped) = (0, 0);
for my $block (@blocks)
{
	my $where = "$readme line $block->{line}";
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
		'readme', $block->{sql},
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
note("$ran sql blocks run, $skipped skipped");

$node->stop;
done_testing();
