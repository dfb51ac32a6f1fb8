"""The trash: a deleted dataset kept with everything it holds, restorable for `trash_days()`, then purged (or
at once, by its owner or an admin); the space given back to the disk."""

from __future__ import annotations

from datetime import datetime, timedelta

import sqlalchemy as sa

from . import schema
from .access import Actor
from .datasets import Datasets
from .entries import DatasetEntry, _now
from .settings import trash_days


class Trash(Datasets):
    """Deleting a dataset to the trash, restoring it, purging it."""

    def trash(self) -> list[DatasetEntry]:
        """The deleted datasets still restorable, the latest deleted first."""
        d = schema.datasets
        with self._read() as conn:
            rows = conn.execute(
                self._dataset_query().where(d.c.deleted_at.is_not(None)).order_by(d.c.deleted_at.desc(), d.c.id)
            )
            return [self._entry(r) for r in rows]

    def delete_dataset(self, dataset_id: str, by: Actor) -> DatasetEntry:
        """Move a dataset, with its runs, embeddings, grades and experiments, to the trash (its owner or an admin):
        gone from every list and link, restorable until `trash_days()` have passed; the entry as deleted."""
        days = trash_days()
        with self._write() as conn:
            self._managed(conn, dataset_id, by, "delete")
            conn.execute(
                sa.update(schema.datasets)
                .where(schema.datasets.c.id == str(dataset_id))
                .values(deleted_at=_now(), deleted_by=by.name)
            )
        entry = self._any_dataset(dataset_id)
        assert entry is not None
        if days == 0:
            self.purge_expired()
        return entry

    def restore_dataset(self, dataset_id: str, by: Actor) -> DatasetEntry:
        """Bring a dataset back from the trash with everything it held (its owner or an admin)."""
        with self._write() as conn:
            self._managed(conn, dataset_id, by, "restore", trashed=True)
            conn.execute(
                sa.update(schema.datasets)
                .where(schema.datasets.c.id == str(dataset_id))
                .values(deleted_at=None, deleted_by=None)
            )
        entry = self.dataset(dataset_id)
        assert entry is not None
        return entry

    def purge_dataset(self, dataset_id: str, by: Actor) -> None:
        """Delete a dataset of the trash for good, now (its owner or an admin), and give its space back."""
        with self._write() as conn:
            self._managed(conn, dataset_id, by, "delete for good", trashed=True)
            self._purge(conn, str(dataset_id))
        self._give_back()

    def purge_expired(self, now: datetime | None = None) -> list[str]:
        """Delete for good the datasets in the trash for longer than `trash_days()`; their names. The space is
        given back to the disk."""
        cutoff = (now or _now()) - timedelta(days=trash_days())
        d = schema.datasets
        with self._read() as conn:
            due = conn.execute(sa.select(d.c.id).where(d.c.deleted_at.is_not(None), d.c.deleted_at <= cutoff)).first()
        if due is None:  # the usual case: a read, no write
            return []
        with self._write() as conn:
            rows = conn.execute(
                sa.select(d.c.id, d.c.name).where(d.c.deleted_at.is_not(None), d.c.deleted_at <= cutoff)
            ).all()
            for did, _ in rows:
                self._purge(conn, did)
        self._give_back()
        return [name for _, name in rows]

    def _purge(self, conn: sa.Connection, did: str) -> None:
        """Delete a dataset with its runs, embeddings, grades and experiments, and the files nothing else refers to."""
        emb = sa.select(schema.embeddings.c.id).where(schema.embeddings.c.dataset_id == did)
        conn.execute(sa.delete(schema.embedding_files).where(schema.embedding_files.c.embeddings_id.in_(emb)))
        for t in (schema.embeddings, schema.runs, schema.grades, schema.experiments, schema.dataset_files):
            conn.execute(sa.delete(t).where(t.c.dataset_id == did))
        conn.execute(sa.delete(schema.datasets).where(schema.datasets.c.id == did))
        self._drop_unused_blobs(conn)
