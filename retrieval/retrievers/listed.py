"""A system's answers as metrics read them (`Ranking`), and a run file's lists aligned with a dataset (`from_run`).

Apart from ranking.py (the compiled passes that make a retriever's ranking) so that evaluating run files alone
never imports the kernels, numba or scipy: `python -m retrieval evaluate --qrels ... --run ...` reads a run, aligns
it and scores it with numpy only.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.words import agree, plural
from ..corpus.dataset import Dataset
from ..corpus.runs import DocNames, TrecRun


@dataclass(frozen=True, eq=False)
class Ranking:
    """A system's ranked lists: CSR-like top lists per question, plus `judged_rank` aligned with the dataset's qrels (0 = not retrieved)."""

    name: str
    indptr: np.ndarray  # int64, n_queries + 1
    docs: np.ndarray  # int64 document indices in rank order; -1 for a run's document outside the corpus
    scores: np.ndarray  # float64
    judged_rank: np.ndarray  # int64, one per judgement
    n_results: np.ndarray  # int64 per question: the length of the full list (>= the stored top)
    doc_names: tuple[tuple[str, ...], ...] | None = None  # run files only: the ids as written, per question
    warnings: tuple[str, ...] = ()

    @property
    def n_queries(self) -> int:
        """Number of questions."""
        return self.indptr.size - 1

    def top(self, q: int, k: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Document indices and scores of question `q`'s first `k` results."""
        lo, hi = self.indptr[q], self.indptr[q + 1]
        if k is not None:
            hi = min(hi, lo + k)
        return self.docs[lo:hi], self.scores[lo:hi]

    def top_entries(self, qs: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every result in the first `k` of the questions `qs`, question by question: its question, its position
        in the list (from 0) and its document (-1 outside the corpus). `top`, for many questions at once."""
        qs = np.asarray(qs, dtype=np.int64)
        starts = self.indptr[qs]
        lens = np.minimum(self.indptr[qs + 1] - starts, k)
        position = np.arange(int(lens.sum())) - np.repeat(np.cumsum(lens) - lens, lens)
        return np.repeat(qs, lens), position, self.docs[np.repeat(starts, lens) + position]

    def top_ids(self, dataset: Dataset, q: int, k: int | None = None) -> list[str]:
        """Document ids of question `q`'s first `k` results."""
        docs, _ = self.top(q, k)
        if self.doc_names is not None:
            return list(self.doc_names[q][: docs.size])
        return [dataset.doc_ids[d] for d in docs]


def from_run(run: TrecRun, dataset: Dataset, name: str | None = None) -> Ranking:
    """A Ranking from a TREC run file; its questions and documents that the dataset lacks are counted in warnings.

    A run's document outside the corpus keeps its place in the list (as trec_eval does) but is never relevant
    unless the judgements name it. Each distinct question and document id is looked up once (not each line);
    the lists are moved into the dataset's question order and the judged documents found with array operations.
    """
    name = name or run.name
    nq = dataset.n_queries
    qmap = np.fromiter(
        (dataset.query_index.get(q, -1) for q in run.query_ids), dtype=np.int64, count=len(run.query_ids)
    )
    index = dataset.doc_index
    if dataset.n_docs:
        dmap = np.fromiter((index.get(d, -1) for d in run.vocab), dtype=np.int64, count=len(run.vocab))
    else:  # judgements alone: no document is in a corpus
        dmap = np.full(len(run.vocab), -1, dtype=np.int64)
    lens = np.diff(run.indptr)
    known = qmap >= 0
    unknown_q = [q for q, k in zip(run.query_ids, known.tolist()) if not k]
    counts = np.zeros(nq, dtype=np.int64)
    counts[qmap[known]] = lens[known]
    indptr = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    # the run's lines of each dataset question, in the dataset's order: run question r's slice lands at indptr[q]
    rq = np.flatnonzero(known)
    rq = rq[np.argsort(qmap[rq], kind="stable")]
    lens_r = lens[rq]
    take = np.repeat(run.indptr[rq] - (np.cumsum(lens_r) - lens_r), lens_r) + np.arange(int(lens_r.sum()))
    codes, scores = run.doc[take], run.score[take]
    docs = dmap[codes]
    unknown_d = int(np.count_nonzero(docs < 0))
    judged_rank = _judged_ranks(run, dataset, indptr, codes)
    warnings = list(run.warnings)
    if unknown_q:
        ex = ", ".join(sorted(unknown_q)[:5])
        n = len(unknown_q)
        warnings.append(
            f"run {name}: {plural(n, 'question')} {agree(n, 'is', 'are')} not in the dataset ({ex}); "
            f"{agree(n, 'its', 'their')} lines are left out"
        )
    if unknown_d and dataset.n_docs:  # judgements alone (no corpus): every document is outside it, and fine
        warnings.append(
            f"run {name}: {plural(unknown_d, 'line')} {agree(unknown_d, 'names a document that is', 'name documents that are')} "
            f"not in the corpus; {agree(unknown_d, 'it keeps its', 'they keep their')} rank and "
            f"{agree(unknown_d, 'counts', 'count')} as not relevant"
        )
    missing = nq - (len(run.query_ids) - len(unknown_q))
    if missing:
        warnings.append(
            f"run {name}: {plural(missing, 'question')} {agree(missing, 'has', 'have')} no line in the run; "
            f"{agree(missing, 'it scores', 'they score')} zero"
        )
    names = DocNames(run.vocab, indptr, codes)
    return Ranking(name, indptr, docs, scores.astype(np.float64), judged_rank, counts, names, tuple(warnings))


def _judged_ranks(run: TrecRun, dataset: Dataset, indptr: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """Each judgement's rank in its question's list of the run (0 = not listed), matched by document id: the
    judged ids are looked up once in the run's ids, and only the lines naming a judged document are matched, by
    (question, document) key against the sorted judgements."""
    qrels = dataset.qrels
    out = np.zeros(len(qrels), dtype=np.int64)
    if not len(qrels) or not codes.size:
        return out
    width = len(run.vocab) + 1
    jcode = run.codes_of(qrels.doc_id.tolist())
    judged = np.zeros(width, dtype=bool)
    judged[jcode[jcode >= 0]] = True
    lines = np.flatnonzero(judged[codes])  # the run's lines naming a judged document: few
    q = np.searchsorted(indptr, lines, side="right") - 1
    line_keys = q * width + codes[lines]
    keys = np.where(jcode >= 0, qrels.query * width + jcode, -1)
    order = np.argsort(keys, kind="stable")
    at = np.minimum(np.searchsorted(keys[order], line_keys), max(keys.size - 1, 0))
    hit = keys[order][at] == line_keys
    out[order[at[hit]]] = lines[hit] - indptr[q[hit]] + 1
    return out
