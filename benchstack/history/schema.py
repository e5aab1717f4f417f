"""The history database's tables, as SQLAlchemy's typed ORM declares them: one schema for SQLite and
PostgreSQL (only portable types: no JSONB, no arrays; times are timezone-aware UTC).

A run is one row of ``runs`` keyed by ``uid`` (its folder name, seed and experiment hash: the same run
imported from anywhere is one row); its hosts, load points, comparisons and verdict reasons hang off it and
are replaced whole when the run folder changed (``content_sha256``). The migrations in ``migrations/``
create exactly these tables (a unit test compares them)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    DateTime,
    Float,
    ForeignKey,
    Integer,
    MetaData,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

HASH = String(64)
NAME = String(200)


# Named constraints, so that a later migration can drop or alter one on every database by its name.
NAMING = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)


class RunRow(Base):
    __tablename__ = "runs"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    uid: Mapped[str] = mapped_column(HASH, unique=True)
    name: Mapped[str] = mapped_column(NAME)  # the run folder's name
    path: Mapped[str] = mapped_column(Text)  # where it was imported from
    experiment: Mapped[str] = mapped_column(NAME, index=True)
    experiment_sha256: Mapped[str | None] = mapped_column(HASH)
    started_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), index=True)
    ended_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    verdict: Mapped[str] = mapped_column(String(16))
    bench_stack_version: Mapped[str | None] = mapped_column(String(40))
    mode: Mapped[str | None] = mapped_column(String(16))
    seed: Mapped[int | None] = mapped_column(BigInteger)
    cells: Mapped[int] = mapped_column(Integer)
    content_sha256: Mapped[str] = mapped_column(HASH)
    imported_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))

    hosts: Mapped[list[HostRow]] = relationship(back_populates="run", cascade="all, delete-orphan")
    load_points: Mapped[list[LoadPointRow]] = relationship(back_populates="run", cascade="all, delete-orphan")
    comparisons: Mapped[list[ComparisonRow]] = relationship(
        back_populates="run", cascade="all, delete-orphan"
    )
    reasons: Mapped[list[ReasonRow]] = relationship(back_populates="run", cascade="all, delete-orphan")


class HostRow(Base):
    __tablename__ = "hosts"
    __table_args__ = (UniqueConstraint("run_id", "name"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(NAME, index=True)
    role: Mapped[str] = mapped_column(String(16))  # target, loadgen or both (loopback)
    cpu_model: Mapped[str | None] = mapped_column(NAME)
    cpu_count: Mapped[int | None] = mapped_column(Integer)
    kernel: Mapped[str | None] = mapped_column(NAME)
    distribution: Mapped[str | None] = mapped_column(NAME)
    architecture: Mapped[str | None] = mapped_column(String(40))
    virtualization: Mapped[str | None] = mapped_column(String(80))
    fingerprint_sha256: Mapped[str | None] = mapped_column(HASH)
    fingerprint: Mapped[dict[str, Any] | None] = mapped_column(JSON)  # run.json's hosts.<name>, whole

    run: Mapped[RunRow] = relationship(back_populates="hosts")


class LoadPointRow(Base):
    """A load point's figures as the report shows them (loadpoints.csv's row)."""

    __tablename__ = "load_points"
    __table_args__ = (UniqueConstraint("run_id", "target", "stack", "tool", "keepalive", "level"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), index=True)
    target: Mapped[str] = mapped_column(NAME)
    stack: Mapped[str] = mapped_column(NAME, index=True)
    tool: Mapped[str] = mapped_column(String(40))
    keepalive: Mapped[bool] = mapped_column()
    level: Mapped[int] = mapped_column(Integer)
    status: Mapped[str] = mapped_column(String(16))
    counted: Mapped[int] = mapped_column(Integer)
    disturbed: Mapped[int] = mapped_column(Integer)
    median_rps: Mapped[float | None] = mapped_column(Float)
    ci_low: Mapped[float | None] = mapped_column(Float)
    ci_high: Mapped[float | None] = mapped_column(Float)
    precision: Mapped[float | None] = mapped_column(Float)
    latency_mean_ms: Mapped[float | None] = mapped_column(Float)
    latency_p50_ms: Mapped[float | None] = mapped_column(Float)
    latency_p99_ms: Mapped[float | None] = mapped_column(Float)
    error_count: Mapped[int] = mapped_column(Integer)
    error_rate: Mapped[float | None] = mapped_column(Float)
    # The rps of every counted cell, in repetition order: what the regression check pools.
    rps: Mapped[list[float] | None] = mapped_column(JSON)

    run: Mapped[RunRow] = relationship(back_populates="load_points")


class ComparisonRow(Base):
    """A stack against the baseline at one load point, as run.json and the report hold it."""

    __tablename__ = "comparisons"
    __table_args__ = (UniqueConstraint("run_id", "target", "stack", "tool", "keepalive", "level"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), index=True)
    target: Mapped[str] = mapped_column(NAME)
    stack: Mapped[str] = mapped_column(NAME, index=True)
    baseline: Mapped[str] = mapped_column(NAME)
    tool: Mapped[str] = mapped_column(String(40))
    keepalive: Mapped[bool] = mapped_column()
    level: Mapped[int] = mapped_column(Integer)
    state: Mapped[str] = mapped_column(String(16))
    ratio: Mapped[float | None] = mapped_column(Float)
    low: Mapped[float | None] = mapped_column(Float)
    high: Mapped[float | None] = mapped_column(Float)
    pairs: Mapped[int] = mapped_column(Integer)
    margin: Mapped[float | None] = mapped_column(Float)
    confidence: Mapped[float | None] = mapped_column(Float)

    run: Mapped[RunRow] = relationship(back_populates="comparisons")


class ReasonRow(Base):
    """One reason of the run's verdict (docs/verdict.md)."""

    __tablename__ = "reasons"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), index=True)
    position: Mapped[int] = mapped_column(Integer)
    code: Mapped[str] = mapped_column(String(40))
    status: Mapped[str] = mapped_column(String(16))
    message: Mapped[str] = mapped_column(Text)
    cells: Mapped[list[str] | None] = mapped_column(JSON)

    run: Mapped[RunRow] = relationship(back_populates="reasons")
