"""What the store holds and hands back: a file as uploaded, the entries the pages list (datasets, runs,
embeddings, experiments), a grade; how a dataset was uploaded; a name and a time as stored."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from ..core.errors import InputError

ZIP, FILES = "beir-zip", "files"  # how a dataset was uploaded: one BEIR zip, or three files
ROLES = {ZIP: ("zip",), FILES: ("documents", "questions", "judgements")}


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


def _now() -> datetime:
    return datetime.now(UTC)


def _utc(t: datetime) -> datetime:
    """A time read back (SQLite gives it without its zone; every time stored is UTC)."""
    return t if t.tzinfo else t.replace(tzinfo=UTC)


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
