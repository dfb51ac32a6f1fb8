"""Embeddings put in a dataset's order (`align`): every document's vector and every question's, what the file lacks
or holds beyond the dataset said in an error (a document without a vector) or a warning."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..core.errors import InputError
from ..core.words import agree, plural
from .model import Dataset

if TYPE_CHECKING:  # annotations only: embeddings.py re-exports `align`, so this module cannot import it at run time
    from .embeddings import Embeddings


@dataclass(frozen=True, eq=False)
class Aligned:
    """Embeddings in a dataset's order: every document's vector, every question's (zeros for one the file lacks)."""

    model: str
    doc_vectors: np.ndarray  # the dataset's documents x dim, float32, unit rows
    query_vectors: np.ndarray  # the dataset's questions x dim, float32; unit rows, zero for a question without one
    has_query: np.ndarray  # bool per question: the file gave its vector
    dataset_fingerprint: str
    fingerprint: str  # the embeddings' content fingerprint
    warnings: tuple[str, ...] = ()
    corpus_fingerprint: str = ""  # the dataset's documents and questions (any judgements): what the rows align with

    name = "dense"  # the system these vectors stand for, everywhere (JSON, charts, heatmap, diagnosis)


def _first_ids(ids: Sequence[str], k: int = 3) -> str:
    return ", ".join(repr(i) for i in ids[:k]) + (", ..." if len(ids) > k else "")


def _positions(
    ids: tuple[str, ...], index: dict[str, int], source: str, what: str
) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Each embedding row's position in the dataset (-1: not in it), and a warning when some are not."""
    pos = np.array([index.get(i, -1) for i in ids], dtype=np.int64)
    unknown = [ids[r] for r in np.flatnonzero(pos < 0)]
    notes = (
        [
            (
                f"{source}: {len(unknown)} {what} vectors name ids that are not in the dataset ({_first_ids(unknown)}); "
                "they are left out"
            )
        ]
        if unknown
        else []
    )
    return np.flatnonzero(pos >= 0), pos[pos >= 0], notes


def align(embeddings: Embeddings, dataset: Dataset) -> Aligned:
    """The vectors in the dataset's document and question order.

    A document without a vector cannot be ranked: that is an error naming how many and the first. A question
    without one scores nothing (a warning); vectors of ids the dataset does not have are left out (a warning).
    """
    d_src, q_src = embeddings.sources
    d_rows, d_pos, notes = _positions(embeddings.doc_ids, dataset.doc_index, d_src, "document")
    if d_pos.size < dataset.n_docs:
        have = np.zeros(dataset.n_docs, dtype=bool)
        have[d_pos] = True
        lacking = [dataset.doc_ids[i] for i in np.flatnonzero(~have)]
        raise InputError(
            f"{d_src}: {len(lacking):,} of the dataset's {plural(dataset.n_docs, 'document')} "
            f"{agree(len(lacking), 'has', 'have')} no vector "
            f"(first: {lacking[0]!r}); a document without a vector cannot be ranked"
        )
    dim = embeddings.dim
    docs = np.zeros((dataset.n_docs, dim), dtype=np.float32)
    docs[d_pos] = embeddings.doc_vectors[d_rows]
    q_rows, q_pos, q_notes = _positions(embeddings.query_ids, dataset.query_index, q_src, "question")
    queries = np.zeros((dataset.n_queries, dim), dtype=np.float32)
    queries[q_pos] = embeddings.query_vectors[q_rows]
    has = np.zeros(dataset.n_queries, dtype=bool)
    has[q_pos] = True
    if not has.all():
        lacking = [dataset.query_ids[i] for i in np.flatnonzero(~has)]
        q_notes.append(
            f"{q_src}: {len(lacking):,} of the dataset's {plural(dataset.n_queries, 'question')} "
            f"{agree(len(lacking), 'has', 'have')} no vector ({_first_ids(lacking)}); "
            f"{agree(len(lacking), 'it scores', 'they score')} nothing"
        )
    return Aligned(
        embeddings.model,
        docs,
        queries,
        has,
        dataset.fingerprint,
        embeddings.fingerprint,
        (*embeddings.warnings, *notes, *q_notes),
        dataset.corpus_fingerprint,
    )
