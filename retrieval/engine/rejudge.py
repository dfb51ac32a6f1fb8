"""A run re-judged: the judged ranks of other judgements of the same documents and questions read from a run's lists
(and, beyond them, from the question's scores of every document), without running the retriever again: what an
engine derived for other judgements (`Engine.derived`, a person grading) does with its root's runs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import numpy as np

from ..corpus.dataset import Dataset
from ..kernels.rules import ranks_before
from ..retrievers.ranking import THRESHOLD, BestLists


def rejudged(run: BestLists, row: Callable[[int], np.ndarray], old: Dataset, new: Dataset) -> BestLists:
    """`run`, computed for `old`'s judgements, with the judged ranks of `new`'s (the same documents and
    questions, other judgements), without running the retriever again.

    A judgement both hold keeps its rank. Another one's document takes its place in the question's best list
    (its rank when it scores above the result threshold, else 0); beyond a list that holds every result it was
    not retrieved (0); beyond a list that does not, its rank is 1 + the documents that rank before it
    (`ranks_before`) in `row(q)`, the question's scores of every document (bit-identical to the run's).
    """
    n = max(new.n_docs, 1)
    od, nd = old.qrels.doc, new.qrels.doc
    old_keys = np.where(od >= 0, old.qrels.query * n + od, -1)
    new_keys = np.where(nd >= 0, new.qrels.query * n + nd, -2)
    order = np.argsort(old_keys, kind="stable")
    sorted_keys = old_keys[order]
    at = np.minimum(np.searchsorted(sorted_keys, new_keys), max(sorted_keys.size - 1, 0))
    both = sorted_keys[at] == new_keys if sorted_keys.size else np.zeros(new_keys.size, dtype=bool)
    ranks = np.zeros(new_keys.size, dtype=np.int64)  # a document outside the corpus is never retrieved
    ranks[both] = run.ranking.judged_rank[order[at[both]]]
    todo = np.flatnonzero(~both & (nd >= 0))
    questions = new.qrels.query[todo]
    for q in np.unique(questions).tolist():
        mine = todo[questions == q]
        n_top = int(run.n_top[q])
        listed, scores = run.top_d[q, :n_top], run.top_s[q, :n_top]
        place = {int(d): i for i, d in enumerate(listed.tolist())}
        beyond = []
        for j in mine.tolist():
            i = place.get(int(nd[j]))
            if i is None:
                beyond.append(j)
            else:
                ranks[j] = i + 1 if scores[i] > THRESHOLD else 0
        if beyond and int(np.count_nonzero(scores > THRESHOLD)) < int(run.n_res[q]):  # some result lies beyond
            every = row(q)
            key = new.tie_key
            for j in beyond:
                d = int(nd[j])
                s = every[d]
                ranks[j] = 1 + int(np.count_nonzero(ranks_before(every, key, s, key[d]))) if s > THRESHOLD else 0
    return replace(run, ranking=replace(run.ranking, judged_rank=ranks))
