# simhash_near_duplicates on a Citus distributed table: a coordinator and
# two workers; the same real-text rows in a local table and in a table
# distributed over 4 shards give the same verified pairs, through the
# in-memory join (the workers send key and body, the coordinator joins) and
# through the join on disk that a small work_mem moves to; the
# survivors agree too.  Skipped when Citus is not installed.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use SimhashTAP;

my ($coord, @workers) = citus_cluster();
$coord->safe_psql('postgres', 'CREATE EXTENSION simhash');

# Windows of 1 to 400 words of two real pages, and edited copies of them.
my $datadir = 'test/data';
my $page = slurp_file("$datadir/lighthouse.txt") . ' ' . slurp_file("$datadir/bakery.txt");
$page =~ s/'/''/g;
$coord->safe_psql('postgres', qq{
CREATE TABLE words AS
  SELECT row_number() OVER () AS i, w FROM regexp_split_to_table('$page', '\\s+') AS w;
CREATE TABLE docs_local (k text PRIMARY KEY, body text, fp simhash);
INSERT INTO docs_local (k, body)
  SELECT format('%s-%s', s, len), (SELECT string_agg(w, ' ' ORDER BY i) FROM words WHERE i >= s AND i < s + len)
    FROM generate_series(1, 1400, 97) AS s, unnest('{1,2,3,5,8,12,20,35,60,100,180,400}'::int[]) AS len;
INSERT INTO docs_local (k, body)
  SELECT k || '/typo', regexp_replace(body, '\\m(the|and|of)\\M', 'teh') FROM docs_local WHERE k ~ '-(12|35|100|400)\$'
  UNION ALL
  SELECT k || '/cut', regexp_replace(body, '\\.[^.]*\\.', '.') FROM docs_local WHERE k ~ '-(20|60|180|400)\$'
  UNION ALL
  SELECT k || '/header', 'Version 2.1 - updated ' || body FROM docs_local WHERE k ~ '-(3|8|35|100)\$';
UPDATE docs_local SET fp = simhash(body);
CREATE TABLE docs (k text PRIMARY KEY, body text, fp simhash);
SELECT create_distributed_table('docs', 'k', shard_count => 4);
INSERT INTO docs SELECT * FROM docs_local;
});
is($coord->safe_psql('postgres', 'SELECT count(*) FROM docs'), '360', 'distributed rows');

sub pairs
{
	my ($table, $t, $settings) = @_;
	my ($rc, $out, $err) = $coord->psql('postgres',
		"SET client_min_messages = notice; $settings; "
		  . "SELECT key_a, key_b, similarity FROM simhash_near_duplicates('$table', 'fp', 'body', 'k', $t)");
	is($rc, 0, "$table at $t ($settings) succeeds") or diag $err;
	return (join("\n", sort split /\n/, $out), $err);
}

for my $t (0.5, 0.8)
{
	my ($want, $local_notes) = pairs('docs_local', $t, 'SET work_mem = \'64MB\'');
	ok(($want =~ tr/\n//) > 20, "local: pairs at $t");
	like($local_notes, qr/joining in memory/, "local at $t: in memory");

	my ($got, $notes) = pairs('docs', $t, 'SET work_mem = \'64MB\'');
	like($notes, qr/joining in memory/, "distributed at $t: in memory");
	is($got, $want, "distributed = local at $t, in memory");

	($got, $notes) = pairs('docs', $t, 'SET work_mem = \'64kB\'');
	like($notes, qr/joining on disk in \d+ batches/, "distributed at $t: on disk at 64kB");
	is($got, $want, "distributed = local at $t, on disk");
}

is($coord->safe_psql('postgres',
		"SELECT string_agg(duplicate || '>' || survivor, ',' ORDER BY duplicate) FROM simhash_near_duplicate_survivors('docs', 'fp', 'body', 'k', 0.8)"),
	$coord->safe_psql('postgres',
		"SELECT string_agg(duplicate || '>' || survivor, ',' ORDER BY duplicate) FROM simhash_near_duplicate_survivors('docs_local', 'fp', 'body', 'k', 0.8)"),
	'survivors: distributed = local');
is($coord->safe_psql('postgres',
		"SELECT count(*) FROM pg_class WHERE relname LIKE 'simhash\\_nd%'"),
	'0', 'no scratch table left behind');

done_testing();
