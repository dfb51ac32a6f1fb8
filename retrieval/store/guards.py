"""Who may change what (`access`), checked inside a write: a dataset's owner or an admin manages it; what a
person added, they change, or the dataset's owner or an admin; nothing is written to a dataset in the trash."""

from __future__ import annotations

import sqlalchemy as sa

from . import schema
from .access import Actor
from .connection import Connection
from .errors import Forbidden, StoreError


class Guards(Connection):
    """The checks every changing method of the store makes, in its own transaction (`conn`)."""

    def _managed(self, conn: sa.Connection, dataset_id: str, by: Actor, doing: str, trashed: bool = False) -> str:
        """The dataset's name, once `by` may manage it (its owner or an admin); refused otherwise, or when it is
        not there (`trashed`: in the trash, else live)."""
        d = schema.datasets
        row = conn.execute(sa.select(d.c.name, d.c.owner, d.c.deleted_at).where(d.c.id == str(dataset_id))).first()
        if row is None or (row[2] is not None) != trashed:
            where = "in the trash" if trashed else "in the store"
            raise StoreError(f"{self.label}: no dataset {dataset_id!r} {where} to {doing}")
        if not by.may_manage(row[1]):
            who = (
                f"its owner ({row[1]}) or an admin"
                if row[1] is not None
                else "an admin (it has no owner: it was stored before owners were kept)"
            )
            raise Forbidden(f"{row[0]}: {by.name} may not {doing} it: only {who}")
        return row[0]

    def _owner(self, conn: sa.Connection, dataset_id: str) -> str | None:
        return conn.execute(sa.select(schema.datasets.c.owner).where(schema.datasets.c.id == str(dataset_id))).scalar()

    def _may_change(self, conn: sa.Connection, dataset_id: str, by: Actor, added_by: str, what: str) -> None:
        """Refuse `by` changing what `added_by` added to a dataset unless it is theirs, the dataset's, or an admin's."""
        if by.name != added_by and not by.may_manage(self._owner(conn, dataset_id)):
            raise Forbidden(
                f"{what}: {by.name} may not change what {added_by} added: only they, the dataset's owner or an admin"
            )

    def _check_dataset(self, conn: sa.Connection, dataset_id: str) -> None:
        """Refuse a write to a dataset the store does not hold, or holds in the trash."""
        d = schema.datasets
        row = conn.execute(sa.select(d.c.name, d.c.deleted_by).where(d.c.id == str(dataset_id))).first()
        if row is None:
            raise StoreError(f"{self.label}: no dataset {dataset_id!r} in the store")
        if row[1] is not None:
            raise StoreError(f"{self.label}: {row[0]} is in the trash (deleted by {row[1]}): restore it to change it")
