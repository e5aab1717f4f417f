"""The Sinatra hello app (config.ru) on Ruby, served by a Rack server (thin, puma, passenger, ...). A user's
Sinatra app may bring a Gemfile: Bundler installs it into the app's own gem folder, and its server runs
through ``bundle exec``."""

from __future__ import annotations

from benchstack.kinds.apps.base import AppKind


class Sinatra(AppKind):
    name = "sinatra"
    order = 10
    interface = "rack"
    runtime = "ruby"
    entry = "config.ru"
    # What the bundled app requires (a user's app brings its own through Bundler).
    gems = ("rack", "sinatra")
    bundler = True


KIND = Sinatra()
