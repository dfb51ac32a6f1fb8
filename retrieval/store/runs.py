"""A dataset's stored TREC runs: added under a name, listed, read again, renamed or deleted by whoever added
it, the dataset's owner or an admin."""

from __future__ import annotations

from datetime import datetime

import sqlalchemy as sa

from ..corpus import dataset as datasets
from ..corpus.dataset import TrecRun
from . import schema
from .access import Actor
from .entries import RunEntry, StoredFile, _name, _now, _utc
from .errors import StoreError
from .guards import Guards


class Runs(Guards):
    """A dataset's runs."""

    def add_run(
        self, dataset_id: str, name: str, file: StoredFile, added_by: str, added_at: datetime | None = None
    ) -> RunEntry:
        """Store a TREC run of a dataset under a name (refused when the dataset has a run of that name)."""
        name, added_by = _name(name, "the run"), _name(added_by, "the rater or uploader")
        with self._write() as conn:
            self._check_dataset(conn, dataset_id)
            r = schema.runs
            if conn.execute(sa.select(r.c.id).where(r.c.dataset_id == dataset_id, r.c.name == name)).first():
                raise StoreError(f"{self.label}: the dataset has a run named {name!r} already")
            (sha,) = self._put_blobs(conn, [file])
            conn.execute(
                sa.insert(r).values(
                    dataset_id=dataset_id,
                    name=name,
                    file_name=file.name,
                    sha256=sha,
                    added_at=added_at or _now(),
                    added_by=added_by,
                )
            )
        return next(e for e in self.runs(dataset_id) if e.name == name)

    def runs(self, dataset_id: str) -> list[RunEntry]:
        """A dataset's stored runs, in the order they were added."""
        r, b = schema.runs, schema.blobs
        with self._read() as conn:
            rows = conn.execute(
                sa.select(r.c.name, r.c.file_name, b.c.size, r.c.added_at, r.c.added_by, r.c.sha256)
                .join(b, r.c.sha256 == b.c.sha256)
                .where(r.c.dataset_id == str(dataset_id))
                .order_by(r.c.id)
            ).all()
        return [RunEntry(n, f, int(s), _utc(t), by, sha) for n, f, s, t, by, sha in rows]

    def load_run_file(self, dataset_id: str, name: str) -> StoredFile:
        """A stored run's file as uploaded."""
        r, b = schema.runs, schema.blobs
        with self._read() as conn:
            row = conn.execute(
                sa.select(r.c.file_name, b.c.data)
                .join(b, r.c.sha256 == b.c.sha256)
                .where(r.c.dataset_id == str(dataset_id), r.c.name == str(name))
            ).first()
        if row is None:
            raise StoreError(f"{self.label}: no run {name!r} of dataset {dataset_id!r}")
        return StoredFile(row[0], bytes(row[1]))

    def load_run(self, dataset_id: str, name: str) -> TrecRun:
        """A stored run, parsed again from its file, under its stored name."""
        f = self.load_run_file(dataset_id, name)
        return datasets.parse_run(f.data, f.name, name)

    def rename_run(self, dataset_id: str, old: str, new: str, by: Actor) -> None:
        """Rename a stored run (refused when the dataset has a run of the new name): whoever added it, the
        dataset's owner or an admin."""
        new = _name(new, "the run")
        r = schema.runs
        with self._write() as conn:
            adder = conn.execute(
                sa.select(r.c.added_by).where(r.c.dataset_id == str(dataset_id), r.c.name == str(old))
            ).scalar()
            if adder is not None:
                self._may_change(conn, dataset_id, by, adder, f"run {old}")
            if conn.execute(sa.select(r.c.id).where(r.c.dataset_id == str(dataset_id), r.c.name == new)).first():
                raise StoreError(f"{self.label}: the dataset has a run named {new!r} already")
            done = conn.execute(
                sa.update(r).where(r.c.dataset_id == str(dataset_id), r.c.name == str(old)).values(name=new)
            )
            if done.rowcount != 1:
                raise StoreError(f"{self.label}: no run {old!r} to rename")

    def delete_run(self, dataset_id: str, name: str, by: Actor) -> None:
        """Delete a stored run: whoever added it, the dataset's owner or an admin."""
        with self._write() as conn:
            r = schema.runs
            adder = conn.execute(
                sa.select(r.c.added_by).where(r.c.dataset_id == str(dataset_id), r.c.name == str(name))
            ).scalar()
            if adder is not None:
                self._may_change(conn, dataset_id, by, adder, f"run {name}")
            if conn.execute(sa.delete(r).where(r.c.dataset_id == str(dataset_id), r.c.name == str(name))).rowcount != 1:
                raise StoreError(f"{self.label}: no run {name!r} to delete")
            self._drop_unused_blobs(conn)
        self._give_back()
