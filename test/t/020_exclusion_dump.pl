# A near-duplicate exclusion constraint survives pg_dump and restore (custom
# format through pg_restore, plain format through psql): the restored
# constraint has the same definition, radius included, the data restores
# without conflict, and the restored table still rejects a near-duplicate
# whatever the session's simhash.max_distance.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('dump');
$node->init;
$node->append_conf('postgresql.conf', "jit = off\n");
$node->start;

$node->safe_psql('postgres', 'CREATE DATABASE src');
$node->safe_psql('src', q{
CREATE EXTENSION simhash;
CREATE TABLE pages (id int PRIMARY KEY, fp simhash,
    EXCLUDE USING simhash (simhash_query(fp, 3) WITH @%@));
-- 2,000 random fingerprints (no two within 3 bits: about 1 in 10^12 pairs)
INSERT INTO pages SELECT i, ('x' || md5(i::text))::bit(64)::simhash FROM generate_series(1, 2000) i;
-- and rows exactly 4 bits apart, the closest the constraint allows
INSERT INTO pages VALUES (3001, '0123456789abcdef'), (3002, '0123456789abcde0');
});
my $def_sql = q{SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = 'pages'::regclass AND contype = 'x'};
my $src_def = $node->safe_psql('src', $def_sql);
like($src_def, qr/simhash_query\(fp, 3\) WITH (OPERATOR\(public\.)?@%@/, 'constraint holds its radius');

my $dir = PostgreSQL::Test::Utils::tempdir;
my $port = $node->port;
my $host = $node->host;

command_ok([ 'pg_dump', '-h', $host, '-p', $port, '-Fc', '-f', "$dir/src.dump", 'src' ], 'pg_dump -Fc');
$node->safe_psql('postgres', 'CREATE DATABASE custom');
command_ok([ 'pg_restore', '-h', $host, '-p', $port, '--exit-on-error', '-d', 'custom', "$dir/src.dump" ],
	'pg_restore of the custom dump');

command_ok([ 'pg_dump', '-h', $host, '-p', $port, '-f', "$dir/src.sql", 'src' ], 'pg_dump plain');
$node->safe_psql('postgres', 'CREATE DATABASE plain');
command_ok([ 'psql', '-h', $host, '-p', $port, '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', 'plain', '-f', "$dir/src.sql" ],
	'psql restore of the plain dump');

my $src_rows = $node->safe_psql('src', 'SELECT count(*), sum(fp::bigint) FROM pages');
for my $db ('custom', 'plain')
{
	is($node->safe_psql($db, $def_sql), $src_def, "$db: same constraint definition");
	is($node->safe_psql($db, 'SELECT count(*), sum(fp::bigint) FROM pages'), $src_rows, "$db: same rows");
	my ($rc, $out, $err) = $node->psql($db,
		"SET simhash.max_distance = 0; INSERT INTO pages VALUES (4001, '0123456789abcdee')",
		extra_params => [ '-v', 'VERBOSITY=verbose' ]);
	isnt($rc, 0, "$db: a 1-bit neighbour is rejected with simhash.max_distance = 0");
	like($err, qr/23P01.*violates exclusion constraint/s, "$db: 23P01 exclusion violation");
	like($node->safe_psql($db, "SELECT simhash_index_check('pages_simhash_query_excl')"),
		qr/^simhash index "pages_simhash_query_excl" is consistent: /,
		"$db: the constraint's index passes the check");
}

$node->stop;
done_testing();
