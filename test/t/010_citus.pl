# A Citus coordinator and two workers answer like one node.
#
# The same planted rows live in a local table and in a table distributed over
# the workers; radius queries, %, KNN, EXISTS, simhash_pairs and
# simhash_clusters must give the same answers on both, before and after
# INSERT, UPDATE, DELETE and VACUUM through the coordinator, the shards' plans
# must use their simhash index, and every shard index must pass
# simhash_index_check.  Skipped when Citus is not installed.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use SimhashTAP;

my ($coord, @workers) = citus_cluster();
is($coord->safe_psql('postgres', 'SELECT count(*) FROM citus_get_active_worker_nodes()'),
	'2', 'two active workers');

# CREATE EXTENSION on the coordinator is propagated to every worker.
$coord->safe_psql('postgres', 'CREATE EXTENSION simhash');
for my $w (@workers)
{
	is($w->safe_psql('postgres', "SELECT extversion FROM pg_extension WHERE extname = 'simhash'"),
		$coord->safe_psql('postgres', "SELECT extversion FROM pg_extension WHERE extname = 'simhash'"),
		$w->name . ': simhash created by propagation');
}

# 16000 rows: near copies (1 to 3 bits flipped) of 4000 centres, 40 exact
# duplicates and a NULL; the same
# rows in a local table and in a table distributed on id over 4 shards.
$coord->safe_psql('postgres', q{
CREATE TABLE pages (id bigint PRIMARY KEY, fp simhash);
CREATE TABLE pages_local (id bigint PRIMARY KEY, fp simhash);
SELECT create_distributed_table('pages', 'id', shard_count => 4);
INSERT INTO pages_local
SELECT i, (('x' || md5((i / 4)::text))::bit(64)::bigint # (7::bigint << (i % 62)) # (i % 3)::bigint)::simhash
  FROM generate_series(1, 16000) i;
INSERT INTO pages_local SELECT 16000 + id, fp FROM pages_local WHERE id <= 40;
INSERT INTO pages_local VALUES (0, NULL);
INSERT INTO pages SELECT * FROM pages_local;
CREATE INDEX pages_fp ON pages USING simhash (fp);
CREATE INDEX pages_local_fp ON pages_local USING simhash (fp);
ANALYZE pages; ANALYZE pages_local;
});
is($coord->safe_psql('postgres', q{
	SELECT count(*) FROM pg_dist_shard s JOIN pg_dist_placement p USING (shardid)
	 WHERE s.logicalrelid = 'pages'::regclass}), '4', 'four shard placements');

# Query fingerprints: stored ones (with near copies) and one with bits flipped.
my @q = split /\n/, $coord->safe_psql('postgres', q{
	SELECT id || ' ' || fp FROM pages_local WHERE id % 997 = 1
	UNION ALL SELECT '-1 ' || (fp::bigint # 65536)::simhash FROM pages_local WHERE id = 5000
	ORDER BY 1});

# The answers of one table, as text; the same script runs against both.
sub answers
{
	my ($table) = @_;
	my $sql = "SET citus.propagate_set_commands = 'local';\n";
	for my $line (@q)
	{
		my ($id, $fp) = split / /, $line;
		for my $r (0 .. 5)
		{
			$sql .= "SELECT 'within $id $r', array_agg(id ORDER BY id) FROM $table "
			  . "WHERE simhash_within(fp, '$fp', $r);\n";
		}
		# % reads simhash.max_distance where it runs: on the workers, SET LOCAL
		# propagated by Citus.
		$sql .= "BEGIN; SET LOCAL simhash.max_distance = 4;\n"
		  . "SELECT 'percent $id', array_agg(id ORDER BY id) FROM $table WHERE fp % '$fp';\nCOMMIT;\n";
		$sql .= "SELECT 'knn $id', fp <~> '$fp' FROM $table ORDER BY fp <~> '$fp' LIMIT 7;\n";
		$sql .= "SELECT 'knn-id $id', id, fp <~> '$fp' FROM $table ORDER BY fp <~> '$fp', id LIMIT 7;\n";
		$sql .= "SELECT 'exists $id', EXISTS (SELECT 1 FROM $table WHERE simhash_within(fp, '$fp', 2) AND id <> $id);\n";
	}
	return $coord->safe_psql('postgres', $sql);
}

sub pairs
{
	my ($func, $table, $r) = @_;
	return join "\n", sort split /\n/,
	  $coord->safe_psql('postgres', "SELECT * FROM $func('$table', 'fp', 'id', $r)");
}

sub compare
{
	my ($step) = @_;
	my $local = answers('pages_local');
	my $distributed = answers('pages');
	ok(($local =~ tr/\n//) > 200 && $local =~ /\{\d+,\d+/, "$step: queries return rows");
	is($distributed, $local, "$step: distributed answers = local answers");

	for my $r (0, 3, 5)
	{
		my $want = pairs('simhash_pairs', 'pages_local', $r);
		ok($want ne '', "$step: radius $r has pairs");
		is(pairs('simhash_pairs', 'pages', $r), $want, "$step: simhash_pairs radius $r, distributed = local");
	}
	is(pairs('simhash_clusters', 'pages', 3), pairs('simhash_clusters', 'pages_local', 3),
		"$step: simhash_clusters distributed = local");
	is($coord->safe_psql('postgres',
			"SELECT count(*) FROM pg_class WHERE relname LIKE 'simhash\\_pairs\\_%'"),
		'0', "$step: no scratch table left behind");

	# every shard index, on its worker
	my $checks = $coord->safe_psql('postgres', q{
		SELECT string_agg(result, ',' ORDER BY shardid) FROM run_command_on_shards('pages', $$
			SELECT count(simhash_index_check(i.indexrelid)) FROM pg_index i
			  JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am a ON a.oid = c.relam
			 WHERE i.indrelid = '%s'::regclass AND a.amname = 'simhash'$$)});
	is($checks, '1,1,1,1', "$step: simhash_index_check passes on every shard");
}

compare('bulk load');

# The shards' plans use their simhash index.
my $q0 = (split / /, $q[0])[1];
for my $case (
	[ 'simhash_within', "SELECT id FROM pages WHERE simhash_within(fp, '$q0', 3)" ],
	[ '%',              "SELECT id FROM pages WHERE fp % '$q0'" ],
	[ 'KNN',            "SELECT id FROM pages ORDER BY fp <~> '$q0' LIMIT 5" ])
{
	my ($what, $query) = @$case;
	my $plan = $coord->safe_psql('postgres',
		"SET citus.explain_all_tasks = on; EXPLAIN (COSTS OFF) $query");
	my $tasks = () = $plan =~ /->  Task\n/g;
	my $indexed = () = $plan =~ /(?:Index Scan using|Bitmap Index Scan on) pages_fp_\d+/g;
	is($tasks, 4, "$what: one task per shard");
	is($indexed, 4, "$what: every shard's plan scans its simhash index")
	  or diag $plan;
}

# Writes through the coordinator, the same on both tables.
for my $table ('pages', 'pages_local')
{
	$coord->safe_psql('postgres', qq{
INSERT INTO $table
SELECT i, (('x' || md5((i / 4)::text))::bit(64)::bigint # (1::bigint << (i % 64)))::simhash
  FROM generate_series(16101, 17500) i;
INSERT INTO $table SELECT 17501, fp FROM $table WHERE id = 1001;
DELETE FROM $table WHERE id % 5 = 0;
UPDATE $table SET fp = (fp::bigint # 3)::simhash WHERE id % 7 = 0;
});
}
compare('insert, update, delete');

$coord->safe_psql('postgres', 'VACUUM pages; VACUUM pages_local');
for my $table ('pages', 'pages_local')
{
	$coord->safe_psql('postgres', qq{
INSERT INTO $table
SELECT i, (('x' || md5((i / 3)::text))::bit(64)::bigint # (5::bigint << (i % 61)))::simhash
  FROM generate_series(20001, 21000) i;
});
}
compare('vacuum, insert');

# A distributed partitioned table in a schema whose name needs quoting, read
# by a role that may SELECT: pairs across partitions and shards, as locally;
# the scratch table needs CREATE on the schema.
$coord->safe_psql('postgres', q{
CREATE SCHEMA "Crawl ""s""";
CREATE TABLE "Crawl ""s"""."Parts" (id bigint, "F p" simhash, part int) PARTITION BY LIST (part);
CREATE TABLE "Crawl ""s"""."Parts_0" PARTITION OF "Crawl ""s"""."Parts" FOR VALUES IN (0);
CREATE TABLE "Crawl ""s"""."Parts_1" PARTITION OF "Crawl ""s"""."Parts" FOR VALUES IN (1);
SELECT create_distributed_table('"Crawl ""s"""."Parts"', 'id', shard_count => 4);
INSERT INTO "Crawl ""s"""."Parts" SELECT id, fp, id % 2 FROM pages_local;
CREATE ROLE reader LOGIN;
GRANT USAGE ON SCHEMA "Crawl ""s""" TO reader;
GRANT SELECT ON "Crawl ""s"""."Parts" TO reader;
});
my $parts_sql = q{SELECT * FROM simhash_pairs('"Crawl ""s"""."Parts"', 'F p', 'id', 4)};
my ($rc, $out, $err) = $coord->psql('postgres', "SET ROLE reader; $parts_sql");
like($err, qr/permission denied for schema Crawl "s"/, 'a reader without CREATE on the schema is refused');
$coord->safe_psql('postgres', 'GRANT CREATE ON SCHEMA "Crawl ""s""" TO reader');
my $parts = join "\n", sort split /\n/, $coord->safe_psql('postgres', "SET ROLE reader; $parts_sql");
ok($parts ne '', 'partitioned distributed table: pairs found');
is($parts, pairs('simhash_pairs', 'pages_local', 4),
	'partitioned distributed table in a quoted schema: simhash_pairs = local');

done_testing();
