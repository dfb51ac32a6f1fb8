"""What every retriever is and is given: the `Retriever` interface, the narrow `Context` a run reads (never the
engine itself), and `Member`, how the weighted fusion reads a retriever's scores.

A retriever is a name, the parameters it reads (names in `params.SPECS`), `run(context, params, depth)`: every
question's best lists with the exact rank of every judged document (a `ranking.BestLists`), and `member(run)`:
the run as the weighted fusion reads it. The engine caches each run on (the retriever's name, the values of the
parameters it reads, depth), so a parameter a retriever does not read never recomputes it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import scipy.sparse as sp

from ..core.params import Params
from ..corpus.dataset import Dataset
from ..corpus.text import TermIndex
from .bm25 import Bm25Index, ProbeSites, QuestionPlan
from .ranking import BestLists


@dataclass(frozen=True)
class Context:
    """What a retriever's run reads of the dataset's engine, and nothing else.

    * `dataset`: the documents, questions and judgements;
    * `text`: the tokenised corpus (`text.TermIndex`: terms, documents x terms counts), `question_counts`: the
      questions' term counts (questions x terms, CSR, over the same terms);
    * `bm25`: BM25's columns of the corpus (`bm25.Bm25Index`), `plan`: the questions' postings laid out for its
      compiled pass (`bm25.QuestionPlan`), `judged_positions()`: the judged documents' places in that layout;
    * `lsa_fit(d)`: LSA's model at d dimensions and the questions projected into it (fitted once per d);
    * `latest_run(name)`: a retriever's most recent run (a hint for its next), or None;
    * `probe_for(name, params)`: the other members' lists a fused postings retriever scores in its own pass;
    * `plan_for(params)`: BM25's plan for the parameters' rule for repeated question words (`plan` for "once").
    """

    dataset: Dataset
    text: TermIndex
    question_counts: sp.csr_matrix
    bm25: Bm25Index
    plan: QuestionPlan
    judged_positions: Callable[[], np.ndarray]
    lsa_fit: Callable[[int], Any]
    latest_run: Callable[[str], BestLists | None]
    probe_for: Callable[[str, Params], tuple[np.ndarray, np.ndarray, ProbeSites] | None]
    plan_for: Callable[[Params], QuestionPlan]


@dataclass(frozen=True, eq=False)
class Member:
    """A member system as the weighted fusion reads it: its run's best lists (`run`: top_d, top_s, n_top, lo,
    hi), the highest score a document outside a list can have (`bound`, per question; -inf when the list holds
    every document), whether it answers each question at all, its scores of given documents (`at_rows(top_d,
    n_top)`: questions x P, the first n_top[q] of row q, 0 beyond) and of every document (`row(q)`)."""

    name: str
    run: BestLists
    bound: np.ndarray
    answers: np.ndarray
    at_rows: Callable[[np.ndarray, np.ndarray], np.ndarray]
    row: Callable[[int], np.ndarray]


class Retriever(Protocol):
    """What the engine needs of a retriever."""

    name: str
    params: tuple[str, ...]  # the Params fields its ranking depends on

    def run(self, context: Context, params: Params, depth: int) -> BestLists:
        """Every question's best lists (at least `depth` deep) and the exact rank of every judged document."""

    def member(self, run: BestLists) -> Member:
        """The run as a member of the weighted fusion."""


def rows_at(at, top_d: np.ndarray, n_top: np.ndarray) -> np.ndarray:
    """Scores of each question's first n_top[q] documents of top_d[q] through `at(questions, documents)`, 0 beyond."""
    keep = np.arange(top_d.shape[1])[None, :] < np.asarray(n_top)[:, None]
    out = np.zeros(top_d.shape)
    out[keep] = at(np.nonzero(keep)[0], top_d[keep])
    return out


def outside(run: BestLists, absent) -> np.ndarray:
    """The highest score a document outside a run's list can have: the list's last when it is full, else `absent`."""
    width = run.top_d.shape[1]
    if width == 0:
        return np.broadcast_to(np.asarray(absent, dtype=np.float64), run.n_top.shape).copy()
    last = run.top_s[:, width - 1]
    return np.where(run.n_top == width, last, absent).astype(np.float64)
