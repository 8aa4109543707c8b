# pg_upgrade from an older major version (15) to the server under test (18):
# a cluster holding simhash indexes (built, inserted into, rows deleted and
# vacuumed, rows left in the pending buffer) is upgraded with --copy and with
# --link.  Afterwards every index answers exactly as before and as a
# sequential scan, simhash_index_check is clean, the fingerprints of the same
# texts are identical on both servers, and the indexes take new rows.
#
# It needs the extension installed into the older server's installation too:
# SIMHASH_UPGRADE_FROM names that installation (the directory holding bin/ and
# lib/).  test/run-all.sh sets it when it tests several majors: the first
# server's private install is the old one for every later, newer server.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use SimhashTAP;

my $old_install = $ENV{SIMHASH_UPGRADE_FROM} // '';
plan skip_all => 'no older PostgreSQL with simhash installed (SIMHASH_UPGRADE_FROM is '
  . ($old_install eq '' ? 'unset' : "$old_install, which has no bin/pg_ctl")
  . '; test/run-all.sh sets it when it tests several major versions)'
  unless $old_install ne '' && -x "$old_install/bin/pg_ctl";

my $probe_old = PostgreSQL::Test::Cluster->new('probe_old', install_path => $old_install);
my $probe_new = PostgreSQL::Test::Cluster->new('probe_new');
plan skip_all => sprintf('SIMHASH_UPGRADE_FROM is PostgreSQL %s, not older than the server under test (%s)',
	$probe_old->pg_version, $probe_new->pg_version)
  unless $probe_old->pg_version->major < $probe_new->pg_version->major;
note sprintf('upgrading from PostgreSQL %s (%s) to %s', $probe_old->pg_version, $old_install,
	$probe_new->pg_version);

# t (id, fp): near-duplicate groups (SimhashTAP's rows); docs (id, body, fp):
# fingerprints of texts, so both servers' simhash(text) can be compared.
my ($queries, $seqscan) = index_queries(radius_to => 4, radius_every => 997, knn_every => 1999);
my $docs_sql = q{SELECT id, fp, simhash(body), simhash(body, 2, 'chars', false), simhash_html(body), simhash_seomoz(body)
  FROM docs ORDER BY id};
my $docs_by_index = q{SET enable_seqscan = off; SET enable_bitmapscan = off;
SELECT q.id, (SELECT array_agg(d.id ORDER BY d.id) FROM docs d WHERE simhash_within(d.fp, q.fp, 6))
  FROM docs q WHERE q.id % 13 = 0 ORDER BY 1};
my $docs_by_seqscan = $docs_by_index =~ s/enable_seqscan/enable_indexscan/r;

# A cluster of the old version with the indexes in every state.  Both
# clusters are initialized with data checksums (18's initdb default; 15's is
# off, and pg_upgrade needs them to match).
sub old_cluster
{
	my ($name) = @_;
	my $old = PostgreSQL::Test::Cluster->new($name, install_path => $old_install);
	$old->init(extra => ['--data-checksums']);
	$old->append_conf('postgresql.conf', "autovacuum = off\n");
	$old->start;
	$old->safe_psql('postgres', 'CREATE EXTENSION simhash');
	$old->safe_psql('postgres', 'CREATE TABLE t (id int PRIMARY KEY, fp simhash)');
	$old->safe_psql('postgres', rows_sql(1, 30000));
	$old->safe_psql('postgres',
		'CREATE INDEX t_fp ON t USING simhash (fp) WITH (bits = 3, blocks = 5, pending_pages = 1)');
	$old->safe_psql('postgres', rows_sql(30001, 40000));    # flushed into runs
	$old->safe_psql('postgres', 'DELETE FROM t WHERE id % 7 = 0');
	$old->safe_psql('postgres', 'VACUUM t');
	$old->safe_psql('postgres', rows_sql(40001, 40100));    # left in the pending buffer
	$old->safe_psql('postgres', q{
CREATE TABLE docs (id int PRIMARY KEY, body text, fp simhash);
INSERT INTO docs SELECT i, format('Report %s of the %s committee: the budget of %s was approved by %s votes to %s, '
                                  'with Ünïcödé ß and ﬁ ligatures, <b>markup</b> & entities &amp; %s.',
                                  i / 3, md5((i / 5)::text), 1000 + i % 11, i % 17, i % 5, repeat('x', i % 40))
  FROM generate_series(1, 3000) i;
UPDATE docs SET fp = simhash(body);
CREATE INDEX docs_fp ON docs USING simhash (fp);
INSERT INTO docs SELECT i, 'late row ' || i, simhash('late row ' || i) FROM generate_series(3001, 3200) i;
CREATE TABLE hashes (id int, h bigint);
INSERT INTO hashes SELECT i, ('x' || md5((i / 2)::text))::bit(64)::bigint FROM generate_series(1, 5000) i;
CREATE INDEX hashes_h ON hashes USING simhash (h);
DELETE FROM hashes WHERE id % 5 = 0;
VACUUM hashes;
});
	check_index($old, "$name before pg_upgrade", $queries, $seqscan);
	return $old;
}

my $hashes_by_index = q{SET enable_seqscan = off; SET enable_bitmapscan = off;
SELECT q.id, (SELECT array_agg(x.id ORDER BY x.id) FROM hashes x WHERE simhash_within(x.h, q.h, 2))
  FROM hashes q WHERE q.id % 97 = 0 ORDER BY 1};
my $hashes_by_seqscan = $hashes_by_index =~ s/enable_seqscan/enable_indexscan/r;

for my $mode ('--copy', '--link')
{
	my $tag = substr($mode, 2);
	my $old = old_cluster("old_$tag");
	my %before = (
		t      => $old->safe_psql('postgres', $seqscan),
		docs   => $old->safe_psql('postgres', $docs_sql),
		docsix => $old->safe_psql('postgres', $docs_by_seqscan),
		hashes => $old->safe_psql('postgres', $hashes_by_seqscan));
	is($old->safe_psql('postgres', $docs_by_index), $before{docsix}, "$tag: old docs_fp answers as a sequential scan");
	is($old->safe_psql('postgres', $hashes_by_index), $before{hashes}, "$tag: old hashes_h answers as a sequential scan");
	# Debian's 15.20 records a back-branch "pg_attver" key in the attoptions of
	# every column it creates; 18.6's pg_dump carries it over and the 18.6
	# server refuses it ('unrecognized parameter "pg_attver"'), so pg_upgrade
	# from 15.20 to 18.6 fails for any table, with or without simhash.  The
	# key is removed first, as a DBA upgrading such a cluster has to.
	$old->safe_psql('postgres', q{
UPDATE pg_attribute SET attoptions = NULLIF(ARRAY(SELECT o FROM unnest(attoptions) o WHERE o NOT LIKE 'pg_attver=%'), '{}')
 WHERE attrelid >= 16384 AND EXISTS (SELECT FROM unnest(attoptions) o WHERE o LIKE 'pg_attver=%')});
	$old->stop;

	my $new = PostgreSQL::Test::Cluster->new("new_$tag");
	$new->init(extra => ['--data-checksums']);
	$new->append_conf('postgresql.conf', "autovacuum = off\n");
	command_ok(
		[
			'pg_upgrade', '--no-sync', $mode,
			'-d', $old->data_dir, '-D', $new->data_dir,
			'-b', $old->config_data('--bindir'), '-B', $new->config_data('--bindir'),
			'-s', $new->host, '-p', $old->port, '-P', $new->port
		],
		"pg_upgrade $mode");
	$new->start;

	check_index($new, "$tag: after pg_upgrade", $queries, $seqscan);
	is($new->safe_psql('postgres', $queries), $before{t}, "$tag: t_fp answers as on the old server");
	is($new->safe_psql('postgres', $docs_sql), $before{docs},
		"$tag: simhash(text) of the same texts is identical on both servers");
	is($new->safe_psql('postgres', $docs_by_index), $before{docsix}, "$tag: docs_fp answers as on the old server");
	is($new->safe_psql('postgres', $hashes_by_index), $before{hashes}, "$tag: the bigint index answers as before");
	for my $ix ('docs_fp', 'hashes_h')
	{
		my ($rc, $out, $err) = $new->psql('postgres', "SELECT simhash_index_check('$ix')");
		is($rc, 0, "$tag: simhash_index_check('$ix') passes");
		diag($err) if $rc != 0;
	}

	# The upgraded indexes take new rows, flush and merge them, and VACUUM them.
	$new->safe_psql('postgres', rows_sql(40101, 52000));
	$new->safe_psql('postgres', 'DELETE FROM t WHERE id % 11 = 0');
	$new->safe_psql('postgres', 'VACUUM t');
	check_index($new, "$tag: rows written after pg_upgrade", $queries, $seqscan);
	$new->stop;
}

done_testing();
