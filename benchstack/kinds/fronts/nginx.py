"""nginx: one service for every stack behind it, a server block per stack on its port (roles/nginx). It
proxies HTTP to an app server's instances, passes FastCGI to php-fpm, or serves a static folder itself.
Each stack's ``profile`` decides its server-level settings (``tuned``: no access log or etag, sendfile,
kept upstream connections; ``stock``: the distribution's)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from benchstack.kinds.fronts.base import Choice, FrontKind, FrontSpec
from benchstack.kinds.stackfields import err, typed_keys

PROFILES = ("stock", "tuned")
PROFILE = Choice(PROFILES, "tuned", "nginx's settings: tuned (default) or the distribution's stock.")


@dataclass(frozen=True)
class NginxSpec(FrontSpec):
    profile: str

    def fields(self) -> dict[str, Any]:
        return {"kind": self.kind, "profile": self.profile}


class Nginx(FrontKind):
    name = "nginx"
    order = 20
    role = "nginx"
    role_fields = ("profile",)
    called = "an nginx front"
    choices = {"profile": PROFILE}

    def check(self, front: Mapping[str, Any], who: str) -> NginxSpec:
        typed_keys(who, "front", front, self.key_of(), keys={"kind", *self.choices}, options={})
        profile = front.get("profile", PROFILE.default)
        if profile not in PROFILES:
            raise err(who, "front.profile", f"must be one of {', '.join(PROFILES)}")
        return NginxSpec(kind=self.name, written=tuple(front), profile=profile)


KIND = Nginx()
