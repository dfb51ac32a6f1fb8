"""The database under a store: its engine (SQLite's pragmas and transactions, PostgreSQL's pool), its tables
made or upgraded by the migrations (Alembic), a store this version cannot read refused with one message."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import sqlalchemy as sa
from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import event

from ..core.environment import bytes_from_env
from .errors import StoreError
from .settings import DEFAULT_MAX_BYTES, MAX_BYTES_ENV, URL_ENV, default_url

MIGRATIONS = Path(__file__).resolve().parent / "migrations"
_LOCK_KEY = 0x7265_7472  # PostgreSQL's advisory lock of the store's writers ("retr")


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


def connect(url: str | None = None, max_bytes: int | None = None) -> tuple[sa.Engine, str, int]:
    """The engine of the store at `url` (default `default_url()`), its tables made or upgraded; what messages name
    it by; its size limit (`max_bytes`, default $RETRIEVAL_LAB_STORE_MAX_BYTES, else DEFAULT_MAX_BYTES)."""
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
    return engine, label, limit


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
