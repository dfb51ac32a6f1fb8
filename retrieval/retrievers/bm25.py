"""BM25 with Lucene's idf, scored for every question at once by compiled passes over the question terms' postings:
`run`, what a k1 or b change computes (re-weight the postings, then score, select and rank each question in one
pass), and `search`, the ranking of a run or of a score matrix.

The formula and its reference algebra (`score`, which `run` equals to the last bit) are `bm25_formula`; the
postings sliced once per dataset, `bm25_plan`. Every name of the two is importable from here, the one module a
caller imports (`from retrieval.retrievers import bm25`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

import retrieval.kernels as k

from ..core.errors import InputError
from ..core.thresholds import GROUPED_SHARE, SORT_BUDGET
from ..core.words import plural
from ..corpus.dataset import Dataset
from ..kernels.bm25_pass import PENDING, SETTLED_BY
from ..kernels.rules import bm25_weight
from .bm25_formula import (
    B_DEFAULT,
    K1_DEFAULT,
    K3_DEFAULT,
    QUESTION_WORDS,
    Bm25Index,
    check_params,
    chunks,
    explain,
    idf,
    length_norm,
    prepare,
    question_terms,
    question_weight,
    question_words_text,
    saturation,
    score,
    term_weights,
)
from .bm25_plan import (
    LOCATE_PER_DOC,
    Layout,
    LayoutSizes,
    Postings,
    ProbeSites,
    QuestionPlan,
    TermGroups,
    layout,
    locate,
    locate_lists,
    plan,
    probe_sites,
    term_groups,
    weighed,
)
from .ranking import THRESHOLD, BestLists, PassOutputs, Ranking, Selection, from_padded, rank_rows
from .ranking import keep_for as ranking_keep_for

__all__ = [
    "B_DEFAULT",
    "GROUPED_SHARE",
    "K1_DEFAULT",
    "K3_DEFAULT",
    "KEEP_DEFAULT",
    "LOCATE_PER_DOC",
    "PATHS",
    "QUESTION_WORDS",
    "SORT_BUDGET",
    "Bm25Index",
    "Bm25Run",
    "Hint",
    "Layout",
    "LayoutSizes",
    "Postings",
    "Probe",
    "ProbeSites",
    "QuestionPlan",
    "TermGroups",
    "Weights",
    "check_params",
    "chunks",
    "explain",
    "idf",
    "keep_for",
    "layout",
    "length_norm",
    "locate",
    "locate_lists",
    "plan",
    "prepare",
    "probe_sites",
    "question_terms",
    "question_weight",
    "question_words_text",
    "run",
    "saturation",
    "score",
    "search",
    "term_groups",
    "term_weights",
    "weighed",
]

KEEP_DEFAULT: int | None = None  # raw scores a run keeps per question beyond `depth` (None: `keep_for` the corpus)


def keep_for(n_docs: int) -> int:
    """How many raw scores a BM25 run keeps per question: KEEP_DEFAULT when set, else ranking.keep_for (sqrt(N)
    between 100 and 1000)."""
    return ranking_keep_for(n_docs, KEEP_DEFAULT)


class Weights(NamedTuple):
    """What a BM25 weight at (k1, b) takes besides a posting's count and idf: each document's `length_norm`,
    k1 + 1, and the postings' weights where bm25.run computed them (bm25_weights; else empty)."""

    norm: np.ndarray
    k1p1: float
    w: np.ndarray


class Probe(NamedTuple):
    """Documents whose scores a BM25 pass reads off besides (questions x P): their sites, the documents themselves
    (-1 for none) and, written by the pass, their scores (0 for none). The grouped pass computes a single's weight
    from its term, count and document's norm: sequential reads but the norm, where the posting itself lies far
    away in the postings (three reads far apart)."""

    at: ProbeSites
    doc: np.ndarray
    score: np.ndarray


class Hint(NamedTuple):
    """A previous run's best m per question (questions x m, or x 0 for no hint): layout positions and documents."""

    pos: np.ndarray
    doc: np.ndarray


@dataclass(frozen=True, eq=False)
class Bm25Run(BestLists):
    """BM25 at one (k1, b) for every question, straight from the postings (no score matrix).

    Per question (BestLists): the best max(depth, keep) documents by raw score (any positive score, ties by id),
    how many score above the result threshold, the lowest and highest score over all documents (0 for those
    without a question term), and the Ranking (results only, exact ranks of the judged documents).
    """

    k1: float
    b: float
    depth: int  # the ranking's depth (the raw lists may be deeper)
    plan: QuestionPlan
    norm: np.ndarray  # length_norm per document at (k1, b)
    top_p: np.ndarray  # the best lists' positions in each question's layout (a later run's hint)
    probe: np.ndarray | None = None  # the documents `run` was asked to score besides (questions x P)
    probe_n: np.ndarray | None = None  # how many of each probe row were scored (None: all)
    probe_scores: np.ndarray | None = None  # their scores, 0 beyond probe_n
    settled: np.ndarray | None = None  # per question, the pass that settled it: SETTLED_BY[code]

    def settled_by(self) -> dict[str, int]:
        """How many questions each pass settled, by name (kernels.bm25_pass.SETTLED_BY): "sampled" and "hinted"
        (the full pass, its cut from a sample or from the hint), "grouped" and "grouped, second try"."""
        if self.settled is None:
            return {}
        return {SETTLED_BY[c]: int(n) for c, n in enumerate(np.bincount(self.settled, minlength=len(SETTLED_BY))) if n}

    def at(self, qs: np.ndarray, ds: np.ndarray) -> np.ndarray:
        """Scores of (question, document) pairs, bit-identical to the ranking's."""
        qs, ds = np.asarray(qs, dtype=np.int64), np.asarray(ds, dtype=np.int64)
        out = np.zeros(qs.size)
        k.parallel(k.bm25_at, qs.size, qs.size * 64, qs, ds, self.plan.by_term, self.norm, self.k1 + 1.0, out)
        return out

    def at_rows(self, top_d: np.ndarray, n_top: np.ndarray) -> np.ndarray:
        """Scores of each question's first n_top[q] documents of top_d[q] (questions x depth, 0 beyond them),
        bit-identical to the ranking's: another member's lists, for the weighted fusion."""
        out = np.zeros(top_d.shape)
        k.parallel(
            k.bm25_rows,
            top_d.shape[0],
            top_d.size * 16,
            np.ascontiguousarray(top_d, dtype=np.int64),
            np.asarray(n_top, dtype=np.int64),
            self.plan.by_term,
            self.norm,
            self.k1 + 1.0,
            out,
        )
        return out

    def row(self, q: int) -> np.ndarray:
        """Scores of one question over every document (dense), bit-identical to the ranking's."""
        p = self.plan
        acc = np.zeros(p.n_docs)
        for u in p.q_u[p.q_ptr[q] : p.q_ptr[q + 1]]:
            lo, hi = p.u_ptr[u], p.u_ptr[u + 1]
            f, d = p.u_f[lo:hi], p.u_docs[lo:hi]
            acc[d] += bm25_weight(f, p.idf_u[u], self.norm[d], self.k1 + 1.0)
        return acc


def _hint_rows(hint: Bm25Run | None, qplan: QuestionPlan, m: int) -> Hint:
    """A hint run's best m positions and documents per question (-1 where it kept fewer), or empty blocks
    without a usable hint (none, another plan's, or fewer than m kept)."""
    nq = qplan.q_ptr.size - 1
    if hint is None or hint.plan is not qplan or hint.top_p.shape[1] < m:
        return Hint(np.full((nq, 0), -1, dtype=np.int64), np.full((nq, 0), -1, dtype=np.int64))
    if hint.top_p.shape[1] == m:  # positions are -1 beyond each question's n_top (run fills them so)
        return Hint(hint.top_p, hint.top_d)  # the documents are read only where every position is set
    return Hint(np.ascontiguousarray(hint.top_p[:, :m]), np.ascontiguousarray(hint.top_d[:, :m]))


PATHS = (
    "auto",
    "full",
    "hinted",
    "grouped",
)  # bm25.run's paths, each giving the same bits (tests/kernels/test_kernels.py)


def run(
    bm: Bm25Index,
    qplan: QuestionPlan,
    dataset: Dataset,
    k1: float = K1_DEFAULT,
    b: float = B_DEFAULT,
    depth: int = 100,
    name: str = "BM25",
    keep: int | None = None,
    probe: np.ndarray | None = None,
    probe_n: np.ndarray | None = None,
    hint: Bm25Run | None = None,
    probe_at: ProbeSites | None = None,
    judged_at: np.ndarray | None = None,
    path: str = "auto",
) -> Bm25Run:
    """BM25 for every question at (k1, b): re-weight the question terms' postings, then score, select and rank
    each question in one compiled pass (threads over questions). Same numbers and ranking as `search(score(...))`.

    The ranking lists the best `depth` results; the run keeps the best max(depth, keep) raw scores, which the
    weighted fusion reads (a deeper list settles more questions without a full scan). `probe` (questions x P
    document indices, -1 for none; only the first probe_n[q] of row q when given) asks for those documents'
    scores too, read off in the same pass (`probe_scores`, 0 for the others): the weighted fusion's BM25 scores
    of LSA's best documents. `probe_at` and `judged_at`, the probe's sites and the judged documents' positions
    (`probe_sites(qplan, probe, probe_n)`, `locate(qplan, j_doc, j_ptr)`), spare finding them again at every
    tick; they are found here when not given. `hint`, a run at other
    parameters on the same questions, only speeds the selection up (its best documents bound the cut); the
    results are the same with or without it.

    `path` chooses how (the results are the same on every path; bench/speed.py --paths times them):

    * "full": every question's postings scored, the cut from a sample of the scores (the hint is not read);
    * "hinted": the same pass, the cut the lowest score of the hint's best m, those m the first candidates;
    * "grouped": every question the grouped pass can take (a full hint, some document without any of its terms)
      without scoring its singles one by one (`kernels.bm25_pass.bm25_rank`), the others by the hinted pass;
    * "auto" (the app's): "grouped" for the questions touching at least GROUPED_SHARE x m documents, the
      hinted pass for the others, "full" without a hint.
    """
    check_params(k1, b)
    if path not in PATHS:
        raise InputError(f"path {path!r}: BM25's paths are {', '.join(PATHS)}")
    k1, b = float(k1), float(b)
    p = qplan
    nq = p.q_ptr.size - 1
    norm = length_norm(bm.doc_len, bm.avg_len, k1, b)
    m = max(int(depth), keep_for(p.n_docs) if keep is None else int(keep))
    o = PassOutputs.empty(dataset, m)
    if probe is None:
        probes = Probe(ProbeSites.none(nq), np.zeros((nq, 0), dtype=np.int64), np.zeros((nq, 0)))
    else:
        at = probe_sites(p, probe, probe_n) if probe_at is None else probe_at
        probes = Probe(at, np.ascontiguousarray(probe, dtype=np.int64), np.zeros(at.pos.shape))
    j_pos = locate(p, o.judged.doc, o.judged.ptr) if judged_at is None else judged_at
    top_p = np.full(o.top_d.shape, -1, dtype=np.int64)  # -1 beyond n_top: a later run's hint as it is (_hint_rows)
    hints = _hint_rows(None if path == "full" else hint, p, m)
    sel = Selection(dataset.tie_key, THRESHOLD, m)
    args = (p.by_doc, p.by_term, p.by_weight)
    share = GROUPED_SHARE if path == "auto" else 0  # "grouped": every question it can take
    settled = np.zeros(nq, dtype=np.uint8)  # PENDING until a pass settles the question
    if hints.pos.shape[1] and m and path in ("auto", "grouped"):  # the grouped pass first, the rest left pending
        k.parallel(
            k.bm25_rank,
            nq,
            p.entries,
            *args,
            Weights(norm, k1 + 1.0, np.zeros(0)),
            sel,
            j_pos,
            o,
            top_p,
            probes,
            hints,
            SORT_BUDGET,
            share,
            True,
            settled,
        )
        rest = np.flatnonzero(settled == PENDING)
    else:
        rest = np.arange(nq)
    if rest.size:  # the full pass, its weights computed for the pending questions' terms only
        if rest.size < nq:
            us = np.unique(p.q_u[np.repeat(settled == PENDING, np.diff(p.q_ptr))])
        else:
            us = np.arange(p.terms.size)
        w = p.take_weights_buffer()
        try:
            k.parallel_over(k.bm25_weights, us, int(np.diff(p.u_ptr)[us].sum()), p.by_term, norm, k1 + 1.0, w)
            k.parallel_over(
                k.bm25_rank,
                rest.astype(np.int64),
                p.entries * rest.size // max(nq, 1),
                *args,
                Weights(norm, k1 + 1.0, w),
                sel,
                j_pos,
                o,
                top_p,
                probes,
                hints,
                SORT_BUDGET,
                share,
                False,
                settled,
            )
        finally:
            p.give_back(w)
    return Bm25Run(
        **o.lists(name, int(depth)),
        k1=k1,
        b=b,
        depth=int(depth),
        plan=p,
        norm=norm,
        top_p=top_p,
        probe=probe,
        probe_n=probe_n,
        probe_scores=probes.score if probe is not None else None,
        settled=settled,
    )


def search(dataset: Dataset, scores: sp.csr_matrix | Bm25Run, depth: int = 100, name: str = "BM25") -> Ranking:
    """BM25's ranking of every question from its score matrix (or a `run`): positive scores only, ties by document id."""
    if isinstance(scores, Bm25Run):
        r = scores.ranking
        if r.name == name and scores.depth == depth:
            return r
        if depth > scores.top_d.shape[1]:
            raise InputError(
                f"depth {depth} is beyond the {plural(scores.top_d.shape[1], 'document')} this BM25 run kept"
            )
        n_list = np.minimum(np.minimum(scores.n_top, scores.n_res), depth)
        return from_padded(name, scores.top_d[:, :depth], scores.top_s[:, :depth], n_list, r.judged_rank, scores.n_res)
    return rank_rows(name, dataset, chunks(scores), depth)
