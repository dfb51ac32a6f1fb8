"""Ad-hoc questions: one typed text scored against the dataset's corpus with every built-in system, by the
reference formulas, then ranked and measured against judgements given with it.

    text --text.query_counts--> counts over the corpus vocabulary (unknown words dropped, and named)
      BM25   bm25.score (the reference algebra) as a dense row over every document
      LSA    lsa.query_vectors into the engine's fit at d, lsa.cosines with every document
      dense  the bundled model's question vector (dense.encode_questions; a dataset question's own text: the vector
             the dense system holds for it), lsa.cosines with the dense system's document vectors (uploaded embeddings can't encode a new text: dense is then left out, and said why)
      weighted  fusion.weighted_dense over the members' rows; RRF  fusion.rrf over the members' rankings

Every ranking comes from `ranking.rank_rows` (the ranking rule, `order_by_score`, in its compiled pass) on a
one-question dataset: the corpus as it is, the typed text as its only question and the judgements given, so a
judged document's rank is exact however deep and every metric is `experiment.score`'s. A dataset question
typed verbatim gets, for every system, the engine's own top list, scores and judged ranks to the last bit
(tests/engine/test_adhoc.py): the reference algebra is what each fast path is tested equal to.

Worked example (invented corpus, article defaults): "can I get my money back" is q02; BM25 ranks nothing
relevant (a vocabulary gap: none of its words is in a relevant document), the same text plus "refund" does.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

import retrieval.fusion as fusion

from ..core.errors import InputError
from ..core.params import Params
from ..corpus.dataset import MAX_GRADE, Dataset, Qrels, valid_grade
from ..corpus.embeddings import Aligned, unit_rows
from ..corpus.text import query_counts
from ..evaluation import metrics
from ..evaluation.experiment import Evaluation, score
from ..retrievers import bm25, dense, lsa
from ..retrievers.ranking import Ranking, rank_rows
from ..retrievers.systems import FUSIONS, Sources

MAX_CHARS = 1_000  # a typed question is at most this long (a question, not a document)
MAX_JUDGEMENTS = 100_000  # judgements one typed question may carry: a dataset question's own (deep pools hold
# thousands) plus what a person marks (the app bounds those itself); ~100 bytes each in the one-question qrels
QUESTION_ID = "typed"  # the typed question's id in its one-question dataset, when it starts from none


@dataclass(frozen=True, eq=False)
class Scores:
    """One typed text's scores of every document by each system that can score it, before any judgement."""

    text: str
    terms: tuple[str, ...]  # the text's distinct words after the stop words, in text order
    unknown: tuple[str, ...]  # those of them the corpus never uses (no retriever of words can match them)
    rows: dict[str, np.ndarray]  # BM25, LSA, dense (when it can): each document's score, float64
    params: Params
    skipped: dict[str, str] = field(default_factory=dict)  # a system left out -> why

    @property
    def fused(self) -> bool:
        """Whether every fusion member was scored (else the fusions are left out, `skipped` says why)."""
        return all(m in self.rows for m in self.params.members)


def check_text(text: str) -> str:
    """The typed text, or an InputError saying what is wrong with it (empty, or too long)."""
    if not isinstance(text, str):
        raise InputError(f"question: expected text, got {type(text).__name__}")
    if len(text) > MAX_CHARS:
        raise InputError(f"question: {len(text):,} characters, the most a typed question may have is {MAX_CHARS:,}")
    if not text.strip():
        raise InputError("question: the text is empty")
    return text


def score_text(engine, text: str, params: Params, sources: Sources = ()) -> Scores:
    """Every system's score of every document for `text` at `params` (the engine's LSA fit and dense vectors
    reused): BM25 and LSA always, dense when the session's vectors are the bundled model's."""
    check_text(text)
    engine.answers_for(params)
    terms = tuple(dict.fromkeys(engine.index.analyse(text)))
    unknown = tuple(t for t in terms if t not in engine.index.vocabulary)
    qc = query_counts(engine.index, [text])
    rows = {
        "BM25": bm25.score(engine.bm25, qc, params.k1, params.b, params.query_words, params.k3)
        .toarray()[0]
        .astype(np.float64)
    }
    fit = engine.lsa_fit(params.dims)
    rows["LSA"] = lsa.cosines(lsa.query_vectors(fit.model, qc), fit.model.vt)[0]
    skipped = {}
    source = next((x for x in sources if isinstance(x, Aligned)), None)
    if source is not None:
        if source.model == dense.MODEL:
            same = [q for q, t in enumerate(engine.dataset.query_texts) if t == text and source.has_query[q]]
            if same:  # a dataset question's own text: its vector as the system holds it (the model's bits differ
                qvec = np.asarray(source.query_vectors[same[0] : same[0] + 1], dtype=np.float64)  # across CPUs)
            else:  # scaled to unit length as every question vector of a dense source is (embeddings.unit_rows)
                qvec = unit_rows(
                    dense.encode_questions([text]), ["question"], "question", lambda r: "the typed question"
                )
                qvec = np.asarray(qvec, dtype=np.float64)
            rows["dense"] = lsa.cosines(qvec, engine.system("dense", sources).model.vt)[0]
        else:
            skipped["dense"] = (
                f"its vectors ({source.model}) were uploaded: a typed question can't be encoded with "
                f"that model here, only with the bundled one ({dense.MODEL})"
            )
    return for_params(Scores(text, terms, unknown, rows, params, skipped), params)


def for_params(scores: Scores, params: Params) -> Scores:
    """The same rows read at `params`, which may differ from the scores' in what no row depends on (the fusions'
    members, weights, alpha, RRF k and depths): whether the fusions can be made, and if not why."""
    skipped = {k: v for k, v in scores.skipped.items() if k not in FUSIONS}
    missing = [m for m in params.members if m not in scores.rows]
    if missing:
        why = ", ".join(
            f"{m} ({skipped.get(m, 'an uploaded run: it has no answer for a new question')})" for m in missing
        )
        for name in FUSIONS:
            skipped[name] = f"the fusion's members {why} can't score a typed question"
    return replace(scores, params=params, skipped=skipped)


def judgements_of(dataset: Dataset, q: int) -> tuple[tuple[str, int], ...]:
    """A dataset question's judgements as (document id, grade) pairs, in the qrels' order (grade 0 included)."""
    m = dataset.qrels.query == q
    return tuple(zip(dataset.qrels.doc_id[m].tolist(), dataset.qrels.grade[m].astype(int).tolist()))


def one_question(dataset: Dataset, text: str, judgements, qid: str = QUESTION_ID) -> Dataset:
    """The corpus with `text` as its only question, judged by `judgements` ((document id, grade) pairs; a
    document the corpus lacks is kept, as a dataset's judgements are, and never retrieved)."""
    pairs = list(judgements)
    if len(pairs) > MAX_JUDGEMENTS:
        raise InputError(f"judgements: {len(pairs):,} given, at most {MAX_JUDGEMENTS} for one typed question")
    ids = [str(d) for d, _ in pairs]
    if len(set(ids)) != len(ids):
        raise InputError("judgements: a document is judged twice")
    grades = []
    for d, g in pairs:
        if not valid_grade(g):
            raise InputError(
                f"judgements: document {d!r}: the grade must be a whole number within ±{MAX_GRADE}, got {g!r}"
            )
        grades.append(int(g))
    qrels = Qrels(
        np.zeros(len(ids), dtype=np.int64),
        np.array([dataset.doc_index.get(d, -1) for d in ids], dtype=np.int64),
        np.array(ids, dtype=object),
        np.array(grades, dtype=np.int64),
    )
    return dataset.lend(Dataset(dataset.name, dataset.doc_ids, dataset.doc_texts, (qid,), (text,), qrels))


def rankings(
    dataset: Dataset, scores: Scores, judgements=(), qid: str = QUESTION_ID
) -> tuple[Dataset, dict[str, Ranking]]:
    """The one-question dataset and every system's ranking of the typed text (results above the threshold, the
    display depth or the fusion depth deep, judged ranks exact), then the two fusions of the members when all
    of them could score it: the weighted one cut at the fusion depth, RRF over each member's top fusion depth."""
    p = scores.params
    one = one_question(dataset, scores.text, judgements, qid)
    depth = p.list_depth  # how deep the engine's lists go
    out = {name: rank_rows(name, one, [(0, row[None, :])], depth) for name, row in scores.rows.items()}
    if scores.fused:
        rows = [scores.rows[m][None, :] for m in p.members]
        answers = [np.array([row.max(initial=-np.inf) > 0]) for row in rows]  # a member answers: a positive score
        out["weighted"] = fusion.weighted_dense(one, rows, answers, p.fusion_weights(), p.fusion_depth)
        out["RRF"] = fusion.rrf(one, [out[m] for m in p.members], p.rrf_k, p.fusion_depth)
    return one, out


def evaluate(one: Dataset, ranks: dict[str, Ranking], metric_names) -> Evaluation:
    """The metrics of every system for the typed question (no value when nothing judged is relevant)."""
    return score(one, ranks, metrics.parse_list(list(metric_names)))
