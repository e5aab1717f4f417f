package BenchStack::StarterUnix;

# Loaded into Starman under start_server (perl -MBenchStack::StarterUnix). Net::Server::SS::PreFork 0.05 wraps
# every socket start_server passes as TCP, so Net::Server dies reading a unix socket's address (open upstream:
# Starman issue 120, p5-Server-Starter issue 27). Hand the unix ones to Net::Server as UNIX sockets instead.
use strict;
use warnings;
use Net::Server::SS::PreFork ();
use Net::Server::Proto::UNIX ();
use Socket qw(AF_UNIX sockaddr_family);

my $pre_bind = \&Net::Server::SS::PreFork::pre_bind;
{
    no warnings 'redefine';
    *Net::Server::SS::PreFork::pre_bind = sub {
        my $self = shift;
        $self->$pre_bind(@_);
        for my $sock (@{ $self->{server}{sock} }) {
            # NS_port already holds the key start_server gave: the socket's path.
            bless $sock, 'Net::Server::Proto::UNIX'
              if ref $sock eq 'Net::Server::Proto::TCP' && sockaddr_family($sock->sockname) == AF_UNIX;
        }
    };
}

1;
