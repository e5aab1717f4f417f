"""php-fpm: a master and a static pool of workers, speaking FastCGI (so it always sits behind nginx)."""

from __future__ import annotations

from benchstack.kinds.servers.base import MAX_REQUESTS, WORKERS, ServerKind
from benchstack.kinds.servers.section import Start


class PhpFpm(ServerKind):
    name = "php-fpm"
    runtime = "php"
    interface = "php"
    protocol = "fastcgi"
    options = {"workers": WORKERS, "max_requests": MAX_REQUESTS}
    config = "php-fpm.conf"
    config_listen = {"unix": "{socket}", "tcp": "{host}:{port}"}

    def command(self, start: Start) -> str:
        return f"{{php_fpm}} --nodaemonize --fpm-config {start.units.unit_config_file}"


KIND = PhpFpm()
