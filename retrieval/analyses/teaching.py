"""Pure helpers for the teaching views: a toy ranking checked and scored, DCG written out term by term, the
scikit-learn ``ndcg_score`` trap, the order-blind ID-based context metrics (as Ragas computes them), and the
diagnosis page's overlap rows and highlighted text.

Every rank-aware figure comes from `retrieval.evaluation.metrics` (through `judged_ranks_from_list`): the written-out DCG
terms use the same `gain` and `discount` and add up to the same nDCG. Nothing here imports streamlit.

The article's worked example: relevant {a: 2, b: 1, c: 1}, ranking x y a b z, universe a b c x y z w v:
nDCG@5 = 0.456949 (scikit-learn agrees when given the whole universe, 0.543791 when given only the five
retrieved documents); with a first, 0.776. Ragas's ID-based context precision and recall of retrieved
d3, d1, d9 against relevant d1, d2 are 1/3 and 1/2 for every order of the three.
"""

from __future__ import annotations

import itertools
import math
import random
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from sklearn.metrics import ndcg_score

from ..core.errors import InputError
from ..corpus.dataset import Dataset
from ..corpus.text import TOKEN_PATTERN
from ..evaluation import metrics
from ..retrievers.ranking import Ranking
from .diagnosis import CLASSES, Case
from .fusion_gains import id_list

# ----------------------------------------------------------------------------------------- the toy ranking

ARTICLE_RELEVANT = {"a": 2, "b": 1, "c": 1}
ARTICLE_UNIVERSE = ("a", "b", "c", "x", "y", "z", "w", "v")
ARTICLE_RANKINGS = {  # the article's three rankings of the worked example
    "a third": ("x", "y", "a", "b", "z"),
    "a first": ("a", "x", "y", "b", "z"),
    "no relevant document": ("x", "y", "z", "w", "v"),
}
RAGAS_EXAMPLE = (("d3", "d1", "d9"), ("d1", "d2"))  # (retrieved, relevant): precision 1/3, recall 1/2


@dataclass(frozen=True)
class Toy:
    """One question's ranking (ids in rank order), its judgements and the collection it was drawn from."""

    ranking: tuple[str, ...]
    judged: dict[str, int]  # id -> grade, retrieved or not (a grade of 0 is judged not relevant)
    universe: tuple[str, ...]  # every document: the ranking, then the judged ones not retrieved, then the others

    @property
    def relevant(self) -> tuple[str, ...]:
        """The ids with a positive grade, retrieved first in rank order, then the others."""
        ordered = list(self.ranking) + [d for d in self.judged if d not in self.ranking]
        return tuple(d for d in ordered if self.judged.get(d, 0) > 0)

    def grade(self, doc: str) -> int:
        """The grade of a document (0 when it is not judged)."""
        return self.judged.get(doc, 0)


def article_toy(name: str = "a third") -> Toy:
    """The article's worked example with one of its three rankings."""
    ranking = ARTICLE_RANKINGS[name]
    judged = dict(ARTICLE_RELEVANT)
    return Toy(ranking, judged, tuple(dict.fromkeys(list(ranking) + list(judged) + list(ARTICLE_UNIVERSE))))


def _missing(value) -> bool:
    """An empty cell: None, NaN, pandas' NA or a blank string."""
    if value is None:
        return True
    if isinstance(value, str):
        return not value.strip()
    try:
        return bool(value != value)  # NaN and pandas.NA  # noqa: PLR0124
    except (TypeError, ValueError):
        return True  # pd.NA compares to NA, whose bool() raises


def _grade(value, where: str) -> int:
    """A grade cell as a whole number >= 0, or an error naming the row."""
    if isinstance(value, bool):
        raise InputError(f"{where}: the grade must be a whole number (0, 1, 2, ...), got {value!r}")
    try:
        number = float(str(value).strip()) if isinstance(value, str) else float(value)
    except (TypeError, ValueError):
        raise InputError(f"{where}: the grade must be a whole number (0, 1, 2, ...), got {value!r}") from None
    if not math.isfinite(number) or number != int(number):
        raise InputError(f"{where}: the grade must be a whole number (0, 1, 2, ...), got {value!r}")
    if number < 0:
        raise InputError(f"{where}: the grade must be 0 or more, got {int(number)}")
    return int(number)


def _doc_id(value, where: str) -> str:
    """A document-id cell, stripped, or an error when it is empty."""
    if _missing(value):
        raise InputError(f"{where}: the document id is empty (fill it in or delete the row)")
    return str(value).strip()


def parse_toy(
    ranking_rows: Sequence[Mapping], unretrieved_rows: Sequence[Mapping] = (), others: str | Iterable[str] = ""
) -> Toy:
    """A toy from table rows ({"document", "grade"}), checked: every id filled in and unique, every grade a whole number.

    A retrieved document with an empty grade is unjudged (grade 0); a judged document that was not retrieved
    needs a grade. `others` are further documents of the collection (neither retrieved nor judged), as a
    comma- or space-separated string or a list; they only matter to scikit-learn's whole-universe call.
    """
    ranking: list[str] = []
    judged: dict[str, int] = {}
    seen: dict[str, str] = {}
    for i, row in enumerate(ranking_rows, 1):
        where = f"ranking, position {i}"
        doc = _doc_id(row.get("document"), where)
        if doc in seen:
            raise InputError(f"{where}: document {doc!r} is already at {seen[doc]}; each document can appear once")
        seen[doc] = f"position {i}"
        grade = 0 if _missing(row.get("grade")) else _grade(row.get("grade"), f"{where} ({doc})")
        ranking.append(doc)
        judged[doc] = grade
    for i, row in enumerate(unretrieved_rows, 1):
        where = f"judged but not retrieved, row {i}"
        doc = _doc_id(row.get("document"), where)
        if doc in seen:
            raise InputError(
                f"{where}: document {doc!r} is already listed ({seen[doc]}); each document can appear once"
            )
        seen[doc] = f"row {i} of the judged but not retrieved"
        if _missing(row.get("grade")):
            raise InputError(f"{where} ({doc}): a judged document needs a grade (0 = not relevant)")
        judged[doc] = _grade(row.get("grade"), f"{where} ({doc})")
    extra = re.split(r"[\s,;]+", others) if isinstance(others, str) else [str(o) for o in others]
    universe = list(dict.fromkeys(list(ranking) + list(judged) + [o.strip() for o in extra if o and o.strip()]))
    return Toy(tuple(ranking), judged, tuple(universe))


def metric_names(k: int) -> dict[str, str]:
    """Display label -> metric name of the lab's rank-aware metrics at cutoff k."""
    return {
        f"hit@{k}": f"hit@{k}",
        f"recall@{k}": f"recall@{k}",
        "RR": "mrr",
        f"nDCG@{k} (linear gain)": f"ndcg@{k}",
        f"nDCG@{k} (exponential gain)": f"ndcg_exp@{k}",
    }


def rank_metrics(toy: Toy, k: int) -> dict[str, float]:
    """hit@k, recall@k, RR and nDCG@k (linear and exponential gain) of the toy, by the app's own metrics.

    NaN for every metric when the toy has no relevant document (the question would be left out of a mean).
    """
    qrels, ranks = metrics.judged_ranks_from_list(list(toy.ranking), toy.judged)
    return {label: float(metrics.per_query(qrels, 1, ranks, name)[0]) for label, name in metric_names(k).items()}


def dcg_terms(toy: Toy, k: int, exponential: bool = False) -> list[dict]:
    """DCG@k written out: one row per position 1..k of the ranking (position, document, grade, gain, discount, term)."""
    docs = list(toy.ranking[:k])
    grades = np.array([toy.grade(d) for d in docs], dtype=np.int64)
    pos = np.arange(1, len(docs) + 1)
    gains, discounts = metrics.gain(grades, exponential), metrics.discount(pos)
    return [
        {
            "position": int(p),
            "document": d,
            "grade": int(g),
            "gain": float(ga),
            "discount": float(di),
            "term": float(ga * di),
        }
        for p, d, g, ga, di in zip(pos, docs, grades, gains, discounts)
    ]


def ideal_terms(toy: Toy, k: int, exponential: bool = False) -> list[dict]:
    """The ideal DCG@k written out: every judged grade (retrieved or not), best first, in the top k positions."""
    judged = sorted(((g, d) for d, g in toy.judged.items() if g > 0), key=lambda x: (-x[0], x[1]))[:k]
    grades = np.array([g for g, _ in judged], dtype=np.int64)
    pos = np.arange(1, len(judged) + 1)
    gains, discounts = metrics.gain(grades, exponential), metrics.discount(pos)
    return [
        {
            "position": int(p),
            "document": d,
            "grade": int(g),
            "gain": float(ga),
            "discount": float(di),
            "term": float(ga * di),
        }
        for p, (g, d), ga, di in zip(pos, judged, gains, discounts)
    ]


@dataclass(frozen=True)
class SklearnTrap:
    """scikit-learn's ndcg_score given the whole universe and given only the retrieved documents, with its inputs."""

    whole: float
    retrieved_only: float
    universe: tuple[str, ...]
    y_true_whole: tuple[int, ...]
    y_score_whole: tuple[int, ...]
    y_true_retrieved: tuple[int, ...]
    y_score_retrieved: tuple[int, ...]
    note: str = ""  # why a value is missing, when one is


def _sk_ndcg(y_true: Sequence[int], y_score: Sequence[int], k: int) -> tuple[float, str]:
    """ndcg_score on one question, NaN with scikit-learn's reason when it refuses."""
    try:
        return float(ndcg_score(np.array([y_true]), np.array([y_score]), k=k)), ""
    except ValueError as e:
        return float("nan"), str(e)


def sklearn_trap(toy: Toy, k: int) -> SklearnTrap:
    """The article's check: ranked documents get scores n, n-1, ..., 1 and every other document 0.

    Given the whole universe, scikit-learn's ideal DCG sees every judged grade and agrees with ours; given only
    the retrieved documents, a relevant document that was not retrieved is missing from its ideal DCG, and the
    nDCG comes out inflated.
    """
    n = len(toy.ranking)
    score = {d: n - i for i, d in enumerate(toy.ranking)}
    yt_w = tuple(toy.grade(d) for d in toy.universe)
    ys_w = tuple(score.get(d, 0) for d in toy.universe)
    yt_r = tuple(toy.grade(d) for d in toy.ranking)
    ys_r = tuple(score[d] for d in toy.ranking)
    whole, why_w = _sk_ndcg(yt_w, ys_w, k)
    only, why_r = _sk_ndcg(yt_r, ys_r, k)
    return SklearnTrap(whole, only, toy.universe, yt_w, ys_w, yt_r, ys_r, why_w or why_r)


def _same(text: str) -> str:
    return text


def trap_text(
    ours: float,
    whole: float,
    only: float,
    missing: Sequence[str],
    k: int,
    advice: bool = True,
    name: Callable[[str], str] = _same,
    stress: Callable[[str], str] = _same,
    code: Callable[[str], str] = _same,
) -> str:
    """The scikit-learn trap read aloud from our nDCG@k, `SklearnTrap`'s two values and the relevant documents not
    retrieved (with the advice to pass the whole universe unless `advice` is False). `name` is applied to each
    document id, `stress` to the inflated value and `code` to the function's name: the app escapes, bolds and sets
    code; the defaults give the plain sentence."""
    agree = "agrees with ours" if math.isclose(whole, ours, abs_tol=1e-9) else "differs from ours"
    if math.isclose(only, whole, abs_tol=1e-9):
        return (
            f"Given the whole universe scikit-learn gives {whole:.6f} and {agree} ({ours:.6f}); given only the "
            "retrieved documents it gives the same here, since every relevant document was retrieved."
        )
    inflated = "inflated" if only > whole else "changed"
    shown = id_list(missing, name=name)
    return (
        f"Our nDCG@{k} is {ours:.6f}. scikit-learn's {code('ndcg_score')} given every document of the universe gives "
        f"{whole:.6f} and {agree}; given only the retrieved documents it gives {stress(f'{only:.6f}')}, {inflated}, "
        f"because it derives the ideal DCG from the documents it is passed and never sees {shown} (relevant, not "
        "retrieved)." + (" Always pass the whole universe, with score 0 for what was not retrieved." if advice else "")
    )


# ------------------------------------------------------------------ order-blind, set-based context metrics


def id_context_precision(retrieved: Iterable[str], relevant: Iterable[str]) -> float:
    """Ragas's IDBasedContextPrecision: |retrieved ∩ relevant| / |retrieved| on sets of ids (NaN when nothing is retrieved)."""
    ret, rel = {str(x) for x in retrieved}, {str(x) for x in relevant}
    return len(ret & rel) / len(ret) if ret else float("nan")


def id_context_recall(retrieved: Iterable[str], relevant: Iterable[str]) -> float:
    """Ragas's IDBasedContextRecall: |retrieved ∩ relevant| / |relevant| on sets of ids (NaN when nothing is relevant)."""
    ret, rel = {str(x) for x in retrieved}, {str(x) for x in relevant}
    return len(ret & rel) / len(rel) if rel else float("nan")


def every_order(retrieved: Sequence[str], relevant: Mapping[str, int], k: int, limit: int = 24) -> list[dict]:
    """For each order of the retrieved ids (at most `limit`): the set metrics, which stay put, and RR and nDCG@k, which move."""
    rows = []
    for order in itertools.islice(itertools.permutations(retrieved), limit):
        toy = Toy(tuple(order), dict(relevant), tuple(dict.fromkeys(list(order) + list(relevant))))
        m = rank_metrics(toy, k)
        rows.append(
            {
                "order": " ".join(order),
                "context precision": id_context_precision(order, toy.relevant),
                "context recall": id_context_recall(order, toy.relevant),
                "RR": m["RR"],
                f"nDCG@{k}": m[f"nDCG@{k} (linear gain)"],
            }
        )
    return rows


def shuffled(items: Sequence, seed: int) -> list:
    """A reproducible shuffle of `items` (by `seed`) that differs from the input whenever two items differ."""
    items = list(items)
    rng = random.Random(seed)
    for _ in range(20):
        out = items[:]
        rng.shuffle(out)
        if out != items or len(set(map(repr, items))) < 2:
            return out
    return items[1:] + items[:1]


# ---------------------------------------------------------------------------------- the diagnosis page

_TOKEN_RE = re.compile(TOKEN_PATTERN)


def token_spans(text: str) -> list[tuple[int, int, str]]:
    """(start, end, token) of every token of `text` as the tokeniser lower-cases it, in the original's positions.

    Stop words are included (the caller decides which tokens to mark)."""
    lowered: list[str] = []
    origin: list[int] = []
    for i, c in enumerate(text):
        lc = c.lower()
        lowered.append(lc)
        origin.extend([i] * len(lc))
    low = "".join(lowered)
    return [(origin[m.start()], origin[m.end() - 1] + 1, m.group()) for m in _TOKEN_RE.finditer(low)]


def words_label(words: Sequence[str]) -> str:
    """Shared words for a table cell: 'data, export' or 'none'."""
    return ", ".join(words) if words else "none"


def judgement_label(grade: int | None) -> str:
    """A document's judgement for a table cell: 'grade 0' (judged), or 'unjudged' (no judgement names it)."""
    return "unjudged" if grade is None else f"grade {int(grade)}"


def overlap_rows(cases: Iterable[Case]) -> list[dict]:
    """The lexical-overlap table: one row per failing question and system."""
    rows = []
    for c in cases:
        rows.append(
            {
                "system": c.system,
                "question": c.qid,
                "class": c.kind,
                "first relevant at": c.rank_text,
                "first result": c.first_result or "none",
                "its judgement": judgement_label(c.first_grade) if c.first_result else "",
                "shared with the first result": words_label(c.first_result_words) if c.first_result else "",
                "relevant documents (grade): shared words": "; ".join(
                    f"{d} ({g}): {words_label(w)}" for d, g, w in c.relevant
                ),
                "text": c.question,
            }
        )
    return rows


def class_counts(cases_by_system: Mapping[str, Sequence[Case]]) -> list[dict]:
    """Failing questions per system and class, zeros included, in system then class order."""
    rows = []
    for system, cases in cases_by_system.items():
        for kind in CLASSES:
            rows.append({"system": system, "class": kind, "questions": sum(c.kind == kind for c in cases)})
    return rows


@dataclass(frozen=True)
class FirstResult:
    """A system's answer to one question: where its first relevant document is and what it put first."""

    system: str
    rank: int  # 0 = no relevant document retrieved
    first: str | None  # the id of the first result, None for an empty list
    n_results: int


def first_results(dataset: Dataset, rankings: Mapping[str, Ranking], q: int) -> list[FirstResult]:
    """Every system's first result and first relevant rank for question index `q`."""
    sel = dataset.qrels.query == q
    rel = sel & dataset.qrels.relevant
    out = []
    for name, r in rankings.items():
        ranks = r.judged_rank[rel]
        found = ranks[ranks > 0]
        top = r.top_ids(dataset, q, 1)
        out.append(
            FirstResult(name, int(found.min()) if found.size else 0, top[0] if top else None, int(r.n_results[q]))
        )
    return out


def bm25_position(ranking: Ranking, q: int, doc: int) -> int:
    """The 1-based position of document index `doc` in BM25's stored list for question `q`, 0 when it is not there."""
    docs, _ = ranking.top(q)
    hit = np.flatnonzero(docs == doc)
    return int(hit[0]) + 1 if hit.size else 0
