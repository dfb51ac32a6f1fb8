"""The workspace: datasets, their files as uploaded, runs, embeddings and grades by rater, kept in a database.

SQLite in a file under $RETRIEVAL_LAB_HOME (default ~/.local/share/retrieval-lab) needs nothing else; a team points
$RETRIEVAL_LAB_DATABASE_URL at PostgreSQL (postgresql+psycopg://user@host/db) so several app servers share one
store. Every write is one transaction: a server killed mid-write leaves all of it or none (tests/test_store.py
kills a child process mid-upload). Every statement is built by SQLAlchemy Core with bound parameters.

The store's tables are made and upgraded by versioned migrations (Alembic, `migrations/`), so a store made by an
older version of the lab opens in a newer one; a store made by a newer one, or a file that is not a store, is
refused with one message naming it.

Who may change what is `access`'s model, checked here on every change: a dataset's owner or an admin renames,
deletes, restores it; a rater takes back only their own grades. A deleted dataset goes to the trash with everything
it holds, restorable for $RETRIEVAL_LAB_TRASH_DAYS days (default 30), then purged; SQLite gives the space back to
the disk (incremental auto-vacuum). Grades count against the store's size limit, and each rater's against a bound
per dataset ($RETRIEVAL_LAB_MAX_GRADES_PER_RATER).
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import sqlalchemy as sa
from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import event

from ..core.environment import bytes_from_env
from ..core.errors import InputError
from ..corpus import dataset as datasets
from ..corpus.dataset import Dataset, TrecRun, valid_grade
from . import schema
from .access import Actor

HOME_ENV = "RETRIEVAL_LAB_HOME"
URL_ENV = "RETRIEVAL_LAB_DATABASE_URL"
MAX_BYTES_ENV = "RETRIEVAL_LAB_STORE_MAX_BYTES"
TRASH_DAYS_ENV = "RETRIEVAL_LAB_TRASH_DAYS"  # days a deleted dataset stays restorable
MAX_GRADES_ENV = "RETRIEVAL_LAB_MAX_GRADES_PER_RATER"  # grades (rows, a changed grade a new one) per rater and dataset
DEFAULT_TRASH_DAYS = 30.0
DEFAULT_MAX_GRADES = 20_000
GRADE_ROW_BYTES = 64  # a grade's row beyond its three names, as counted against the size limit
DEFAULT_HOME = "~/.local/share/retrieval-lab"
FILE_NAME = "workspace.sqlite"
DEFAULT_MAX_BYTES = 4 * 2**30  # the stored files' bytes, all datasets, runs and embeddings together
MAX_EXPERIMENT_BYTES = 64 * 2**20  # one saved experiment's JSON (per-question values of every system and metric)
MIGRATIONS = Path(__file__).resolve().parent / "migrations"
ZIP, FILES = "beir-zip", "files"  # how a dataset was uploaded: one BEIR zip, or three files
ROLES = {ZIP: ("zip",), FILES: ("documents", "questions", "judgements")}
_LOCK_KEY = 0x7265_7472  # PostgreSQL's advisory lock of the store's writers ("retr")


class StoreError(InputError):
    """A store that cannot be opened, read or written: one message, naming it; nothing in it changed."""


class Forbidden(StoreError):
    """A change this person may not make (`access`): refused, naming who may; the store as it was."""


class StoreFull(StoreError):
    """A write that would take the stored files beyond the store's size limit: refused, the store as it was."""


@dataclass(frozen=True)
class StoredFile:
    """One file as uploaded: its name and bytes."""

    name: str
    data: bytes


@dataclass(frozen=True)
class DatasetEntry:
    """A stored dataset as the Data page lists it."""

    id: str  # Dataset.fingerprint: the short id a link names it by
    name: str
    format: str  # ZIP or FILES
    n_docs: int
    n_questions: int
    n_judgements: int
    size: int  # bytes of its files
    added_at: datetime
    added_by: str
    owner: str | None = None  # who may rename or delete it besides an admin (None: nobody, a store's older dataset)
    deleted_at: datetime | None = None  # in the trash since (None: not deleted)
    deleted_by: str | None = None

    def purged_at(self, days: float) -> datetime | None:
        """When a deleted dataset leaves the trash for good, `days` after its deletion."""
        return None if self.deleted_at is None else self.deleted_at + timedelta(days=days)


@dataclass(frozen=True)
class RunEntry:
    """A stored TREC run of a dataset."""

    name: str
    file_name: str
    size: int
    added_at: datetime
    added_by: str
    sha256: str  # of the file: the same run uploaded again is recognised


@dataclass(frozen=True)
class EmbeddingsEntry:
    """A stored embeddings upload of a dataset (one file, or two: documents and questions)."""

    name: str
    file_names: tuple[str, ...]
    size: int
    added_at: datetime
    added_by: str


@dataclass(frozen=True)
class ExperimentEntry:
    """A saved experiment: its number, dataset, name, when and by whom (its body: `Workspace.experiment`)."""

    id: int
    dataset_id: str
    name: str
    created_at: datetime
    created_by: str


@dataclass(frozen=True)
class Grade:
    """One grade given: who, when, which pair, what."""

    query_id: str
    doc_id: str
    rater: str
    grade: int
    graded_at: datetime


def default_url() -> str:
    """$RETRIEVAL_LAB_DATABASE_URL, else SQLite in $RETRIEVAL_LAB_HOME (default ~/.local/share/retrieval-lab)."""
    url = os.environ.get(URL_ENV, "").strip()
    if url:
        return url
    home = Path(os.environ.get(HOME_ENV, "").strip() or DEFAULT_HOME).expanduser()
    return f"sqlite:///{home / FILE_NAME}"


def _float_env(name: str, default: float) -> float:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise StoreError(f"{name}: {raw!r} is not a number") from None
    if not 0 <= value < 1e6:
        raise StoreError(f"{name}: {raw!r} must be a number of at least 0")
    return value


def trash_days() -> float:
    """Days a deleted dataset stays in the trash ($RETRIEVAL_LAB_TRASH_DAYS, default 30; 0: purged at once)."""
    return _float_env(TRASH_DAYS_ENV, DEFAULT_TRASH_DAYS)


def max_grades() -> int:
    """Grades a rater may give one dataset ($RETRIEVAL_LAB_MAX_GRADES_PER_RATER, default 20,000)."""
    return int(_float_env(MAX_GRADES_ENV, DEFAULT_MAX_GRADES))


_ADDER = "the person who adds it"  # add_dataset's default owner


def _now() -> datetime:
    return datetime.now(UTC)


def _utc(t: datetime) -> datetime:
    """A time read back (SQLite gives it without its zone; every time stored is UTC)."""
    return t if t.tzinfo else t.replace(tzinfo=UTC)


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _name(value: str, what: str) -> str:
    """A name as stored: stripped, not empty, no control characters, at most 200 characters."""
    name = str(value).strip()
    if not name:
        raise InputError(f"{what}: a name cannot be empty")
    if len(name) > 200:
        raise InputError(f"{what}: a name of {len(name)} characters (at most 200)")
    if any(ord(c) < 32 or 127 <= ord(c) < 160 for c in name):
        raise InputError(f"{what}: a name cannot hold control characters")
    return name


class Workspace:
    """One store: `open_workspace()` opens the default one.

    >>> import tempfile, retrieval
    >>> ws = open_workspace(f"sqlite:///{tempfile.mkdtemp()}/lab.sqlite")
    >>> ds = retrieval.load("invented")
    >>> entry = ws.add_dataset(ds, ZIP, [StoredFile("invented.zip", datasets.beir_zip(ds))], "ana")
    >>> ws.load_dataset(entry.id).fingerprint == ds.fingerprint, [e.name for e in ws.datasets()]
    (True, ['invented'])
    """

    def __init__(self, engine: sa.Engine, label: str, max_bytes: int):
        self.engine = engine
        self.label = label  # the store's URL without its password: what messages name
        self.max_bytes = max_bytes
        self._in_tx = threading.local()  # the connection of this thread's `transaction()`, while one is open

    # ------------------------------------------------------------------------------------------- transactions

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Every write and read this thread makes inside the block is one transaction (the whole import of a
        workspace, transfer.py): committed when the block ends, rolled back on any error, and none of it kept by a
        process killed inside it. Other threads and processes wait for it to write (the lock of `_write`)."""
        if getattr(self._in_tx, "conn", None) is not None:
            raise RuntimeError("a transaction is open on this thread already")
        with self._write() as conn:
            self._in_tx.conn = conn
            try:
                yield
            finally:
                self._in_tx.conn = None
        self._give_back()

    @contextmanager
    def _write(self) -> Iterator[sa.Connection]:
        """One write transaction: SQLite's BEGIN IMMEDIATE (a writer waits for another rather than failing when it
        upgrades its lock), PostgreSQL's advisory lock (the size check and the write it guards, one writer at a time
        across servers). Committed at the end, rolled back on any error. Inside `transaction()`, its connection."""
        held = getattr(self._in_tx, "conn", None)
        if held is not None:
            yield held
            return
        try:
            with self.engine.connect() as conn:
                if conn.dialect.name == "sqlite":
                    conn = conn.execution_options(sqlite_begin="BEGIN IMMEDIATE")
                with conn.begin():
                    if conn.dialect.name == "postgresql":
                        conn.execute(sa.text("SELECT pg_advisory_xact_lock(:key)"), {"key": _LOCK_KEY})
                    yield conn
        except sa.exc.IntegrityError as e:
            raise StoreError(f"{self.label}: the write was refused ({e.orig}); the store is as it was") from None
        except (sa.exc.OperationalError, sa.exc.DatabaseError) as e:
            raise StoreError(f"{self.label}: the store could not be written ({_reason(e)}); it is as it was") from None

    def _give_back(self) -> None:
        """SQLite: return the pages a write freed to the disk (incremental auto-vacuum, then a checkpoint that
        truncates the log); PostgreSQL's autovacuum makes its space reusable by itself. Best effort: a reader
        holding the log only delays the shrink to a later write."""
        if self.engine.dialect.name != "sqlite" or getattr(self._in_tx, "conn", None) is not None:
            return  # inside `transaction()`: once it commits
        raw = self.engine.raw_connection()
        try:
            cur = raw.cursor()
            cur.executescript("PRAGMA incremental_vacuum;")  # stepped to the end (one execute frees one page)
            cur.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            cur.fetchall()
            cur.close()
        except sqlite3.Error:
            pass
        finally:
            raw.close()

    @contextmanager
    def _read(self) -> Iterator[sa.Connection]:
        held = getattr(self._in_tx, "conn", None)
        if held is not None:  # inside `transaction()`: what it wrote so far is read
            yield held
            return
        try:
            with self.engine.connect() as conn:
                yield conn
        except (sa.exc.OperationalError, sa.exc.DatabaseError) as e:
            raise StoreError(f"{self.label}: the store could not be read ({_reason(e)})") from None

    def _put_blobs(self, conn: sa.Connection, files: list[StoredFile]) -> list[str]:
        """Each file's content stored once (by sha256), within the size limit; their hashes."""
        shas = [_sha(f.data) for f in files]
        have = set(conn.execute(sa.select(schema.blobs.c.sha256).where(schema.blobs.c.sha256.in_(shas))).scalars())
        new = {s: f for s, f in zip(shas, files) if s not in have}
        added = sum(len(f.data) for f in new.values())
        used = self._held(conn)
        if used + added > self.max_bytes:
            raise StoreFull(
                f"{self.label}: the store holds {_mb(used)} of its {_mb(self.max_bytes)}; these files "
                f"({_mb(added)}) would take it beyond (raise the limit with {MAX_BYTES_ENV}, or delete a "
                "dataset on the Data page); nothing was stored"
            )
        for s, f in new.items():
            conn.execute(sa.insert(schema.blobs).values(sha256=s, size=len(f.data), data=f.data))
        return shas

    @staticmethod
    def _used(conn: sa.Connection) -> int:
        return int(conn.execute(sa.select(sa.func.coalesce(sa.func.sum(schema.blobs.c.size), 0))).scalar_one())

    @staticmethod
    def _grade_bytes(conn: sa.Connection) -> int:
        """The grades' share of the size limit: each row's three names and GRADE_ROW_BYTES."""
        t = schema.grades
        per_row = (
            sa.func.length(t.c.query_id) + sa.func.length(t.c.doc_id) + sa.func.length(t.c.rater) + GRADE_ROW_BYTES
        )
        return int(conn.execute(sa.select(sa.func.coalesce(sa.func.sum(per_row), 0))).scalar_one())

    def _held(self, conn: sa.Connection) -> int:
        """What counts against the size limit: the files, the experiments' JSON, the grades."""
        return self._used(conn) + self._experiment_bytes(conn) + self._grade_bytes(conn)

    @staticmethod
    def _drop_unused_blobs(conn: sa.Connection) -> None:
        """Delete the files no dataset, run or embeddings refers to any more."""
        used = sa.union(
            sa.select(schema.dataset_files.c.sha256),
            sa.select(schema.runs.c.sha256),
            sa.select(schema.embedding_files.c.sha256),
        )
        conn.execute(sa.delete(schema.blobs).where(schema.blobs.c.sha256.not_in(used)))

    def is_empty(self) -> bool:
        """Whether the store holds no dataset (and so nothing else)."""
        with self._read() as conn:
            return conn.execute(sa.select(schema.datasets.c.id).limit(1)).first() is None

    def size(self) -> int:
        """Bytes the store holds: its files, its experiments' JSON and its grades (the trash's included)."""
        with self._read() as conn:
            return self._held(conn)

    # ------------------------------------------------------------------------------------------------ datasets

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

    def trash(self) -> list[DatasetEntry]:
        """The deleted datasets still restorable, the latest deleted first."""
        d = schema.datasets
        with self._read() as conn:
            rows = conn.execute(
                self._dataset_query().where(d.c.deleted_at.is_not(None)).order_by(d.c.deleted_at.desc(), d.c.id)
            )
            return [self._entry(r) for r in rows]

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

    def rename_dataset(self, dataset_id: str, name: str, by: Actor) -> None:
        """Rename a dataset: its owner or an admin."""
        name = _name(name, "the dataset")
        with self._write() as conn:
            self._managed(conn, dataset_id, by, "rename")
            conn.execute(sa.update(schema.datasets).where(schema.datasets.c.id == str(dataset_id)).values(name=name))

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

    def _owner(self, conn: sa.Connection, dataset_id: str) -> str | None:
        return conn.execute(sa.select(schema.datasets.c.owner).where(schema.datasets.c.id == str(dataset_id))).scalar()

    def _may_change(self, conn: sa.Connection, dataset_id: str, by: Actor, added_by: str, what: str) -> None:
        """Refuse `by` changing what `added_by` added to a dataset unless it is theirs, the dataset's, or an admin's."""
        if by.name != added_by and not by.may_manage(self._owner(conn, dataset_id)):
            raise Forbidden(
                f"{what}: {by.name} may not change what {added_by} added: only they, the dataset's owner or an admin"
            )

    # ---------------------------------------------------------------------------------------------------- runs

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

    # ---------------------------------------------------------------------------------------------- embeddings

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

    # -------------------------------------------------------------------------------------------------- grades

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

    # --------------------------------------------------------------------------------------------- experiments

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

    @staticmethod
    def _experiment_bytes(conn: sa.Connection) -> int:
        t = schema.experiments
        return int(conn.execute(sa.select(sa.func.coalesce(sa.func.sum(sa.func.length(t.c.body)), 0))).scalar_one())

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

    def _check_dataset(self, conn: sa.Connection, dataset_id: str) -> None:
        """Refuse a write to a dataset the store does not hold, or holds in the trash."""
        d = schema.datasets
        row = conn.execute(sa.select(d.c.name, d.c.deleted_by).where(d.c.id == str(dataset_id))).first()
        if row is None:
            raise StoreError(f"{self.label}: no dataset {dataset_id!r} in the store")
        if row[1] is not None:
            raise StoreError(f"{self.label}: {row[0]} is in the trash (deleted by {row[1]}): restore it to change it")


# ------------------------------------------------------------------------------------------------------ opening


def _mb(n: int) -> str:
    return f"{n / 2**20:,.1f} MB"


def _reason(e: Exception) -> str:
    orig = getattr(e, "orig", None)
    return str(orig if orig is not None else e).strip().splitlines()[0] if str(orig or e).strip() else type(e).__name__


def _label(url: sa.URL) -> str:
    return url.render_as_string(hide_password=True)


def _sqlite_pragmas(dbapi_connection, _record) -> None:
    """Each SQLite connection: the driver's own transactions off (SQLAlchemy's BEGIN, below, instead), WAL (readers
    never wait for a writer), incremental auto-vacuum (a new store: space freed goes back to the disk, `_give_back`),
    synchronous FULL (a commit is on disk), foreign keys on, wait up to 30 s for a lock."""
    dbapi_connection.isolation_level = None
    cur = dbapi_connection.cursor()
    for pragma in (
        "auto_vacuum=INCREMENTAL",
        "journal_mode=WAL",
        "synchronous=FULL",
        "foreign_keys=ON",
        "busy_timeout=30000",
    ):
        cur.execute(f"PRAGMA {pragma}")
    cur.close()


def _sqlite_begin(conn: sa.Connection) -> None:
    conn.exec_driver_sql(conn.get_execution_options().get("sqlite_begin", "BEGIN"))


def _engine(url: sa.URL) -> sa.Engine:
    if url.get_backend_name() == "sqlite":
        path = url.database
        if path and path != ":memory:":
            folder = Path(path).expanduser().resolve().parent
            try:
                folder.mkdir(parents=True, exist_ok=True)
            except OSError as e:
                raise StoreError(f"{_label(url)}: the folder {folder} cannot be made ({e.strerror})") from None
        engine = sa.create_engine(url, poolclass=sa.pool.NullPool)
        event.listen(engine, "connect", _sqlite_pragmas)
        event.listen(engine, "begin", _sqlite_begin)
        return engine
    return sa.create_engine(url, pool_pre_ping=True, pool_size=4, max_overflow=4)


def migrations_config(conn: sa.Connection | None = None) -> Config:
    """Alembic's configuration of the store's migrations (no alembic.ini), on `conn` when given."""
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    cfg.attributes["connection"] = conn
    return cfg


def known_revisions() -> list[str]:
    """The migrations this version of the lab knows, oldest first."""
    script = ScriptDirectory.from_config(migrations_config())
    return [r.revision for r in reversed(list(script.walk_revisions()))]


def open_workspace(url: str | None = None, max_bytes: int | None = None) -> Workspace:
    """The store at `url` (default `default_url()`), its tables made or upgraded to this version's; its files'
    size limit `max_bytes` (default $RETRIEVAL_LAB_STORE_MAX_BYTES, else DEFAULT_MAX_BYTES). A store this version
    cannot read (a newer one's, a file that is not a store, a server that does not answer) is one StoreError."""
    raw = url or default_url()
    try:
        parsed = sa.make_url(raw)
    except sa.exc.ArgumentError:
        raise StoreError(f"{URL_ENV}: {raw!r} is not a database URL (e.g. postgresql+psycopg://user@host/db)") from None
    label = _label(parsed)
    limit = bytes_from_env(MAX_BYTES_ENV, DEFAULT_MAX_BYTES) if max_bytes is None else int(max_bytes)
    try:
        engine = _engine(parsed)
    except (sa.exc.NoSuchModuleError, ImportError) as e:
        raise StoreError(f"{label}: this kind of database cannot be used here ({e})") from None
    try:
        with engine.connect() as conn:
            if conn.dialect.name == "postgresql":
                conn.execute(sa.text("SELECT pg_advisory_lock(:key)"), {"key": _LOCK_KEY})  # one migrating server
            try:
                _migrate(conn, label)
            finally:
                if conn.dialect.name == "postgresql":
                    conn.execute(sa.text("SELECT pg_advisory_unlock(:key)"), {"key": _LOCK_KEY})
                    conn.commit()
    except StoreError:
        engine.dispose()
        raise
    except (sa.exc.OperationalError, sa.exc.DatabaseError, sqlite3.DatabaseError) as e:
        engine.dispose()
        raise StoreError(f"{label}: not a workspace this lab can open ({_reason(e)})") from None
    if engine.dialect.name == "sqlite":
        _incremental_vacuum(engine, label)
    ws = Workspace(engine, label, limit)
    ws.purge_expired()
    return ws


def _incremental_vacuum(engine: sa.Engine, label: str) -> None:
    """A SQLite store made before incremental auto-vacuum, switched to it once (a VACUUM, which rewrites the file:
    the space it held beyond its data goes back to the disk). A store busy with another server is left for a later
    opening."""
    raw = engine.raw_connection()
    try:
        cur = raw.cursor()
        if cur.execute("PRAGMA auto_vacuum").fetchone()[0] != 2:
            cur.execute("PRAGMA auto_vacuum=INCREMENTAL")
            cur.execute("VACUUM")
        cur.close()
    except sqlite3.OperationalError:
        pass
    except sqlite3.DatabaseError as e:
        raise StoreError(f"{label}: not a workspace this lab can open ({e})") from None
    finally:
        raw.close()


def _migrate(conn: sa.Connection, label: str) -> None:
    """Refuse a store of a newer version or a database holding other tables; else upgrade it to the newest
    revision (each migration its own transaction)."""
    current = MigrationContext.configure(conn).get_current_revision()
    conn.commit()
    known = known_revisions()
    if current is not None and current not in known:
        raise StoreError(
            f"{label}: this store was made by a newer version of the lab (revision {current}; this "
            f"version knows up to {known[-1]}): upgrade the lab to open it"
        )
    if current is None:
        tables = set(sa.inspect(conn).get_table_names()) - {"alembic_version"}
        conn.commit()
        if tables:
            raise StoreError(
                f"{label}: this database holds other tables ({', '.join(sorted(tables)[:5])}), not a "
                "workspace: point the lab at an empty database"
            )
    if current != known[-1]:
        command.upgrade(migrations_config(conn), "head")
        conn.commit()
