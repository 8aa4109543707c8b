# CREATE INDEX ... USING simhash reports its progress in
# pg_stat_progress_create_index: a watcher session samples the view, one
# transaction per sample, while another session builds the index; the phases
# and counters it saw must be the simhash build's own and consistent.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $rows = 1500000;
my $node = PostgreSQL::Test::Cluster->new('progress');
$node->init;
$node->append_conf('postgresql.conf', qq(
autovacuum = off
max_parallel_maintenance_workers = 0
maintenance_work_mem = '256MB'
jit = off
));
$node->start;

$node->safe_psql('postgres', qq{
CREATE EXTENSION simhash;
CREATE TABLE t AS
  SELECT i AS id, ('x' || md5(i::text))::bit(64)::bigint::simhash AS fp
    FROM generate_series(1, $rows) i;
VACUUM ANALYZE t;
CREATE TABLE seen (n int, phase text, blocks_total bigint, blocks_done bigint,
                   tuples_total bigint, tuples_done bigint);
-- Samples the build of an index on t until it ends (or for at most
-- max_seconds): a row per sample, each in a transaction of its own, as a
-- backend reads the progress of others once per transaction.
CREATE PROCEDURE watch(max_seconds float8) LANGUAGE plpgsql AS \$\$
DECLARE
    stop timestamptz := clock_timestamp() + make_interval(secs => max_seconds);
    seen_build bool := false;
    i int := 0;
    got int;
BEGIN
    LOOP
        i := i + 1;
        INSERT INTO seen
          SELECT i, phase, blocks_total, blocks_done, tuples_total, tuples_done
            FROM pg_stat_progress_create_index WHERE relid = 't'::regclass;
        GET DIAGNOSTICS got = ROW_COUNT;
        COMMIT;
        EXIT WHEN got = 0 AND seen_build;
        seen_build := seen_build OR got > 0;
        EXIT WHEN clock_timestamp() > stop;
        PERFORM pg_sleep(0.002);
    END LOOP;
END
\$\$;
});

# Builds the index under a watcher (the watcher first, so that it cannot miss
# the start of the build) and checks what the watcher saw.
sub watched_build
{
	my ($label, $build) = @_;

	$node->safe_psql('postgres', 'TRUNCATE seen');
	my $watcher = $node->background_psql('postgres');
	$watcher->query_until(qr/watching/, "\\echo watching\nCALL watch(600);\n\\echo done\n");
	$node->safe_psql('postgres', $build);
	$watcher->query_until(qr/done/, '');
	$watcher->quit;

	my $phases = $node->safe_psql('postgres',
		q{SELECT string_agg(DISTINCT phase, ', ' ORDER BY phase) FROM seen});
	note("$label: phases seen: $phases");
	is( $node->safe_psql('postgres', q{
SELECT count(*) FROM seen
 WHERE phase NOT IN ('initializing', 'building index: initializing',
                     'building index: scanning table', 'building index: sorting tables',
                     'building index: writing runs')}),
		'0',
		"$label: every phase seen is a phase of the simhash build");
	cmp_ok($node->safe_psql('postgres', 'SELECT count(DISTINCT n) FROM seen'), '>=', 3,
		"$label: the build was sampled several times");
	like($phases, qr/building index: scanning table/, "$label: the table scan is reported");
	like($phases, qr/building index: (sorting tables|writing runs)/,
		"$label: sorting or writing the permuted tables is reported");
	is( $node->safe_psql('postgres', q{
SELECT count(*) FROM seen
 WHERE phase = 'building index: scanning table'
   AND (blocks_total <> pg_relation_size('t') / current_setting('block_size')::int
        OR blocks_done > blocks_total)}),
		'0',
		"$label: while scanning: blocks_total is the table size, blocks_done at most that");

	# bits 3: blocks 4, C(4, 3) = 4 permuted tables, each holding every row.
	is( $node->safe_psql('postgres', qq{
SELECT count(*) FROM seen
 WHERE phase IN ('building index: sorting tables', 'building index: writing runs')
   AND (tuples_total <> 4 * $rows OR tuples_done > tuples_total)}),
		'0',
		"$label: while sorting and writing: tuples_total is rows x tables, tuples_done at most that");
	is( $node->safe_psql('postgres', q{
SELECT count(*) FROM (
  SELECT tuples_done < lag(tuples_done) OVER (ORDER BY n) AS back
    FROM seen
   WHERE phase IN ('building index: sorting tables', 'building index: writing runs')) s
 WHERE back}),
		'0',
		"$label: tuples_done never goes back over the tables");
	like($node->safe_psql('postgres', q{SELECT simhash_index_check('t_fp')}),
		qr/^simhash index "t_fp" is consistent: /, "$label: the index built while watched is sound");
}

watched_build('serial', 'CREATE INDEX t_fp ON t USING simhash (fp) WITH (bits = 3)');

# The parallel build (two workers planned: the table's parallel_workers fixes
# the number, whatever its size) reports the same phases and counters.  Its
# DEBUG1 line in the server log says the workers were planned, so this does
# not depend on whether they were launched in time.
$node->safe_psql('postgres', 'DROP INDEX t_fp; ALTER TABLE t SET (parallel_workers = 2)');
my $log_offset = -s $node->logfile;
watched_build('parallel', q{
SET max_parallel_maintenance_workers = 2;
SET log_min_messages = debug1;
CREATE INDEX t_fp ON t USING simhash (fp) WITH (bits = 3);
});
ok( $node->log_contains(qr/simhash index "t_fp": parallel build, 2 workers planned/,
		$log_offset),
	'parallel: the build planned two workers');

$node->stop;
done_testing();
