# The PSGI hello app: answers like the Sinatra app (GET / and GET /hello/:name).
use strict;
use warnings;

my $app = sub {
    my ($env) = @_;
    my $path = $env->{PATH_INFO} || '/';
    if ($env->{REQUEST_METHOD} eq 'GET' || $env->{REQUEST_METHOD} eq 'HEAD') {
        if ($path eq '/') {
            return [200, ['Content-Type' => 'text/html;charset=utf-8'], ['Hello World! I am psgi!']];
        }
        if ($path =~ m{^/hello/([^/]+)$}) {
            return [200, ['Content-Type' => 'text/html;charset=utf-8'], ["Hello $1!"]];
        }
    }
    return [404, ['Content-Type' => 'text/plain'], ['Not Found']];
};

$app;
