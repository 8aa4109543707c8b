# The Python example (test/psycopg_test.py, with the adapters of
# tools/simhash_psycopg.py) runs against a fresh server: binding ints of every
# size, reading simhash values, text and binary adapters, binary COPY.
# Skipped, saying so, when no python3 on this machine can import psycopg 3
# (Debian: python3-psycopg, installed by tools/install-deps.sh).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $python;
for my $candidate ('python3', '/usr/bin/python3')
{
	if (system("$candidate -c 'import psycopg' >/dev/null 2>&1") == 0)
	{
		$python = $candidate;
		last;
	}
}
plan skip_all => 'psycopg 3 is not importable by python3 (apt-get install python3-psycopg)'
  unless $python;

my $node = PostgreSQL::Test::Cluster->new('psycopg');
$node->init;
$node->start;

my $conninfo = 'host=' . $node->host . ' port=' . $node->port . ' dbname=postgres';
my ($stdout, $stderr);
my $ok = IPC::Run::run([ $python, 'test/psycopg_test.py', $conninfo ], '>', \$stdout, '2>', \$stderr);
diag($stderr) if $stderr;
ok($ok, 'test/psycopg_test.py exits with status 0');
like($stdout, qr/^[1-9][0-9]* passed, 0 failed$/m, 'every step of the Python example passed');

$node->stop;
done_testing();
