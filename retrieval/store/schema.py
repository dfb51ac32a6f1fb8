"""The workspace's tables, as the store's queries read them (SQLAlchemy Core).

The migrations in `migrations/versions/` build exactly these tables (tests/store/test_store.py compares them); a change
here comes with a new migration.

* `blobs`: every stored file's bytes, once per content (sha256), whoever uploaded it and for whichever dataset;
* `datasets`: a dataset, keyed by its content fingerprint (`Dataset.fingerprint`), with the files it was read from
  (`dataset_files`: each file's role, name as uploaded and blob) and the sizes the Data page lists;
* `runs` and `embeddings`: a TREC run or an embeddings upload of a dataset, by name, each a file (embeddings one or
  two: `embedding_files`);
* `grades`: one row per grade given, with its rater and time (never updated: a rater's latest grade of a pair is
  the one in force, and two raters grading the same pair at once both keep theirs);
* `experiments`: a saved view of a dataset (systems, runs, parameters, the grades rule) and its per-question metrics,
  as JSON (`body`), by name and time.
"""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Column,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
)

metadata = MetaData()


def _text(name: str) -> Column:
    return Column(name, Text, nullable=False)


def _serial() -> Column:
    return Column("id", Integer, primary_key=True, autoincrement=True)


def _dataset_id(primary_key: bool = False) -> Column:
    return Column(
        "dataset_id", String(16), ForeignKey("datasets.id", ondelete="CASCADE"), primary_key=primary_key, nullable=False
    )


def _blob() -> Column:
    return Column("sha256", String(64), ForeignKey("blobs.sha256"), nullable=False)


def _added() -> list[Column]:
    return [Column("added_at", DateTime(timezone=True), nullable=False), _text("added_by")]


blobs = Table(
    "blobs",
    metadata,
    Column("sha256", String(64), primary_key=True),
    Column("size", BigInteger, nullable=False),
    Column("data", LargeBinary, nullable=False),
)

datasets = Table(
    "datasets",
    metadata,
    Column("id", String(16), primary_key=True),  # Dataset.fingerprint
    _text("name"),
    Column("format", String(16), nullable=False),  # "beir-zip" or "files"
    *(Column(n, Integer, nullable=False) for n in ("n_docs", "n_questions", "n_judgements")),
    *_added(),
    Column("owner", Text, nullable=True),  # who may rename or delete it (retrieval.store.access); None: nobody
    Column("deleted_at", DateTime(timezone=True), nullable=True),  # in the trash since then (None: not deleted)
    Column("deleted_by", Text, nullable=True),
)

dataset_files = Table(
    "dataset_files",
    metadata,
    _dataset_id(primary_key=True),
    Column("role", String(16), primary_key=True),  # "zip", or "documents", "questions", "judgements"
    _text("name"),
    _blob(),
)

runs = Table(
    "runs",
    metadata,
    _serial(),
    _dataset_id(),
    _text("name"),
    _text("file_name"),
    _blob(),
    *_added(),
    UniqueConstraint("dataset_id", "name", name="uq_runs_dataset_name"),
)

embeddings = Table(
    "embeddings",
    metadata,
    _serial(),
    _dataset_id(),
    _text("name"),
    *_added(),
    UniqueConstraint("dataset_id", "name", name="uq_embeddings_dataset_name"),
)

embedding_files = Table(
    "embedding_files",
    metadata,
    Column("embeddings_id", Integer, ForeignKey("embeddings.id", ondelete="CASCADE"), primary_key=True),
    Column("position", Integer, primary_key=True),
    _text("name"),
    _blob(),
)

grades = Table(
    "grades",
    metadata,
    _serial(),
    _dataset_id(),
    *(_text(n) for n in ("query_id", "doc_id", "rater")),
    Column("grade", Integer, nullable=False),
    Column("graded_at", DateTime(timezone=True), nullable=False),
    Index("ix_grades_dataset_pair", "dataset_id", "query_id", "doc_id"),
    Index("ix_grades_dataset_rater", "dataset_id", "rater"),  # a rater's grades counted against their bound
)

experiments = Table(
    "experiments",
    metadata,
    _serial(),
    _dataset_id(),
    _text("name"),
    Column("created_at", DateTime(timezone=True), nullable=False),
    _text("created_by"),
    _text("body"),  # JSON: analyses.experiments.record
    Index("ix_experiments_dataset", "dataset_id", "created_at"),
)
