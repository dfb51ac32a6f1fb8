"""What a stemmer does to BM25's failures: which it fixes, which it breaks, and the words it merged to do it.

BM25 is run at the same parameters under two text analyses that differ only in the stemmer: without one and with
Snowball's English stemmer (or the stemmer in use and none, when the parameters already stem). `diagnosis.changes`
then says, question by question at the same threshold, which failures the stemmer fixes (each with the class of
the failure it fixes: a vocabulary gap it closes, a late rank it lifts) and which it breaks; `merges` shows the
words behind each: a question word and a document word that differ but share a stem ("refund" and "refunds"
close a gap; "general" and "generalization" may open a false match).

Worked example (the invented corpus, the article's parameters, threshold 3): BM25 fails q02 "can I get my money
back" by a vocabulary gap; with the Snowball stemmer it still does, since no relevant document shares a stem
with "money" or "back" (the relevant documents say "refund"): a stemmer cannot close that gap, only another
retriever or a rewritten question can.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..core.params import Params
from ..core.words import plural
from ..corpus.dataset import Dataset
from ..corpus.text import Analysis
from ..engine.engine import Engine, for_dataset
from ..evaluation import metrics
from ..evaluation.experiment import score
from .diagnosis import THRESHOLD_DEFAULT, Change, changes, diagnose, rank_words

TRIED = "snowball"  # the stemmer compared with none when the parameters use none


@dataclass(frozen=True)
class Merge:
    """A question word and a document word that differ but share a stem: what the stemmer matched."""

    question_word: str
    doc_word: str
    stem: str


def merges(analysis: Analysis, question: str, text: str) -> tuple[Merge, ...]:
    """The (question word, text word) pairs that differ but share a stem under `analysis`, in question order.

    >>> merges(Analysis("snowball"), "refund policy", "Refunds follow our policies")
    (Merge(question_word='refund', doc_word='refunds', stem='refund'), Merge(question_word='policy', doc_word='policies', stem='polici'))
    """
    if analysis.stemmer == "none":
        return ()
    in_text = analysis.origins(text)
    return tuple(
        Merge(q, t, stem)
        for stem, words in analysis.origins(question).items()
        if stem in in_text
        for q in words
        for t in in_text[stem]
        if q != t
    )


@dataclass(frozen=True)
class StemmerChange:
    """One question the stemmer fixes or breaks, and the merges on the document that decided it: for a fixed
    question the first relevant document the stemmed BM25 ranks, for a broken one the stemmed BM25's first result."""

    change: Change  # base: BM25 without the stemmer, other: with it
    doc: str | None
    merges: tuple[Merge, ...]


@dataclass(frozen=True)
class StemmerEffect:
    """BM25's failures with and without a stemmer, at the same parameters and threshold."""

    without: Analysis
    with_stemmer: Analysis
    threshold: int
    failures_without: int  # questions BM25 fails without the stemmer
    failures_with: int
    gaps: tuple[str, ...]  # the questions BM25 fails by a vocabulary gap without the stemmer
    changes: tuple[StemmerChange, ...]
    failing_with: tuple[tuple[str, str], ...] = ()  # (question id, class) of each question BM25 fails with the stemmer
    metric: str = ""  # the metric whose mean over the evaluated questions is compared ("" : none was)
    mean_without: float = float("nan")  # BM25's mean of `metric` without the stemmer
    mean_with: float = float("nan")

    @property
    def mean_change(self) -> float:
        """The mean of `metric` with the stemmer minus without it (NaN when no metric was compared)."""
        return self.mean_with - self.mean_without

    @property
    def fixed(self) -> tuple[StemmerChange, ...]:
        """The failures the stemmer fixes."""
        return tuple(c for c in self.changes if c.change.outcome == "fixed")

    @property
    def broken(self) -> tuple[StemmerChange, ...]:
        """The questions the stemmer breaks."""
        return tuple(c for c in self.changes if c.change.outcome == "broken")

    @property
    def gaps_closed(self) -> tuple[str, ...]:
        """The vocabulary gaps (without the stemmer) that the stemmer fixes."""
        return tuple(c.change.qid for c in self.fixed if c.change.kind == "vocabulary gap")


def pair(params: Params) -> tuple[Analysis, Analysis]:
    """(without a stemmer, with one) for the parameters' stop words: their own stemmer, or TRIED when they use none."""
    stemmer = params.stemmer if params.stemmer != "none" else TRIED
    return Analysis("none", params.stopwords), Analysis(stemmer, params.stopwords)


def stemmer_effect(
    dataset: Dataset,
    params: Params = Params(),
    threshold: int = THRESHOLD_DEFAULT,
    engines: tuple[Engine, Engine] | None = None,
    metric: str | None = None,
) -> StemmerEffect:
    """What the stemmer changes in BM25's failures at `params` (`pair`: without and with it), each side's engine
    the dataset's for its analysis (`engines` when given, else `for_dataset`: built once, then kept), and what it
    does to BM25's mean of `metric` (nDCG at the threshold unless given): a stemmer can fix more failures at the
    cutoff than it breaks and still lower the mean, since a question's value also moves inside the top k."""
    without, with_stemmer = pair(params)
    e0, e1 = engines or (for_dataset(dataset, analysis=without), for_dataset(dataset, analysis=with_stemmer))
    r0 = e0.run("BM25", replace(params, stemmer=without.stemmer)).ranking
    r1 = e1.run("BM25", replace(params, stemmer=with_stemmer.stemmer)).ranking
    before = diagnose(dataset, r0, threshold, analysis=without)
    after = diagnose(dataset, r1, threshold, analysis=with_stemmer)
    out = []
    for c in changes(dataset, r0, r1, threshold, (without, with_stemmer)):
        q = dataset.query_index[c.qid]
        if c.outcome == "fixed":
            ranked = [d for d in r1.top_ids(dataset, q, c.other_rank) if d in dataset.relevant_of(q)]
            doc = ranked[0] if ranked else None
        else:
            top = r1.top_ids(dataset, q, 1)
            doc = top[0] if top else None
        j = dataset.doc_index.get(doc) if doc is not None else None
        found = merges(with_stemmer, c.question, dataset.doc_texts[j]) if j is not None else ()
        out.append(StemmerChange(c, doc, found))
    gaps = tuple(x.qid for x in before if x.kind == "vocabulary gap")
    m = metrics.parse(metric or f"ndcg@{threshold}")
    means = score(dataset, {"without": r0, "with": r1}, [m])
    return StemmerEffect(
        without,
        with_stemmer,
        threshold,
        len(before),
        len(after),
        gaps,
        tuple(out),
        tuple((c.qid, c.kind) for c in after),
        m.name,
        means.mean("without", m.name),
        means.mean("with", m.name),
    )


STEMMER_NAMES = {"snowball": "Snowball English", "porter": "Porter"}


def effect_sentence(e: StemmerEffect, system: str = "BM25", label: str | None = None) -> str:
    """What the stemmer does to the system's failures, then to its mean of the compared metric (`label`: the metric
    as the caller names it, its name by default), in plain sentences (ids are the caller's to escape).

    >>> e = StemmerEffect(Analysis(), Analysis("snowball"), 3, 2, 2, ("q02",), ())
    >>> print(effect_sentence(e))
    With the Snowball English stemmer, BM25 misses the top 3 on 2 questions instead of 2: it fixes none and breaks none. It closes 0 of the 1 vocabulary gap.
    >>> e = StemmerEffect(Analysis(), Analysis("snowball"), 5, 30, 26, (), (), (), "ndcg@5", 0.3508, 0.3473)
    >>> print(effect_sentence(e))
    With the Snowball English stemmer, BM25 misses the top 5 on 26 questions instead of 30: it fixes none and breaks none. No failure here is a vocabulary gap. Its mean nDCG@5 falls from 0.3508 to 0.3473 (-0.0035): it misses fewer questions at the cutoff, yet the mean is lower with the stemmer, since a question's value also moves inside the top 5.
    """
    stemmer = STEMMER_NAMES[e.with_stemmer.stemmer]
    count = lambda n, what: "none" if n == 0 else plural(n, what)  # noqa: E731
    gaps = (
        f" It closes {len(e.gaps_closed)} of the {plural(len(e.gaps), 'vocabulary gap')}."
        if e.gaps
        else " No failure here is a vocabulary gap."
    )
    return (
        f"With the {stemmer} stemmer, {system} misses the top {e.threshold} on {plural(e.failures_with, 'question')} "
        f"instead of {e.failures_without}: it fixes {count(len(e.fixed), 'question')} and breaks "
        f"{count(len(e.broken), 'question')}.{gaps}{mean_sentence(e, label)}"
    )


def mean_sentence(e: StemmerEffect, label: str | None = None) -> str:
    """What the stemmer does to the mean (" Its mean nDCG@5 rises from ... "), set against the failures it fixes
    and breaks when they point the other way; "" when no metric was compared."""
    if not e.metric or e.mean_without != e.mean_without or e.mean_with != e.mean_with:  # NaN: no mean
        return ""
    name, change = label or metrics.parse(e.metric).label, e.mean_change
    if change == 0:
        return f" Its mean {name} stays at {e.mean_without:.4f}."
    moves = "rises" if change > 0 else "falls"
    said = f" Its mean {name} {moves} from {e.mean_without:.4f} to {e.mean_with:.4f} ({change:+.4f})"
    fewer, more = e.failures_with < e.failures_without, e.failures_with > e.failures_without
    if change < 0 and fewer:
        return (
            said + ": it misses fewer questions at the cutoff, yet the mean is lower with the stemmer, since a "
            f"question's value also moves inside the top {e.threshold}."
        )
    if change > 0 and more:
        return (
            said + ": it misses more questions at the cutoff, yet the mean is higher with the stemmer, since a "
            f"question's value also moves inside the top {e.threshold}."
        )
    return said + "."


def gap_sentence(e: StemmerEffect, qid: str, system: str = "BM25") -> str:
    """Whether the stemmer closes one vocabulary gap (a question the system fails by one without it), in plain text."""
    stemmer = STEMMER_NAMES[e.with_stemmer.stemmer]
    if qid in e.gaps_closed:
        c = next(x for x in e.fixed if x.change.qid == qid)
        words = ", ".join(f"“{m.question_word}” ~ “{m.doc_word}”" for m in c.merges) or "shared stems"
        return (
            f"A stemmer closes this gap: with the {stemmer} stemmer {system} ranks a relevant document at "
            f"{c.change.other_rank} ({words})."
        )
    kind = dict(e.failing_with).get(qid)
    if kind == "vocabulary gap":
        return (
            f"A stemmer can't close this gap: with the {stemmer} stemmer no relevant document shares a stem with the "
            "question either; only a retriever that does not match words, or a rewritten question, can."
        )
    return (
        f"With the {stemmer} stemmer a relevant document shares a stem with the question, yet {system} still misses "
        f"the top {e.threshold} ({kind})."
    )


def describe(e: StemmerEffect, c: StemmerChange) -> str:
    """A question the stemmer fixes or breaks, each rank said with or without the stemmer (both sides are BM25, so
    diagnosis.describe's system names cannot tell them apart).

    >>> ch = Change("fixed", "late rank", "2", "", "BM25", "BM25", 56, 1)
    >>> e = StemmerEffect(Analysis(), Analysis("snowball"), 5, 1, 0, (), (StemmerChange(ch, "d9", ()),))
    >>> describe(e, e.changes[0])
    'fixed: 2, late rank; with the Snowball English stemmer BM25 rank 1, without a stemmer rank 56'
    """
    ch = c.change
    return (
        f"{ch.outcome}: {ch.qid}, {ch.kind}; with the {STEMMER_NAMES[e.with_stemmer.stemmer]} stemmer "
        f"{ch.other} {rank_words(ch.other_rank)}, without a stemmer {rank_words(ch.base_rank)}"
    )
