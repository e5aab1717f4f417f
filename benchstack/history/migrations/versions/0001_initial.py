"""initial schema: runs, hosts, load points, comparisons, reasons

Revision ID: 0001
Revises: (none)
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "runs",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("uid", sa.String(length=64), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("path", sa.Text(), nullable=False),
        sa.Column("experiment", sa.String(length=200), nullable=False),
        sa.Column("experiment_sha256", sa.String(length=64), nullable=True),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("ended_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("verdict", sa.String(length=16), nullable=False),
        sa.Column("bench_stack_version", sa.String(length=40), nullable=True),
        sa.Column("mode", sa.String(length=16), nullable=True),
        sa.Column("seed", sa.BigInteger(), nullable=True),
        sa.Column("cells", sa.Integer(), nullable=False),
        sa.Column("content_sha256", sa.String(length=64), nullable=False),
        sa.Column("imported_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_runs")),
        sa.UniqueConstraint("uid", name=op.f("uq_runs_uid")),
    )
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_runs_experiment"), ["experiment"], unique=False)
        batch_op.create_index(batch_op.f("ix_runs_started_at"), ["started_at"], unique=False)

    op.create_table(
        "comparisons",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("target", sa.String(length=200), nullable=False),
        sa.Column("stack", sa.String(length=200), nullable=False),
        sa.Column("baseline", sa.String(length=200), nullable=False),
        sa.Column("tool", sa.String(length=40), nullable=False),
        sa.Column("keepalive", sa.Boolean(), nullable=False),
        sa.Column("level", sa.Integer(), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("ratio", sa.Float(), nullable=True),
        sa.Column("low", sa.Float(), nullable=True),
        sa.Column("high", sa.Float(), nullable=True),
        sa.Column("pairs", sa.Integer(), nullable=False),
        sa.Column("margin", sa.Float(), nullable=True),
        sa.Column("confidence", sa.Float(), nullable=True),
        sa.ForeignKeyConstraint(
            ["run_id"], ["runs.id"], name=op.f("fk_comparisons_run_id_runs"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_comparisons")),
        sa.UniqueConstraint(
            "run_id",
            "target",
            "stack",
            "tool",
            "keepalive",
            "level",
            name=op.f("uq_comparisons_run_id_target_stack_tool_keepalive_level"),
        ),
    )
    with op.batch_alter_table("comparisons", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_comparisons_run_id"), ["run_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_comparisons_stack"), ["stack"], unique=False)

    op.create_table(
        "hosts",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("role", sa.String(length=16), nullable=False),
        sa.Column("cpu_model", sa.String(length=200), nullable=True),
        sa.Column("cpu_count", sa.Integer(), nullable=True),
        sa.Column("kernel", sa.String(length=200), nullable=True),
        sa.Column("distribution", sa.String(length=200), nullable=True),
        sa.Column("architecture", sa.String(length=40), nullable=True),
        sa.Column("virtualization", sa.String(length=80), nullable=True),
        sa.Column("fingerprint_sha256", sa.String(length=64), nullable=True),
        sa.Column("fingerprint", sa.JSON(), nullable=True),
        sa.ForeignKeyConstraint(
            ["run_id"], ["runs.id"], name=op.f("fk_hosts_run_id_runs"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_hosts")),
        sa.UniqueConstraint("run_id", "name", name=op.f("uq_hosts_run_id_name")),
    )
    with op.batch_alter_table("hosts", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_hosts_name"), ["name"], unique=False)
        batch_op.create_index(batch_op.f("ix_hosts_run_id"), ["run_id"], unique=False)

    op.create_table(
        "load_points",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("target", sa.String(length=200), nullable=False),
        sa.Column("stack", sa.String(length=200), nullable=False),
        sa.Column("tool", sa.String(length=40), nullable=False),
        sa.Column("keepalive", sa.Boolean(), nullable=False),
        sa.Column("level", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("counted", sa.Integer(), nullable=False),
        sa.Column("disturbed", sa.Integer(), nullable=False),
        sa.Column("median_rps", sa.Float(), nullable=True),
        sa.Column("ci_low", sa.Float(), nullable=True),
        sa.Column("ci_high", sa.Float(), nullable=True),
        sa.Column("precision", sa.Float(), nullable=True),
        sa.Column("latency_mean_ms", sa.Float(), nullable=True),
        sa.Column("latency_p50_ms", sa.Float(), nullable=True),
        sa.Column("latency_p99_ms", sa.Float(), nullable=True),
        sa.Column("error_count", sa.Integer(), nullable=False),
        sa.Column("error_rate", sa.Float(), nullable=True),
        sa.Column("rps", sa.JSON(), nullable=True),
        sa.ForeignKeyConstraint(
            ["run_id"], ["runs.id"], name=op.f("fk_load_points_run_id_runs"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_load_points")),
        sa.UniqueConstraint(
            "run_id",
            "target",
            "stack",
            "tool",
            "keepalive",
            "level",
            name=op.f("uq_load_points_run_id_target_stack_tool_keepalive_level"),
        ),
    )
    with op.batch_alter_table("load_points", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_load_points_run_id"), ["run_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_load_points_stack"), ["stack"], unique=False)

    op.create_table(
        "reasons",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("code", sa.String(length=40), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("message", sa.Text(), nullable=False),
        sa.Column("cells", sa.JSON(), nullable=True),
        sa.ForeignKeyConstraint(
            ["run_id"], ["runs.id"], name=op.f("fk_reasons_run_id_runs"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_reasons")),
    )
    with op.batch_alter_table("reasons", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_reasons_run_id"), ["run_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("reasons", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_reasons_run_id"))

    op.drop_table("reasons")
    with op.batch_alter_table("load_points", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_load_points_stack"))
        batch_op.drop_index(batch_op.f("ix_load_points_run_id"))

    op.drop_table("load_points")
    with op.batch_alter_table("hosts", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_hosts_run_id"))
        batch_op.drop_index(batch_op.f("ix_hosts_name"))

    op.drop_table("hosts")
    with op.batch_alter_table("comparisons", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_comparisons_stack"))
        batch_op.drop_index(batch_op.f("ix_comparisons_run_id"))

    op.drop_table("comparisons")
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_runs_started_at"))
        batch_op.drop_index(batch_op.f("ix_runs_experiment"))

    op.drop_table("runs")
