"""A dataset's stored embeddings uploads (one file, or two: documents and questions), under a name."""

from __future__ import annotations

from datetime import datetime

import sqlalchemy as sa

from ..core.errors import InputError
from . import schema
from .entries import EmbeddingsEntry, StoredFile, _name, _now, _utc
from .errors import StoreError
from .guards import Guards


class Embeddings(Guards):
    """A dataset's embeddings."""

    def add_embeddings(
        self, dataset_id: str, name: str, files: list[StoredFile], added_by: str, added_at: datetime | None = None
    ) -> EmbeddingsEntry:
        """Store an embeddings upload of a dataset (its one or two files) under a name, replacing one of that name."""
        name, added_by = _name(name, "the embeddings"), _name(added_by, "the rater or uploader")
        if not 1 <= len(files) <= 2:
            raise InputError(f"embeddings {name!r}: one file or two (documents, questions), not {len(files)}")
        e, ef = schema.embeddings, schema.embedding_files
        with self._write() as conn:
            self._check_dataset(conn, dataset_id)
            old = sa.select(e.c.id).where(e.c.dataset_id == dataset_id, e.c.name == name)
            conn.execute(sa.delete(ef).where(ef.c.embeddings_id.in_(old)))
            conn.execute(sa.delete(e).where(e.c.dataset_id == dataset_id, e.c.name == name))
            self._drop_unused_blobs(conn)
            shas = self._put_blobs(conn, files)
            eid = conn.execute(
                sa.insert(e)
                .values(dataset_id=dataset_id, name=name, added_at=added_at or _now(), added_by=added_by)
                .returning(e.c.id)
            ).scalar_one()
            conn.execute(
                sa.insert(ef),
                [
                    {"embeddings_id": eid, "position": i, "name": f.name, "sha256": s}
                    for i, (f, s) in enumerate(zip(files, shas))
                ],
            )
        self._give_back()
        return next(x for x in self.embeddings(dataset_id) if x.name == name)

    def embeddings(self, dataset_id: str) -> list[EmbeddingsEntry]:
        e, ef, b = schema.embeddings, schema.embedding_files, schema.blobs
        with self._read() as conn:
            heads = conn.execute(
                sa.select(e.c.id, e.c.name, e.c.added_at, e.c.added_by)
                .where(e.c.dataset_id == str(dataset_id))
                .order_by(e.c.id)
            ).all()
            files = conn.execute(
                sa.select(ef.c.embeddings_id, ef.c.name, b.c.size)
                .join(b, ef.c.sha256 == b.c.sha256)
                .where(ef.c.embeddings_id.in_([h[0] for h in heads]))
                .order_by(ef.c.position)
            ).all()
        return [
            EmbeddingsEntry(
                name,
                tuple(f[1] for f in files if f[0] == eid),
                sum(int(f[2]) for f in files if f[0] == eid),
                _utc(t),
                by,
            )
            for eid, name, t, by in heads
        ]

    def embeddings_files(self, dataset_id: str, name: str) -> list[StoredFile]:
        e, ef, b = schema.embeddings, schema.embedding_files, schema.blobs
        with self._read() as conn:
            rows = conn.execute(
                sa.select(ef.c.name, b.c.data)
                .join(b, ef.c.sha256 == b.c.sha256)
                .join(e, e.c.id == ef.c.embeddings_id)
                .where(e.c.dataset_id == str(dataset_id), e.c.name == str(name))
                .order_by(ef.c.position)
            ).all()
        if not rows:
            raise StoreError(f"{self.label}: no embeddings {name!r} of dataset {dataset_id!r}")
        return [StoredFile(n, bytes(d)) for n, d in rows]
