# Usage: perl probe.pl URL N -- N GETs with HTTP::Tiny, a new client (and connection) each; prints the number answered 200.
use strict;
use warnings;
use HTTP::Tiny;
my ($url, $n) = @ARGV;
my $ok = 0;
for (1 .. $n) { $ok++ if HTTP::Tiny->new(timeout => 5)->get($url)->{status} == 200; }
print "$ok\n";
