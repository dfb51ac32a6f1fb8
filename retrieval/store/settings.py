"""The store's settings, read from the environment: where it is, its size limit, how long the trash keeps a
dataset, how many grades a rater may give a dataset; and the bounds of what one write may hold."""

from __future__ import annotations

import os
from pathlib import Path

from .errors import StoreError

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
