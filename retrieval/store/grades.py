"""Grades by rater: each grade a new row (rater, time), never an update; within a bound per rater and dataset
and the store's size limit; taken back by the rater, the dataset's owner or an admin."""

from __future__ import annotations

import sqlalchemy as sa

from ..core.errors import InputError
from ..corpus import dataset as datasets
from ..corpus.dataset import valid_grade
from . import schema
from .access import Actor
from .connection import _mb
from .entries import Grade, _name, _now, _utc
from .errors import StoreFull
from .guards import Guards
from .settings import GRADE_ROW_BYTES, MAX_BYTES_ENV, MAX_GRADES_ENV, max_grades


class Grades(Guards):
    """A dataset's grades."""

    def grade(self, dataset_id: str, query_id: str, doc_id: str, grade: int, rater: str) -> Grade:
        """Record a rater's grade of a (question, document) pair: a new row, so a rater's later grade of the pair
        is in force and another rater's grade of it, given at the same moment, is kept beside it."""
        (g,) = self.add_grades(dataset_id, [Grade(str(query_id), str(doc_id), rater, grade, _now())])
        return g

    def add_grades(self, dataset_id: str, grades: list[Grade]) -> list[Grade]:
        """Record grades as given (their raters and times: a workspace imported), in one transaction."""
        rows = []
        for g in grades:
            if not valid_grade(g.grade):
                raise InputError(f"the grade {g.grade!r} is not an integer within +-{datasets.MAX_GRADE}")
            rows.append(Grade(str(g.query_id), str(g.doc_id), _name(g.rater, "the rater"), int(g.grade), g.graded_at))
        bound, t = max_grades(), schema.grades
        with self._write() as conn:
            self._check_dataset(conn, dataset_id)
            for rater in sorted({g.rater for g in rows}):
                have = conn.execute(
                    sa.select(sa.func.count()).select_from(t).where(t.c.dataset_id == dataset_id, t.c.rater == rater)
                ).scalar_one()
                new = sum(g.rater == rater for g in rows)
                if have + new > bound:
                    raise StoreFull(
                        f"{rater} has given {have:,} grades of this dataset (a changed grade counts again); "
                        f"{new:,} more would pass the {bound:,} a rater may give ({MAX_GRADES_ENV}); "
                        "nothing was stored"
                    )
            added = sum(len(g.query_id) + len(g.doc_id) + len(g.rater) + GRADE_ROW_BYTES for g in rows)
            used = self._held(conn)
            if rows and used + added > self.max_bytes:
                raise StoreFull(
                    f"{self.label}: the store holds {_mb(used)} of its {_mb(self.max_bytes)}; these grades "
                    f"would take it beyond ({MAX_BYTES_ENV}); nothing was stored"
                )
            if rows:
                conn.execute(
                    sa.insert(schema.grades),
                    [
                        {
                            "dataset_id": dataset_id,
                            "query_id": g.query_id,
                            "doc_id": g.doc_id,
                            "rater": g.rater,
                            "grade": g.grade,
                            "graded_at": g.graded_at,
                        }
                        for g in rows
                    ],
                )
        return rows

    def take_back(self, dataset_id: str, query_id: str, doc_id: str, rater: str, by: Actor) -> int:
        """Delete every grade a rater gave a pair (the rater takes it back; another's: the dataset's owner or an
        admin); how many rows went."""
        t = schema.grades
        with self._write() as conn:
            self._may_change(conn, dataset_id, by, str(rater), "grades")
            n = conn.execute(
                sa.delete(t).where(
                    t.c.dataset_id == str(dataset_id),
                    t.c.query_id == str(query_id),
                    t.c.doc_id == str(doc_id),
                    t.c.rater == str(rater),
                )
            ).rowcount
        self._give_back()
        return n

    def take_back_all(self, dataset_id: str, rater: str, by: Actor) -> int:
        """Delete every grade a rater gave a dataset, in one transaction (the rater; another's: the dataset's owner
        or an admin); how many rows went."""
        t = schema.grades
        with self._write() as conn:
            self._may_change(conn, dataset_id, by, str(rater), "grades")
            n = conn.execute(sa.delete(t).where(t.c.dataset_id == str(dataset_id), t.c.rater == str(rater))).rowcount
        self._give_back()
        return n

    def grades(self, dataset_id: str, latest: bool = True) -> list[Grade]:
        """A dataset's grades in the order given; `latest`: only each rater's last grade of each pair."""
        t = schema.grades
        with self._read() as conn:
            rows = conn.execute(
                sa.select(t.c.query_id, t.c.doc_id, t.c.rater, t.c.grade, t.c.graded_at)
                .where(t.c.dataset_id == str(dataset_id))
                .order_by(t.c.id)
            ).all()
        out = [Grade(q, d, r, int(g), _utc(at)) for q, d, r, g, at in rows]
        if latest:
            last = {(g.query_id, g.doc_id, g.rater): g for g in out}
            out = list(last.values())
        return out
