"""Owners and the trash: a dataset's owner (who may rename or delete it), and who deleted it and when (a deleted
dataset stays, restorable, until purged); grades counted per rater.

A dataset stored before this revision has no owner: only an admin manages it (retrieval.store.access; with no
sign-in configured the one local person is an admin, so nothing changes for them).

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-07
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("datasets", sa.Column("owner", sa.Text, nullable=True))
    op.add_column("datasets", sa.Column("deleted_at", sa.DateTime(timezone=True), nullable=True))
    op.add_column("datasets", sa.Column("deleted_by", sa.Text, nullable=True))
    op.create_index("ix_grades_dataset_rater", "grades", ["dataset_id", "rater"])


def downgrade() -> None:
    op.drop_index("ix_grades_dataset_rater", table_name="grades")
    with op.batch_alter_table("datasets") as batch:
        for column in ("deleted_by", "deleted_at", "owner"):
            batch.drop_column(column)
