"""php-fpm: a master and a static pool of workers, speaking FastCGI (so it always sits behind nginx)."""

from __future__ import annotations

from benchstack.kinds.servers.base import MAX_REQUESTS, WORKERS, ServerKind
from benchstack.kinds.servers.section import Start


class PhpFpm(ServerKind):
    name = "php-fpm"
    order = 90
    runtime = "php"
    interface = "php"
    protocol = "fastcgi"
    options = {"workers": WORKERS, "max_requests": MAX_REQUESTS}
    option_notes = {"workers": "pm static", "max_requests": "0: never"}
    config = "php-fpm.conf"
    config_listen = {"unix": "{socket}", "tcp": "{host}:{port}"}
    # The php role installs php-fpm (Debian's metapackage), named for the PHP version it pulls in.
    fingerprint = ("php-fpm", "php8.2-fpm", "php8.4-fpm")

    def command(self, start: Start) -> str:
        return f"{{php_fpm}} --nodaemonize --fpm-config {start.units.unit_config_file}"


KIND = PhpFpm()
