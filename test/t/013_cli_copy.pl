# The README's recipe for a directory of files through the command line:
# simhash-fingerprint's tab-separated output loads with \copy into a
# (fp simhash, name text) table, names as the files are named (a tab and a
# backslash included), fingerprints equal to SQL simhash() of each file read
# on the server, and the pairs of simhash-find-all --exact-copies equal those
# of simhash_pairs on the loaded table.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $fingerprint = 'src/cli/simhash-fingerprint';
my $find_all = 'src/cli/simhash-find-all';
plan skip_all => "$fingerprint is not built" unless -x $fingerprint && -x $find_all;

my $dir = PostgreSQL::Test::Utils::tempdir;
my %files = (
	'a.txt' => 'the quick brown fox jumps over the lazy dog and runs into the forest',
	'b.txt' => 'the quick brown fox jumps over the lazy dog and runs into the forest',
	'c.txt' => 'the quick brown fox jumps over the lazy dog and runs into the forest!',
	"tab\tand\\backslash.txt" => 'an unrelated text about tea, steeped for two minutes at eighty degrees',
	'd.txt' => 'an unrelated text about tea, steeped for three minutes at ninety degrees');
for my $name (keys %files)
{
	open(my $fh, '>', "$dir/$name") or die "cannot write $dir/$name: $!";
	print $fh $files{$name};
	close($fh);
}
my @paths = map { "$dir/$_" } sort keys %files;
my ($tsv, $err) = ('', '');
IPC::Run::run([ $fingerprint, @paths ], '>', \$tsv, '2>', \$err) or die "simhash-fingerprint: $err";
open(my $out, '>', "$dir/fps.tsv") or die;
print $out $tsv;
close($out);

my $node = PostgreSQL::Test::Cluster->new('cli_copy');
$node->init;
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION simhash');
$node->safe_psql('postgres', qq{CREATE TABLE file_fps (fp simhash, name text);
\\copy file_fps FROM '$dir/fps.tsv'});

is($node->safe_psql('postgres', 'SELECT count(*) FROM file_fps'), scalar(keys %files), 'one row per file');
is($node->safe_psql('postgres', qq{SELECT string_agg(substr(name, length('$dir/') + 1), '|' ORDER BY name) FROM file_fps}),
	join('|', sort keys %files), 'names read back as the files are named (tab and backslash too)');
is($node->safe_psql('postgres', 'SELECT count(*) FROM file_fps WHERE fp <> simhash(pg_read_file(name))'),
	'0', 'every fingerprint equals SQL simhash() of the file read on the server');

# the CLI's pairs, exact copies included, are simhash_pairs' (names as keys)
my $pairs = '';
IPC::Run::run([ $find_all, '--distance', '3', '--exact-copies' ], '<', \$tsv, '>', \$pairs, '2>', \$err)
  or die "simhash-find-all: $err";
my @cli = sort map { my ($x, $y, $d) = split /\t/; join("|", sort($x, $y), $d) } split /\n/, $pairs;
sub copy_escaped { my ($s) = @_; $s =~ s/\\/\\\\/g; $s =~ s/\t/\\t/g; return $s; }
my @sql = sort map { my ($x, $y, $d) = split /\|/; join("|", sort(copy_escaped($x), copy_escaped($y)), $d) }
  split /\n/, $node->safe_psql('postgres',
	q{SELECT key_a || '|' || key_b || '|' || distance FROM simhash_pairs('file_fps', 'fp', 'name', 3)});
cmp_ok(scalar(@cli), '>=', 3, 'the copies and the near copy make pairs');
is(join("\n", @cli), join("\n", @sql), 'simhash-find-all --exact-copies = simhash_pairs');
like($pairs, qr{\Q$dir\E/a\.txt\t\Q$dir\E/b\.txt\t0}, 'the identical files are a pair at distance 0');

$node->stop;
done_testing();
