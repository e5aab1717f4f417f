#!/bin/sh
# Test an nginx file of server blocks before it replaces the live one (the nginx role's validate):
# a main config that includes only it, so a broken block never reaches conf.d and nginx's next restart.
# Usage: bench-stack-nginx-check MODULES_INCLUDE MIME_TYPES FILE
set -eu
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat > "$dir/nginx.conf" <<CONF
include $1;
events {}
http {
    include $2;
    include $3;
}
CONF
nginx -t -q -c "$dir/nginx.conf"
