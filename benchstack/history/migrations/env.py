"""Alembic's environment for the history database: run on the connection bench-stack hands it
(:func:`benchstack.history.database.upgrade`), never from an alembic.ini. ``render_as_batch`` lets a later
migration alter a table on SQLite too."""

from __future__ import annotations

from alembic import context

from benchstack.history.schema import Base

connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=Base.metadata, render_as_batch=True)
with context.begin_transaction():
    context.run_migrations()
