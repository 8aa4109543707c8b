# simhash_pairs through the index while a merge is half done: the merge of
# another backend is stopped after switching its first table over
# (simhash.debug_pause_merge), so the run list names the new run for table 0
# and the input runs for the others, and that backend's rows, in the index,
# are not committed.  The index path must return the pairs of a brute-force
# self-join of the visible rows, while the merge is paused and after it was
# cancelled (its half-switched run list stays until the next merge takes it
# over).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('pairs_merge');
$node->init;
$node->append_conf('postgresql.conf', "autovacuum = off\njit = off\n");
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION simhash');

# groups of 4 near copies (1..6 bits apart), 2,000 rows after the build: a
# few small runs of a one-page pending buffer
my $fp = "(('x' || md5((i / 4)::text))::bit(64)::bigint # (7::bigint << (i % 60)))::simhash";
$node->safe_psql('postgres', qq{
CREATE TABLE pm (id int, fp simhash);
CREATE INDEX pm_fp ON pm USING simhash (fp) WITH (bits = 3, blocks = 5, pending_pages = 1);
INSERT INTO pm SELECT i, $fp FROM generate_series(1, 2000) i;
});

# missing and extra rows of simhash_pairs against the brute force, and its count
sub compare
{
	my ($step) = @_;
	is($node->safe_psql('postgres', "SELECT simhash_pairs_index_for('pm', 'fp', 3)"),
		'pm_fp', "$step: simhash_pairs reads the index");
	my $r = $node->safe_psql('postgres', q{
CREATE TEMP TABLE naive AS SELECT a.id::text AS key_a, b.id::text AS key_b, (a.fp <~> b.fp) AS distance
  FROM pm a, pm b WHERE a.id::text COLLATE "C" < b.id::text COLLATE "C" AND (a.fp <~> b.fp) <= 3;
CREATE TEMP TABLE got AS SELECT * FROM simhash_pairs('pm', 'fp', 'id', 3);
SELECT (SELECT count(*) FROM (SELECT * FROM naive EXCEPT ALL SELECT * FROM got) s),
       (SELECT count(*) FROM (SELECT * FROM got EXCEPT ALL SELECT * FROM naive) s),
       (SELECT count(*) FROM got)});
	my ($missing, $extra, $pairs) = split /\|/, $r;
	is("$missing|$extra", '0|0', "$step: no pair missing, none extra ($pairs pairs)");
	cmp_ok($pairs, '>', 100, "$step: pairs found");
}

compare('before the merge');

# a statement of 5,000 rows whose flushes start a tier merge, paused midway
my $s = $node->background_psql('postgres', on_error_stop => 0);
my $pid = $s->query_safe('SELECT pg_backend_pid()');
chomp $pid;
$s->query_safe('SET simhash.debug_pause_merge = on');
$s->query_until(qr/started/,
	"\\echo started\nINSERT INTO pm SELECT i, $fp FROM generate_series(2001, 7000) i;\n");
$node->poll_query_until('postgres', qq{
SELECT count(*) > 0 FROM pg_stat_activity
 WHERE pid = $pid AND wait_event_type = 'Extension' AND wait_event = 'Extension'})
  or die "the merge of backend $pid did not pause";
is($node->safe_psql('postgres', "SELECT count(*) FROM simhash_index_runs('pm_fp') WHERE kind = 'merge'"),
	'1', 'a merge is paused after its first table');
compare('during the merge');

$node->safe_psql('postgres', "SELECT pg_cancel_backend($pid)");
$s->query('SELECT 1');
like($s->{stderr}, qr/canceling statement due to user request/, 'the INSERT was cancelled');
$s->quit;
is($node->safe_psql('postgres', "SELECT count(*) FROM simhash_index_runs('pm_fp') WHERE kind = 'merge'"),
	'1', 'the half-done merge is left in the run list');
compare('after the cancelled merge');

$node->stop;
done_testing();
