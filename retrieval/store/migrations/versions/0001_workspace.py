"""The workspace: stored files, datasets with their files, runs, embeddings and grades by rater.

Revision ID: 0001
Revises:
Create Date: 2026-12-04
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def _text(name: str) -> sa.Column:
    return sa.Column(name, sa.Text, nullable=False)


def _serial() -> sa.Column:
    return sa.Column("id", sa.Integer, primary_key=True, autoincrement=True)


def _dataset_id(primary_key: bool = False) -> sa.Column:
    return sa.Column(
        "dataset_id",
        sa.String(16),
        sa.ForeignKey("datasets.id", ondelete="CASCADE"),
        primary_key=primary_key,
        nullable=False,
    )


def _blob() -> sa.Column:
    return sa.Column("sha256", sa.String(64), sa.ForeignKey("blobs.sha256"), nullable=False)


def _added() -> list[sa.Column]:
    return [sa.Column("added_at", sa.DateTime(timezone=True), nullable=False), _text("added_by")]


def upgrade() -> None:
    op.create_table(
        "blobs",
        sa.Column("sha256", sa.String(64), primary_key=True),
        sa.Column("size", sa.BigInteger, nullable=False),
        sa.Column("data", sa.LargeBinary, nullable=False),
    )
    op.create_table(
        "datasets",
        sa.Column("id", sa.String(16), primary_key=True),
        _text("name"),
        sa.Column("format", sa.String(16), nullable=False),
        *(sa.Column(n, sa.Integer, nullable=False) for n in ("n_docs", "n_questions", "n_judgements")),
        *_added(),
    )
    op.create_table(
        "dataset_files",
        _dataset_id(primary_key=True),
        sa.Column("role", sa.String(16), primary_key=True),
        _text("name"),
        _blob(),
    )
    op.create_table(
        "runs",
        _serial(),
        _dataset_id(),
        _text("name"),
        _text("file_name"),
        _blob(),
        *_added(),
        sa.UniqueConstraint("dataset_id", "name", name="uq_runs_dataset_name"),
    )
    op.create_table(
        "embeddings",
        _serial(),
        _dataset_id(),
        _text("name"),
        *_added(),
        sa.UniqueConstraint("dataset_id", "name", name="uq_embeddings_dataset_name"),
    )
    op.create_table(
        "embedding_files",
        sa.Column("embeddings_id", sa.Integer, sa.ForeignKey("embeddings.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("position", sa.Integer, primary_key=True),
        _text("name"),
        _blob(),
    )
    op.create_table(
        "grades",
        _serial(),
        _dataset_id(),
        *(_text(n) for n in ("query_id", "doc_id", "rater")),
        sa.Column("grade", sa.Integer, nullable=False),
        sa.Column("graded_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_grades_dataset_pair", "grades", ["dataset_id", "query_id", "doc_id"])


def downgrade() -> None:
    op.drop_index("ix_grades_dataset_pair", table_name="grades")
    for table in ("grades", "embedding_files", "embeddings", "runs", "dataset_files", "datasets", "blobs"):
        op.drop_table(table)
