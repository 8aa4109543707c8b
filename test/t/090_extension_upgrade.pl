# ALTER EXTENSION simhash UPDATE from every released version gives the same
# extension as a fresh CREATE EXTENSION of the current version: the same
# member objects, function definitions, operators, casts, operator-class
# members, comments and privileges.  Data and an index built under the old
# version keep answering afterwards.  The frozen install script of every
# release after the first gives the catalog of the first one updated to it.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('upgrade');
$node->init;
$node->start;

# Every member of the extension, one line each, in a stable order.  Objects
# are named by pg_describe_object; what makes them behave is spelled out
# (function bodies, operator and cast wiring, opfamily members, ACLs).
my $members = q{
WITH ext AS (SELECT oid FROM pg_extension WHERE extname = 'simhash'),
m AS (
  SELECT d.classid, d.objid, d.objsubid
    FROM pg_depend d, ext
   WHERE d.refclassid = 'pg_extension'::regclass AND d.refobjid = ext.oid AND d.deptype = 'e'),
fam AS (
  SELECT objid AS opf FROM m WHERE classid = 'pg_opfamily'::regclass)
SELECT line FROM (
  SELECT pg_describe_object(classid, objid, objsubid)
         || ' comment=' || coalesce(obj_description(objid, classid::regclass::name), '-')
         || CASE classid
              WHEN 'pg_proc'::regclass THEN
                (SELECT ' acl=' || coalesce(p.proacl::text, 'default')
                        || CASE WHEN p.prokind IN ('f', 'p', 'w')
                                THEN ' def=' || pg_get_functiondef(p.oid)
                                ELSE ' agg=' || (SELECT row(a.aggtransfn, a.aggfinalfn, a.aggtranstype::regtype,
                                                          a.aggcombinefn, a.agginitval)::text
                                                   FROM pg_aggregate a WHERE a.aggfnoid = p.oid) END
                   FROM pg_proc p WHERE p.oid = objid)
              WHEN 'pg_operator'::regclass THEN
                (SELECT format(' code=%s rest=%s join=%s com=%s neg=%s',
                               o.oprcode, o.oprrest, o.oprjoin, o.oprcom::regoperator, o.oprnegate::regoperator)
                   FROM pg_operator o WHERE o.oid = objid)
              WHEN 'pg_cast'::regclass THEN
                (SELECT format(' func=%s context=%s method=%s', c.castfunc::regprocedure, c.castcontext, c.castmethod)
                   FROM pg_cast c WHERE c.oid = objid)
              WHEN 'pg_type'::regclass THEN
                (SELECT format(' in=%s out=%s recv=%s send=%s len=%s byval=%s align=%s',
                               t.typinput, t.typoutput, t.typreceive, t.typsend, t.typlen, t.typbyval, t.typalign)
                   FROM pg_type t WHERE t.oid = objid)
              ELSE '' END AS line
    FROM m
  UNION ALL
  SELECT pg_describe_object('pg_amop'::regclass, a.oid, 0) || ' purpose=' || a.amoppurpose::text
         || ' sortfamily=' || a.amopsortfamily::text
    FROM pg_amop a WHERE a.amopfamily IN (SELECT opf FROM fam)
  UNION ALL
  SELECT pg_describe_object('pg_amproc'::regclass, a.oid, 0)
    FROM pg_amproc a WHERE a.amprocfamily IN (SELECT opf FROM fam)
) s ORDER BY line COLLATE "C";
};

# The released versions: install scripts of the form simhash--X.sql other
# than the current default version's.
my $current = $node->safe_psql('postgres',
	"SELECT default_version FROM pg_available_extensions WHERE name = 'simhash'");
my @released = $node->safe_psql('postgres',
	"SELECT version FROM pg_available_extension_versions WHERE name = 'simhash' AND version <> '$current' ORDER BY version");
@released = grep { length } split /\n/, $released[0] // '';
ok(scalar(@released) >= 1, "an older released version is installable (current $current)");

# The frozen install script of each released version after the first is
# the catalog of the one before it with its update script applied: a fresh
# CREATE EXTENSION of the version equals the oldest release updated to it.
# (The files differ in layout and in comments that the update script sets
# again; the catalogs may not.)
sub vkey { join '.', map { sprintf '%05d', $_ } split /\./, shift }
@released = sort { vkey($a) cmp vkey($b) } @released;
my $oldest = $released[0];
sub diag_diff
{
	my ($want, $got, $what) = @_;
	my %inw = map { $_ => 1 } split /\n/, $want;
	my %ing = map { $_ => 1 } split /\n/, $got;
	diag("missing $what: $_") for grep { !$ing{$_} } split /\n/, $want;
	diag("extra $what: $_") for grep { !$inw{$_} } split /\n/, $got;
}
for my $v (@released[1 .. $#released])
{
	my $tag = $v =~ s/\W/_/gr;
	$node->safe_psql('postgres', "CREATE DATABASE frozen_$tag");
	$node->safe_psql("frozen_$tag", "CREATE EXTENSION simhash VERSION '$v'");
	$node->safe_psql('postgres', "CREATE DATABASE chained_$tag");
	$node->safe_psql("chained_$tag", "CREATE EXTENSION simhash VERSION '$oldest'");
	$node->safe_psql("chained_$tag", "ALTER EXTENSION simhash UPDATE TO '$v'");
	my $frozen = $node->safe_psql("frozen_$tag", $members);
	my $chained = $node->safe_psql("chained_$tag", $members);
	ok(length($frozen) > 1000, "$v: its install script lists its members");
	is($chained, $frozen, "$v: its install script equals $oldest updated to $v");
	diag_diff($frozen, $chained, "after $oldest -> $v") if $chained ne $frozen;
}

$node->safe_psql('postgres', 'CREATE DATABASE fresh');
$node->safe_psql('fresh', 'CREATE EXTENSION simhash');
my $want = $node->safe_psql('fresh', $members);
ok(length($want) > 1000, 'fresh install lists its members');

for my $v (@released)
{
	my $db = "from_" . ($v =~ s/\W/_/gr);
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	$node->safe_psql($db, "CREATE EXTENSION simhash VERSION '$v'");
	# Data and an index made under the old version.
	$node->safe_psql($db, q{
		CREATE TABLE t (id int PRIMARY KEY, fp simhash);
		INSERT INTO t SELECT g, (g * 2654435761)::bigint::simhash FROM generate_series(1, 2000) g;
	});
	$node->safe_psql($db, 'ALTER EXTENSION simhash UPDATE');
	is($node->safe_psql($db, "SELECT extversion FROM pg_extension WHERE extname = 'simhash'"),
		$current, "$v: updated to $current");
	my $got = $node->safe_psql($db, $members);
	is($got, $want, "$v -> $current: same objects as a fresh install");
	diag_diff($want, $got, 'after update') if $got ne $want;
	# The data survive, and an index built after the update answers exactly.
	$node->safe_psql($db, 'CREATE INDEX t_fp ON t USING simhash (fp)');
	my $q = q{SELECT count(*) FROM t a, t b WHERE simhash_within(b.fp, a.fp, 3) AND a.id <= 50};
	my $seq = $node->safe_psql($db, "SET enable_indexscan = off; SET enable_bitmapscan = off; $q");
	my $idx = $node->safe_psql($db, "SET enable_seqscan = off; $q");
	is($idx, $seq, "$v -> $current: index answers as a sequential scan");
}

$node->stop;
done_testing();
