"""A store's datasets: each kept with the files it was read from (once per content, keyed by its fingerprint),
listed, read again, renamed by its owner or an admin."""

from __future__ import annotations

from datetime import datetime

import sqlalchemy as sa

from ..core.errors import InputError
from ..corpus import dataset as datasets
from ..corpus.dataset import Dataset
from . import schema
from .access import Actor
from .entries import ROLES, ZIP, DatasetEntry, StoredFile, _name, _now, _utc
from .errors import StoreError
from .guards import Guards

_ADDER = "the person who adds it"  # add_dataset's default owner


class Datasets(Guards):
    """Adding, listing, reading and renaming datasets."""

    def add_dataset(
        self,
        ds: Dataset,
        format: str,
        files: list[StoredFile],
        added_by: str,
        added_at: datetime | None = None,
        owner: str | None = _ADDER,
    ) -> DatasetEntry:
        """Store a dataset and the files it was read from (ZIP: one BEIR zip, of which only the members the loader
        reads are kept; FILES: documents, questions, judgements), keyed by its fingerprint: storing the same content
        again changes nothing and returns the entry stored first (refused while that one is in the trash). Its
        owner is `added_by` unless given (an import: the exported owner, None for nobody)."""
        if format not in ROLES or len(files) != len(ROLES[format]):
            raise InputError(f"a dataset's files: {format!r} with {len(files)} file(s) (expected {ROLES})")
        added_by = _name(added_by, "the rater or uploader")
        owner = added_by if owner is _ADDER else None if owner is None else _name(owner, "the owner")
        if format == ZIP:
            files = [StoredFile(files[0].name, datasets.beir_zip_kept(files[0].data, files[0].name))]
        d = schema.datasets
        with self._write() as conn:
            held = conn.execute(sa.select(d.c.name, d.c.deleted_by).where(d.c.id == ds.fingerprint)).first()
            if held is not None and held[1] is not None:
                raise StoreError(
                    f"{self.label}: this dataset is in the trash as {held[0]} (deleted by {held[1]}): "
                    "restore it on the Data page rather than adding it again"
                )
            if held is None:
                shas = self._put_blobs(conn, files)
                conn.execute(
                    sa.insert(schema.datasets).values(
                        id=ds.fingerprint,
                        name=_name(ds.name, "the dataset"),
                        format=format,
                        n_docs=ds.n_docs,
                        n_questions=ds.n_queries,
                        n_judgements=len(ds.qrels),
                        added_at=added_at or _now(),
                        added_by=added_by,
                        owner=owner,
                    )
                )
                conn.execute(
                    sa.insert(schema.dataset_files),
                    [
                        {"dataset_id": ds.fingerprint, "role": role, "name": f.name, "sha256": s}
                        for role, f, s in zip(ROLES[format], files, shas)
                    ],
                )
        entry = self.dataset(ds.fingerprint)
        assert entry is not None
        return entry

    def _dataset_query(self):
        d, f, b = schema.datasets, schema.dataset_files, schema.blobs
        size = (
            sa.select(sa.func.coalesce(sa.func.sum(b.c.size), 0))
            .select_from(f.join(b, f.c.sha256 == b.c.sha256))
            .where(f.c.dataset_id == d.c.id)
            .scalar_subquery()
        )
        return sa.select(
            d.c.id,
            d.c.name,
            d.c.format,
            d.c.n_docs,
            d.c.n_questions,
            d.c.n_judgements,
            size,
            d.c.added_at,
            d.c.added_by,
            d.c.owner,
            d.c.deleted_at,
            d.c.deleted_by,
        )

    @staticmethod
    def _entry(row) -> DatasetEntry:
        return DatasetEntry(
            row[0],
            row[1],
            row[2],
            int(row[3]),
            int(row[4]),
            int(row[5]),
            int(row[6]),
            _utc(row[7]),
            row[8],
            row[9],
            _utc(row[10]) if row[10] is not None else None,
            row[11],
        )

    def datasets(self) -> list[DatasetEntry]:
        """Every stored dataset not in the trash, the latest added first."""
        d = schema.datasets
        with self._read() as conn:
            rows = conn.execute(
                self._dataset_query().where(d.c.deleted_at.is_(None)).order_by(d.c.added_at.desc(), d.c.id)
            )
            return [self._entry(r) for r in rows]

    def dataset(self, dataset_id: str) -> DatasetEntry | None:
        """The stored dataset of this id (its fingerprint), or None (also when it is in the trash)."""
        entry = self._any_dataset(dataset_id)
        return entry if entry is not None and entry.deleted_at is None else None

    def _any_dataset(self, dataset_id: str) -> DatasetEntry | None:
        with self._read() as conn:
            row = conn.execute(self._dataset_query().where(schema.datasets.c.id == str(dataset_id))).first()
        return self._entry(row) if row else None

    def dataset_files(self, dataset_id: str) -> list[StoredFile]:
        """The files a stored dataset was read from, in their roles' order."""
        f, b = schema.dataset_files, schema.blobs
        with self._read() as conn:
            rows = conn.execute(
                sa.select(f.c.role, f.c.name, b.c.data)
                .join(b, f.c.sha256 == b.c.sha256)
                .where(f.c.dataset_id == str(dataset_id))
            ).all()
        by_role = {r[0]: StoredFile(r[1], bytes(r[2])) for r in rows}
        order = next((roles for roles in ROLES.values() if set(roles) == set(by_role)), ())
        return [by_role[r] for r in order]

    def load_dataset(self, dataset_id: str, limits: datasets.ZipLimits | None = None) -> Dataset:
        """A stored dataset, read again from its files (the upload's bounds apply), under its stored name."""
        entry = self.dataset(dataset_id)
        if entry is None:
            raise StoreError(f"{self.label}: no dataset {dataset_id!r} in the store")
        files = self.dataset_files(entry.id)
        if entry.format == ZIP:
            ds = datasets.load_beir_zip(files[0].data, files[0].name, limits)
        else:
            ds = datasets.from_files(*((f.data, f.name) for f in files), name=entry.name)
        if ds.fingerprint != entry.id:
            raise StoreError(
                f"{self.label}: dataset {entry.id}'s files no longer give its content "
                f"(fingerprint {ds.fingerprint}): the store was changed outside the lab"
            )
        return ds.renamed(entry.name)

    def rename_dataset(self, dataset_id: str, name: str, by: Actor) -> None:
        """Rename a dataset: its owner or an admin."""
        name = _name(name, "the dataset")
        with self._write() as conn:
            self._managed(conn, dataset_id, by, "rename")
            conn.execute(sa.update(schema.datasets).where(schema.datasets.c.id == str(dataset_id)).values(name=name))
