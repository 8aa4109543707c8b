# simhash_near_duplicates on Citus tables: a coordinator and two workers;
# the same real-text rows in a local table, a reference table and a table
# distributed over 4 shards give the same verified pairs and similarities.
# The distributed table is joined on the workers (the plain entry point
# switches to simhash_near_duplicates_distributed): every step an
# INSERT ... SELECT that Citus repartitions, nothing collected on the
# coordinator, no scratch table left behind, also after an error.  The
# reference table is joined on the coordinator, in memory or on disk.
# Skipped when Citus is not installed (without Citus the regress tests run the
# same entry point).
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

# A few rows without shingles and exact copies under other keys: sets of
# size 0 and equal sets are where a prefix join can differ.
$coord->safe_psql('postgres', q{
INSERT INTO docs_local (k, body, fp) SELECT 'empty-' || i, b, simhash(b) FROM (VALUES (1, ''), (2, ''), (3, '...')) v(i, b);
INSERT INTO docs_local (k, body, fp) SELECT k || '/copy', body, fp FROM docs_local WHERE k ~ '^(1|98)-(5|60)$';
INSERT INTO docs SELECT * FROM docs_local WHERE k LIKE 'empty-%' OR k LIKE '%/copy';
CREATE TABLE docs_ref (LIKE docs_local INCLUDING ALL);
SELECT create_reference_table('docs_ref');
INSERT INTO docs_ref SELECT * FROM docs_local;
});

sub pairs
{
	my ($table, $t, $settings) = @_;
	$settings //= 'SET work_mem = \'64MB\'';
	my ($rc, $out, $err) = $coord->psql('postgres',
		"SET client_min_messages = notice; SET extra_float_digits = 3; $settings; "
		  . "SELECT key_a, key_b, similarity FROM simhash_near_duplicates('$table', 'fp', 'body', 'k', $t)");
	is($rc, 0, "$table at $t ($settings) succeeds") or diag $err;
	return (join("\n", sort split /\n/, $out), $err);
}

for my $t (0.3, 0.5, 0.7, 0.8, 0.9, 1)
{
	my ($want, $local_notes) = pairs('docs_local', $t);
	ok(($want =~ tr/\n//) > 10, "local: pairs at $t");
	like($local_notes, qr/joining in memory/, "local at $t: in memory");

	my ($got, $notes) = pairs('docs', $t);
	like($notes, qr/distributed join of (public\.)?docs on the Citus workers/, "distributed at $t: on the workers");
	unlike($notes, qr/joining (in memory|on disk)/, "distributed at $t: not joined on the coordinator");
	is($got, $want, "distributed = local at $t (pairs and similarities)");

	($got, $notes) = pairs('docs_ref', $t);
	like($notes, qr/joining in memory/, "reference at $t: on the coordinator");
	is($got, $want, "reference = local at $t");
}
my ($want) = pairs('docs_local', 0.8);
my ($got, $notes) = pairs('docs_ref', 0.8, 'SET work_mem = \'64kB\'');
like($notes, qr/joining on disk in chunks/, 'reference at 0.8: on disk at 64kB');
is($got, $want, 'reference = local at 0.8, on disk');

# 5,000 rows or more: the tokens frequent in a sample go last in the order
# (short overlapping windows of the same text share many tokens)
$coord->safe_psql('postgres', q{
CREATE TABLE many_local (k text PRIMARY KEY, body text, fp simhash);
INSERT INTO many_local (k, body)
  SELECT format('w%s-%s', s, len), (SELECT string_agg(w, ' ' ORDER BY i) FROM words WHERE i >= s AND i < s + len)
    FROM generate_series(1, 1250) AS s, unnest('{6,10,16,30}'::int[]) AS len;
UPDATE many_local SET fp = simhash(body);
CREATE TABLE many (LIKE many_local INCLUDING ALL);
SELECT create_distributed_table('many', 'k', shard_count => 4);
INSERT INTO many SELECT * FROM many_local;
});
for my $t (0.5, 0.8)
{
	my ($want) = pairs('many_local', $t);
	my ($got, $notes) = pairs('many', $t);
	like($notes, qr/prefix entries \(([1-9]\d*) frequent tokens last\)/, "5,000 rows at $t: frequent tokens last");
	ok(($want =~ tr/\n//) > 100, "5,000 rows at $t: pairs");
	is($got, $want, "5,000 rows at $t: distributed = local");
}

# every step is a repartitioned (or pushed down) INSERT ... SELECT: Citus
# collects no rows on the coordinator
($got, $notes) = pairs('docs', 0.8, 'SET client_min_messages = debug1');
is($got, $want, 'distributed = local at 0.8, with DEBUG messages');
my $repartitioned = () = $notes =~ /performing repartitioned INSERT \.\.\. SELECT/g;
ok($repartitioned >= 3, "Citus repartitions the sets, the prefix entries and the candidates ($repartitioned)");
unlike($notes, qr/Collecting INSERT \.\.\. SELECT results on coordinator/, 'no INSERT ... SELECT goes through the coordinator');

is($coord->safe_psql('postgres',
		"SELECT string_agg(duplicate || '>' || survivor, ',' ORDER BY duplicate) FROM simhash_near_duplicate_survivors('docs', 'fp', 'body', 'k', 0.8)"),
	$coord->safe_psql('postgres',
		"SELECT string_agg(duplicate || '>' || survivor, ',' ORDER BY duplicate) FROM simhash_near_duplicate_survivors('docs_local', 'fp', 'body', 'k', 0.8)"),
	'survivors: distributed = local');

my ($rc, $out, $err) = $coord->psql('postgres',
	"SELECT * FROM simhash_near_duplicates_distributed('docs_local', 'fp', 'body', 'k', 0.8)");
like($err, qr/relation (public\.)?docs_local is not a Citus distributed table/, 'a local table is refused');
($rc, $out, $err) = $coord->psql('postgres',
	"SELECT * FROM simhash_near_duplicates_distributed('docs_ref', 'fp', 'body', 'k', 0.8)");
like($err, qr/relation (public\.)?docs_ref is not a Citus distributed table/, 'a reference table is refused');

# in the caller's transaction, after a write to the distributed table, twice
is($coord->safe_psql('postgres', q{BEGIN;
INSERT INTO docs SELECT k || '/tx', body, fp FROM docs_local WHERE k = '1-100';
SELECT count(*) FROM simhash_near_duplicates('docs', 'fp', 'body', 'k', 0.8) WHERE key_b = '1-100/tx' AND similarity = 1;
SELECT count(*) FROM simhash_near_duplicates('docs', 'fp', 'body', 'k', 0.9) WHERE key_b = '1-100/tx' AND similarity = 1;
ROLLBACK}), "1\n1", 'in a transaction that wrote to the table, twice');

# errors: the checks of the local join (key and body swapped), and a
# statement cancelled in the middle of the join; both leave no scratch table
for my $args ("'fp', 'k', 'body'", "'fp', 'body', 'k', 0")
{
	my (undef, undef, $local_err) = $coord->psql('postgres',
		"SELECT count(*) FROM simhash_near_duplicates('docs_local', $args)");
	($rc, $out, $err) = $coord->psql('postgres',
		"SELECT count(*) FROM simhash_near_duplicates('docs', $args)");
	my ($msg) = $local_err =~ /ERROR:\s+(.*)/;
	ok(defined $msg && index($err, $msg =~ s/docs_local/docs/r) >= 0, "distributed ($args) fails as local: " . ($msg // 'no error'))
	  or diag "local: $local_err\ndistributed: $err";
}
my $cancelled = 0;
for my $ms (150, 600, 1500, 4000)
{
	($rc, $out, $err) = $coord->psql('postgres',
		"SET statement_timeout = '${ms}ms'; SELECT count(*) FROM simhash_near_duplicates('docs', 'fp', 'body', 'k', 0.3)");
	$cancelled++ if $err =~ /canceling statement due to statement timeout/;
}
ok($cancelled > 0, "joins cancelled at a statement_timeout ($cancelled of 4)");

is($coord->safe_psql('postgres',
		"SELECT count(*) FROM pg_class WHERE relname LIKE 'simhash\\_ndd%'"),
	'0', 'no scratch table left behind');
is($coord->safe_psql('postgres',
		"SELECT count(*) FROM pg_dist_partition WHERE logicalrelid::text LIKE '%simhash\\_ndd%'"),
	'0', 'no scratch table in Citus\'s catalog');
is($_->safe_psql('postgres', "SELECT count(*) FROM pg_class WHERE relname LIKE 'simhash\\_ndd%'"),
	'0', 'no scratch shard left behind on a worker') for @workers;

done_testing();
