"""A dataset's statistics: its sizes, its judgements per question, its vocabulary and document lengths (from its
term index). What the Data page's table and the command line's header show."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .dataset import Dataset
from .text import TermIndex


@dataclass(frozen=True)
class DatasetStats:
    """Sizes of a dataset and of its term index."""

    documents: int
    questions: int
    judgements: int
    relevant_judgements: int  # grade > 0
    questions_evaluated: int  # with at least one relevant document: the ones every mean is over
    questions_without_relevant: int
    judgements_outside_corpus: int  # judgements naming a document the corpus lacks
    vocabulary: int  # distinct terms after the tokeniser (lower case, [a-z0-9]+, stop words removed)
    doc_len_mean: float  # tokens per document, stop words removed
    doc_len_median: float
    doc_len_max: int
    empty_documents: int  # documents without a single token: no lexical retriever can find them


def dataset_stats(dataset: Dataset, index: TermIndex) -> DatasetStats:
    """The sizes of `dataset`, its vocabulary and document lengths from its term index."""
    qrels = dataset.qrels
    lens = index.doc_len
    evaluated = int(dataset.evaluated.size)
    return DatasetStats(
        documents=dataset.n_docs,
        questions=dataset.n_queries,
        judgements=len(qrels),
        relevant_judgements=int(qrels.relevant.sum()),
        questions_evaluated=evaluated,
        questions_without_relevant=dataset.n_queries - evaluated,
        judgements_outside_corpus=int((qrels.doc < 0).sum()),
        vocabulary=int(index.terms.size),
        doc_len_mean=float(lens.mean()) if lens.size else 0.0,
        doc_len_median=float(np.median(lens)) if lens.size else 0.0,
        doc_len_max=int(lens.max()) if lens.size else 0,
        empty_documents=int((lens == 0).sum()),
    )


def judgements_per_question(dataset: Dataset) -> tuple[np.ndarray, np.ndarray]:
    """Per question: the number of judged documents (any grade) and of relevant ones (grade > 0)."""
    judged = np.bincount(dataset.qrels.query, minlength=dataset.n_queries)
    return judged, dataset.n_relevant


def histogram(counts: np.ndarray) -> list[tuple[int, int]]:
    """(value, how many questions have it) for every value that occurs, ascending."""
    values, n = np.unique(np.asarray(counts, dtype=np.int64), return_counts=True)
    return [(int(v), int(c)) for v, c in zip(values, n)]
