"""Alembic's environment for the history database: run on the connection bench-stack hands it
(:func:`benchstack.history.database.upgrade`), never from an alembic.ini. ``render_as_batch`` lets a later
migration alter a table on SQLite too. Offline (``alembic upgrade --sql``: the SQL a DBA applies by hand),
on the URL in the config's attributes, whose dialect the SQL is written for."""

from __future__ import annotations

from alembic import context

from benchstack.history.schema import Base

if context.is_offline_mode():
    context.configure(
        url=context.config.attributes["url"],
        target_metadata=Base.metadata,
        literal_binds=True,
        render_as_batch=True,
    )
else:
    context.configure(
        connection=context.config.attributes["connection"],
        target_metadata=Base.metadata,
        render_as_batch=True,
    )
with context.begin_transaction():
    context.run_migrations()
