"""Why a question fails: the words it shares with the documents it should have found, and a class for the failure.

A question is diagnosed when its first relevant document is not in the top `threshold` (3 by default).
Classes, in the order they are tested:

* **late rank** - the relevant document is found, beyond the threshold;
* **surface homonymy** - nothing relevant is found and a non-relevant document comes first on a word it shares
  with the question (an incidental match that makes a convincing, wrong context);
* **vocabulary gap** - nothing relevant is found and no relevant document shares a word with the question;
* otherwise (a relevant document shares words, the list ended before it) - **late rank** again, "beyond the list".
"""

from __future__ import annotations

from dataclasses import dataclass

from .dataset import Dataset
from .ranking import Ranking
from .metrics import first_relevant_rank
from .text import tokenize

CLASSES = ("vocabulary gap", "surface homonymy", "late rank")
THRESHOLD_DEFAULT = 3


@dataclass(frozen=True)
class Case:
    """One diagnosed question of one system."""

    system: str
    qid: str
    question: str
    rank: int  # rank of the first relevant document, 0 = not found
    first_result: str | None
    first_result_words: tuple[str, ...]  # words the first result shares with the question
    relevant: tuple[tuple[str, int, tuple[str, ...]], ...]  # (doc id, grade, shared words) per relevant document
    kind: str


def shared_words(question: str, text: str) -> tuple[str, ...]:
    """The question's tokens that the text also holds, sorted."""
    return tuple(sorted(set(tokenize(question)) & set(tokenize(text))))


def classify(rank: int, threshold: int, first_shares: bool, relevant_shares: bool) -> str:
    """The failure class of a question (see the module docstring for the rules)."""
    if rank > threshold:
        return "late rank"
    if first_shares:
        return "surface homonymy"
    if not relevant_shares:
        return "vocabulary gap"
    return "late rank"


def diagnose(dataset: Dataset, ranking: Ranking, threshold: int = THRESHOLD_DEFAULT) -> list[Case]:
    """Every question whose first relevant document is not in the top `threshold`, with its words and class."""
    first = first_relevant_rank(dataset.qrels, dataset.n_queries, ranking.judged_rank)
    cases = []
    for q in dataset.evaluated:
        rank = int(first[q])
        if 0 < rank <= threshold:
            continue
        text = dataset.query_texts[q]
        top = ranking.top_ids(dataset, q, 1)
        first_id = top[0] if top else None
        first_idx = dataset.doc_index.get(first_id) if first_id is not None else None
        first_words = shared_words(text, dataset.doc_texts[first_idx]) if first_idx is not None else ()
        rel = []
        for did, grade in dataset.relevant_of(q).items():
            j = dataset.doc_index.get(did)
            rel.append((did, grade, shared_words(text, dataset.doc_texts[j]) if j is not None else ()))
        kind = classify(rank, threshold, bool(first_words), any(w for _, _, w in rel))
        cases.append(Case(ranking.name, dataset.query_ids[q], text, rank, first_id, first_words, tuple(rel), kind))
    return cases
