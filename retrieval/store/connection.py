"""A store's connection: every write one transaction (SQLite's BEGIN IMMEDIATE, PostgreSQL's advisory lock), a
thread's `transaction()` holding every write and read it makes, the space a write frees given back; the files
stored once per content, and what counts against the size limit (files, experiments' JSON, grades)."""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import sqlalchemy as sa

from . import schema
from .database import _LOCK_KEY, _reason
from .entries import StoredFile
from .errors import StoreError, StoreFull
from .settings import GRADE_ROW_BYTES, MAX_BYTES_ENV


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _mb(n: int) -> str:
    return f"{n / 2**20:,.1f} MB"


class Connection:
    """The store's engine and its transactions, the base of `workspace.Workspace` (each of its concepts, a class
    of its own module, adds its methods on top of these)."""

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

    @staticmethod
    def _experiment_bytes(conn: sa.Connection) -> int:
        t = schema.experiments
        return int(conn.execute(sa.select(sa.func.coalesce(sa.func.sum(sa.func.length(t.c.body)), 0))).scalar_one())
