"""nginx: one service for every stack behind it, a server block per stack on its port (roles/nginx). It
proxies HTTP to an app server's instances, passes FastCGI to php-fpm, or serves a static folder itself.
Each stack's ``profile`` decides its server-level settings (``tuned``: no access log or etag, sendfile,
kept upstream connections; ``stock``: the distribution's)."""

from __future__ import annotations

from typing import Any

from benchstack.kinds.fronts.base import FrontKind
from benchstack.kinds.stackfields import err, typed_keys

PROFILES = ("stock", "tuned")
KEYS = {"kind", "profile"}


class Nginx(FrontKind):
    name = "nginx"
    role = "nginx"
    role_fields = ("profile",)

    def resolve(self, front: dict[str, Any], who: str, stack_name: object) -> None:
        typed_keys(who, "front", front, "key of an nginx front", keys=KEYS, options={})
        front.setdefault("profile", "tuned")
        if front["profile"] not in PROFILES:
            raise err(who, "front.profile", f"must be one of {', '.join(PROFILES)}")


KIND = Nginx()
