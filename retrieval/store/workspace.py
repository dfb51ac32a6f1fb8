"""The workspace: datasets, their files as uploaded, runs, embeddings and grades by rater, kept in a database.

SQLite in a file under $RETRIEVAL_LAB_HOME (default ~/.local/share/retrieval-lab) needs nothing else; a team points
$RETRIEVAL_LAB_DATABASE_URL at PostgreSQL (postgresql+psycopg://user@host/db) so several app servers share one
store. Every write is one transaction: a server killed mid-write leaves all of it or none (tests/store/test_store.py
kills a child process mid-upload). Every statement is built by SQLAlchemy Core with bound parameters.

The store's tables are made and upgraded by versioned migrations (Alembic, `migrations/`), so a store made by an
older version of the lab opens in a newer one; a store made by a newer one, or a file that is not a store, is
refused with one message naming it.

Who may change what is `access`'s model, checked here on every change: a dataset's owner or an admin renames,
deletes, restores it; a rater takes back only their own grades. A deleted dataset goes to the trash with everything
it holds, restorable for $RETRIEVAL_LAB_TRASH_DAYS days (default 30), then purged; SQLite gives the space back to
the disk (incremental auto-vacuum). Grades count against the store's size limit, and each rater's against a bound
per dataset ($RETRIEVAL_LAB_MAX_GRADES_PER_RATER).

A store is one `Workspace`, composed of a class per concept, each in its own module: `connection` (transactions,
files stored once, the size limit), `guards` (who may change what), `datasets`, `trash`, `runs`, `embeddings`,
`grades`, `experiments`; `database` opens it (engine, migrations), `settings` reads the environment, `entries` and
`errors` are what it hands back. Every name they export is importable from here.
"""

from __future__ import annotations

from .database import MIGRATIONS, connect, known_revisions, migrations_config
from .embeddings import Embeddings
from .entries import (
    FILES,
    ROLES,
    ZIP,
    DatasetEntry,
    EmbeddingsEntry,
    ExperimentEntry,
    Grade,
    RunEntry,
    StoredFile,
)
from .errors import Forbidden, StoreError, StoreFull
from .experiments import Experiments
from .grades import Grades
from .runs import Runs
from .settings import (
    DEFAULT_HOME,
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_GRADES,
    DEFAULT_TRASH_DAYS,
    FILE_NAME,
    GRADE_ROW_BYTES,
    HOME_ENV,
    MAX_BYTES_ENV,
    MAX_EXPERIMENT_BYTES,
    MAX_GRADES_ENV,
    TRASH_DAYS_ENV,
    URL_ENV,
    default_url,
    max_grades,
    trash_days,
)
from .trash import Trash

__all__ = [
    "DEFAULT_HOME",
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_GRADES",
    "DEFAULT_TRASH_DAYS",
    "FILES",
    "FILE_NAME",
    "GRADE_ROW_BYTES",
    "HOME_ENV",
    "MAX_BYTES_ENV",
    "MAX_EXPERIMENT_BYTES",
    "MAX_GRADES_ENV",
    "MIGRATIONS",
    "ROLES",
    "TRASH_DAYS_ENV",
    "URL_ENV",
    "ZIP",
    "DatasetEntry",
    "EmbeddingsEntry",
    "ExperimentEntry",
    "Forbidden",
    "Grade",
    "RunEntry",
    "StoreError",
    "StoreFull",
    "StoredFile",
    "Workspace",
    "default_url",
    "known_revisions",
    "max_grades",
    "migrations_config",
    "open_workspace",
    "trash_days",
]


class Workspace(Trash, Runs, Embeddings, Grades, Experiments):
    """One store: `open_workspace()` opens the default one.

    >>> import tempfile, retrieval
    >>> from retrieval.corpus import dataset as datasets
    >>> ws = open_workspace(f"sqlite:///{tempfile.mkdtemp()}/lab.sqlite")
    >>> ds = retrieval.load("invented")
    >>> entry = ws.add_dataset(ds, ZIP, [StoredFile("invented.zip", datasets.beir_zip(ds))], "ana")
    >>> ws.load_dataset(entry.id).fingerprint == ds.fingerprint, [e.name for e in ws.datasets()]
    (True, ['invented'])
    """


def open_workspace(url: str | None = None, max_bytes: int | None = None) -> Workspace:
    """The store at `url` (default `default_url()`), its tables made or upgraded to this version's; its files'
    size limit `max_bytes` (default $RETRIEVAL_LAB_STORE_MAX_BYTES, else DEFAULT_MAX_BYTES). A store this version
    cannot read (a newer one's, a file that is not a store, a server that does not answer) is one StoreError."""
    ws = Workspace(*connect(url, max_bytes))
    ws.purge_expired()
    return ws
