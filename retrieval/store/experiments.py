"""Saved experiments: a dataset's JSON record (any JSON object, strict, within its own bound and the store's size
limit), listed, read back, deleted by whoever saved it, the dataset's owner or an admin."""

from __future__ import annotations

import json
from datetime import datetime

import sqlalchemy as sa

from ..core.errors import InputError
from . import schema
from .access import Actor
from .connection import _mb
from .entries import ExperimentEntry, _name, _now, _utc
from .errors import StoreError, StoreFull
from .guards import Guards
from .settings import MAX_BYTES_ENV, MAX_EXPERIMENT_BYTES


class Experiments(Guards):
    """Saved experiments."""

    def save_experiment(
        self, dataset_id: str, name: str, body: dict, created_by: str, created_at: datetime | None = None
    ) -> ExperimentEntry:
        """Save an experiment of a dataset: `body` is any JSON object (the lab's: analyses.experiments.record),
        kept as strict JSON (a NaN or an infinity is refused, naming it); a name may be used again (they are told
        apart by time)."""
        name, created_by = _name(name, "the experiment"), _name(created_by, "the rater or uploader")
        try:
            text = json.dumps(body, allow_nan=False, ensure_ascii=True, separators=(",", ":"))  # a character a byte
        except (TypeError, ValueError) as e:
            raise InputError(f"experiment {name!r}: not storable as JSON ({e})") from None
        if len(text.encode()) > MAX_EXPERIMENT_BYTES:
            raise InputError(
                f"experiment {name!r}: {len(text.encode()):,} bytes of JSON, more than the "
                f"{MAX_EXPERIMENT_BYTES:,} an experiment may take"
            )
        t = schema.experiments
        with self._write() as conn:
            self._check_dataset(conn, dataset_id)
            used = self._held(conn)
            if used + len(text.encode()) > self.max_bytes:
                raise StoreFull(
                    f"{self.label}: the store holds {_mb(used)} of its {_mb(self.max_bytes)}; this "
                    f"experiment would take it beyond ({MAX_BYTES_ENV}); nothing was stored"
                )
            eid = conn.execute(
                sa.insert(t)
                .values(
                    dataset_id=dataset_id, name=name, created_at=created_at or _now(), created_by=created_by, body=text
                )
                .returning(t.c.id)
            ).scalar_one()
        entry = self.experiment_entry(eid)
        assert entry is not None
        return entry

    def experiments(self, dataset_id: str | None = None) -> list[ExperimentEntry]:
        """The saved experiments (of one dataset, or all), oldest first; none of a dataset in the trash."""
        t, d = schema.experiments, schema.datasets
        live = sa.select(d.c.id).where(d.c.deleted_at.is_(None))
        q = (
            sa.select(t.c.id, t.c.dataset_id, t.c.name, t.c.created_at, t.c.created_by)
            .where(t.c.dataset_id.in_(live))
            .order_by(t.c.created_at, t.c.id)
        )
        if dataset_id is not None:
            q = q.where(t.c.dataset_id == str(dataset_id))
        with self._read() as conn:
            return [ExperimentEntry(int(i), d, n, _utc(at), by) for i, d, n, at, by in conn.execute(q)]

    def experiment_entry(self, experiment_id: int) -> ExperimentEntry | None:
        t = schema.experiments
        with self._read() as conn:
            row = conn.execute(
                sa.select(t.c.id, t.c.dataset_id, t.c.name, t.c.created_at, t.c.created_by).where(
                    t.c.id == int(experiment_id)
                )
            ).first()
        return ExperimentEntry(int(row[0]), row[1], row[2], _utc(row[3]), row[4]) if row else None

    def experiment(self, experiment_id: int) -> tuple[ExperimentEntry, dict]:
        """A saved experiment and its body."""
        t = schema.experiments
        with self._read() as conn:
            row = conn.execute(
                sa.select(t.c.id, t.c.dataset_id, t.c.name, t.c.created_at, t.c.created_by, t.c.body).where(
                    t.c.id == int(experiment_id)
                )
            ).first()
        if row is None:
            raise StoreError(f"{self.label}: no experiment {experiment_id}")
        return ExperimentEntry(int(row[0]), row[1], row[2], _utc(row[3]), row[4]), json.loads(row[5])

    def delete_experiment(self, experiment_id: int, by: Actor) -> None:
        """Delete a saved experiment: whoever saved it, the dataset's owner or an admin."""
        t = schema.experiments
        with self._write() as conn:
            row = conn.execute(sa.select(t.c.dataset_id, t.c.created_by).where(t.c.id == int(experiment_id))).first()
            if row is not None:
                self._may_change(conn, row[0], by, row[1], f"experiment {experiment_id}")
            if conn.execute(sa.delete(t).where(t.c.id == int(experiment_id))).rowcount != 1:
                raise StoreError(f"{self.label}: no experiment {experiment_id} to delete")
        self._give_back()
