"""Why a question fails: the words it shares with the documents it should have found, and a class for the failure.

A question is diagnosed when its first relevant document is not in the top `threshold` (3 by default).
Classes, in the order they are tested:

* **late rank** - the relevant document is found, beyond the threshold;
* **beyond the fusion's top N** - a fusion (its list cut at its depth N) finds nothing relevant while one of its
  members ranks a relevant document: the fusion lost it to its cut, not to the words (N = `Params.fusion_depth`);
* **surface homonymy** - nothing relevant is found and a document judged not relevant (grade <= 0) comes first on a
  word it shares with the question (an incidental match that makes a convincing, wrong context);
* **unjudged at the top** - nothing relevant is found and a document no judgement names comes first on a word it
  shares with the question: it may be relevant, the judgements do not say (grade it on the Judge page);
* **vocabulary gap** - nothing relevant is found and no relevant document shares a word with the question;
* otherwise (a relevant document shares words, the list ended before it) - **late rank** again, "beyond the list".

A missed question (no relevant document in a system's list) reads one way everywhere (`rank_text`): **"> N"** for a
fusion of depth N when one of its members lists a relevant document (the fusion lost it to its cut), **"not found"**
otherwise (no member lists one, or the system is not a fusion).

`changes` compares two systems question by question at the same threshold: what one fixes or breaks relative
to the other, each with the failure class of the side that fails (`describe` gives the plain line).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..core.words import plural
from ..corpus.dataset import Dataset
from ..corpus.text import ARTICLE_ANALYSIS, Analysis, tokenize
from ..engine.adhoc import judgements_of
from ..evaluation.metrics import first_relevant_rank
from ..retrievers.ranking import Ranking

FUSION_CUT = "beyond the fusion's top N"  # N: the fusion's depth (class_label writes it out)
HOMONYMY, UNJUDGED = "surface homonymy", "unjudged at the top"
CLASSES = ("vocabulary gap", HOMONYMY, UNJUDGED, "late rank", FUSION_CUT)
NOT_FOUND = "not found"
THRESHOLD_DEFAULT = 3
RELEVANT_LISTED = 10  # a text report's relevant documents listed per diagnosed question (the rest counted): a
# question judged against 714,287 documents made a 1.4 M-line report; the Diagnosis page shows them a few to a page
OUTCOMES = ("fixed", "broken")


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
    depth: int | None = None  # a fusion's depth N (its list is its top N); None for any other system
    members: tuple[tuple[str, int], ...] = ()  # a fusion's members with their first relevant rank (0 = not found)
    first_grade: int | None = None  # the first result's grade for this question, None when no judgement names it
    more_relevant: int = 0  # relevant documents left out of `relevant` (diagnose's `listed`)

    @property
    def member_found(self) -> bool:
        """A fusion's member lists a relevant document (its miss is then "> N", its cut)."""
        return any(r > 0 for _, r in self.members)

    @property
    def rank_text(self) -> str:
        """The first relevant rank as every table shows it (`rank_text`)."""
        return rank_text(self.rank, self.depth, self.member_found)


def fusion_cut_label(depth: int) -> str:
    """What a fusion's "not found" means: "beyond the fusion's top 10"."""
    return FUSION_CUT.replace(" N", f" {int(depth)}")


def class_label(kind: str, depth: int | None) -> str:
    """A class as shown: FUSION_CUT with the fusion depth written out (when given), every other class as it is."""
    return fusion_cut_label(depth) if kind == FUSION_CUT and depth is not None else kind


def beyond_cut(rank: int, depth: int | None, member_found: bool) -> bool:
    """The one rule of a miss: a system with nothing relevant in its list (rank 0) that is a fusion (its depth given)
    one of whose members lists a relevant document lost it to its cut (beyond its top N); any other miss is not found."""
    return int(rank) <= 0 and depth is not None and bool(member_found)


def rank_text(rank: int, depth: int | None = None, member_found: bool = False) -> str:
    """A first relevant rank as every page writes it: "4"; "> 10" for a fusion of depth 10 that lost a relevant
    document a member lists (`beyond_cut`); else "not found"."""
    if rank > 0:
        return str(int(rank))
    return f"> {int(depth)}" if beyond_cut(rank, depth, member_found) else NOT_FOUND


def members_found(member_ranks: Sequence[np.ndarray]) -> np.ndarray:
    """Per question: whether any member's first relevant rank is found (> 0); all False without members."""
    ranks = [np.asarray(r) for r in member_ranks]
    return np.any(np.stack(ranks) > 0, axis=0) if ranks else np.zeros(0, dtype=bool)


def shared_words(question: str, text: str, analysis: Analysis = ARTICLE_ANALYSIS) -> tuple[str, ...]:
    """The text's words whose term the question holds too, sorted: without a stemmer, the question's tokens the
    text also holds; with one, the text's words that share a stem with a question word ("refunds" for "refund")."""
    if analysis.stemmer == "none":
        return tuple(sorted(set(tokenize(question, analysis)) & set(tokenize(text, analysis))))
    terms = set(analysis.analyse(question))
    return tuple(sorted({w for t, words in analysis.origins(text).items() if t in terms for w in words}))


def classify(
    rank: int,
    threshold: int,
    first_shares: bool,
    relevant_shares: bool,
    member_found: bool = False,
    first_judged: bool = True,
) -> str:
    """The failure class of a question (see the module docstring for the rules). `member_found`: the system is a
    fusion and one of its members ranks a relevant document; `first_judged`: a judgement names the first result
    (the caller knows it is not relevant: nothing relevant is found)."""
    if rank > threshold:
        return "late rank"
    if member_found:
        return FUSION_CUT
    if first_shares:
        return HOMONYMY if first_judged else UNJUDGED
    if not relevant_shares:
        return "vocabulary gap"
    return "late rank"


def diagnose(
    dataset: Dataset,
    ranking: Ranking,
    threshold: int = THRESHOLD_DEFAULT,
    members: Sequence[Ranking] = (),
    depth: int | None = None,
    listed: int | None = None,
    analysis: Analysis = ARTICLE_ANALYSIS,
) -> list[Case]:
    """Every question whose first relevant document is not in the top `threshold`, with its words and class (the
    words shared under `analysis`: the index's, so a stem shared is a word shared).

    For a fusion, give its `depth` N and its `members`' rankings: a question it finds nothing relevant for while a
    member ranks a relevant document is then "beyond the fusion's top N" (see the module docstring).
    `listed`: at most this many relevant documents kept per question (in the judgements' order), the others
    counted (`Case.more_relevant`); the class still looks at every one (until one shares a word)."""
    first = first_relevant_rank(dataset.qrels, dataset.n_queries, ranking.judged_rank)
    member_first = (
        [(m.name, first_relevant_rank(dataset.qrels, dataset.n_queries, m.judged_rank)) for m in members]
        if depth is not None
        else []
    )
    cases = []
    for q in dataset.evaluated:
        rank = int(first[q])
        if 0 < rank <= threshold:
            continue
        text = dataset.query_texts[q]
        top = ranking.top_ids(dataset, q, 1)
        first_id = top[0] if top else None
        first_idx = dataset.doc_index.get(first_id) if first_id is not None else None
        first_words = shared_words(text, dataset.doc_texts[first_idx], analysis) if first_idx is not None else ()
        judged = dict(judgements_of(dataset, q))

        def words(did: str, text: str = text) -> tuple[str, ...]:
            j = dataset.doc_index.get(did)
            return shared_words(text, dataset.doc_texts[j], analysis) if j is not None else ()

        relevant = list(dataset.relevant_of(q).items())
        kept = relevant if listed is None else relevant[:listed]
        rel = [(did, grade, words(did)) for did, grade in kept]
        shares = any(w for _, _, w in rel) or any(words(did) for did, _ in relevant[len(kept) :])
        found_by = tuple((name, int(f[q])) for name, f in member_first)
        grade = judged.get(first_id) if first_id is not None else None
        kind = classify(rank, threshold, bool(first_words), shares, any(r > 0 for _, r in found_by), grade is not None)
        cases.append(
            Case(
                ranking.name,
                dataset.query_ids[q],
                text,
                rank,
                first_id,
                first_words,
                tuple(rel),
                kind,
                depth,
                found_by,
                first_grade=grade,
                more_relevant=len(relevant) - len(kept),
            )
        )
    return cases


@dataclass(frozen=True)
class Change:
    """One question that one system (`other`) answers differently from another (`base`) at a threshold."""

    outcome: str  # "fixed": base fails, other succeeds; "broken": base succeeds, other fails
    kind: str  # the failure class of the failing side (base when fixed, other when broken)
    qid: str
    question: str
    base: str  # the systems' names
    other: str
    base_rank: int  # rank of the first relevant document, 0 = not found
    other_rank: int


def changes(
    dataset: Dataset,
    base: Ranking,
    other: Ranking,
    threshold: int = THRESHOLD_DEFAULT,
    analyses: tuple[Analysis, Analysis] = (ARTICLE_ANALYSIS, ARTICLE_ANALYSIS),
) -> list[Change]:
    """What `other` changes relative to `base`, question by question (in the dataset's order).

    Rule: a system succeeds on a question with a relevant document when its first relevant document is at rank
    1 to `threshold` (a rank equal to the threshold succeeds), and fails otherwise, as `diagnose` says. A question
    is **fixed** when base fails and other succeeds, **broken** when base succeeds and other fails, with the
    failure class `diagnose` gives the failing side; a question both succeed or both fail on is not listed.

    Worked example (the invented corpus, threshold 3, base BM25, other dense): BM25 finds nothing relevant
    for q02 "can I get my money back" (a vocabulary gap) and puts export1, which no judgement names, first for q10
    on the word "data" (unjudged at the top); dense ranks a relevant document first for both and fails none, so the
    result is q02 fixed (vocabulary gap, BM25 rank 0, dense rank 1) and q10 fixed (unjudged at the top), nothing broken.
    `analyses`: the text analysis each side's words are read with (its index's: a stemmer's changes).
    """
    base_cases = {c.qid: c for c in diagnose(dataset, base, threshold, analysis=analyses[0])}
    other_cases = {c.qid: c for c in diagnose(dataset, other, threshold, analysis=analyses[1])}
    base_first = first_relevant_rank(dataset.qrels, dataset.n_queries, base.judged_rank)
    other_first = first_relevant_rank(dataset.qrels, dataset.n_queries, other.judged_rank)
    out = []
    for q in dataset.evaluated:
        qid = dataset.query_ids[q]
        failing_base, failing_other = base_cases.get(qid), other_cases.get(qid)
        if (failing_base is None) == (failing_other is None):
            continue
        outcome, failing = ("fixed", failing_base) if failing_base is not None else ("broken", failing_other)
        out.append(
            Change(
                outcome,
                failing.kind,
                qid,
                dataset.query_texts[q],
                base.name,
                other.name,
                int(base_first[q]),
                int(other_first[q]),
            )
        )
    return out


def rank_words(rank: int) -> str:
    """A first relevant rank said in a sentence: "rank 4", or "not found" for 0 (rank_text's; neither system of a change is
    a fusion)."""
    return f"rank {rank}" if rank > 0 else rank_text(rank)


def describe(change: Change) -> str:
    """The plain line of a change: outcome, question id, class, then other's and base's first relevant rank.

    Example: "fixed: q02, vocabulary gap; dense rank 1, BM25 not found"; a broken one reads
    "broken: q05, late rank; dense rank 7, BM25 rank 1" (the class is then the other system's).
    """
    return (
        f"{change.outcome}: {change.qid}, {change.kind}; "
        f"{change.other} {rank_words(change.other_rank)}, {change.base} {rank_words(change.base_rank)}"
    )


@dataclass(frozen=True)
class Failures:
    """A system's failing questions at a threshold, counted by class, and those whose first result no judgement
    names (unjudged), counted by the class they fall in: only a question with nothing relevant in the list whose
    unjudged first result shares a word with it is classed "unjudged at the top"; one with a relevant document
    further down is a late rank whatever its first result, one whose first result shares no word a vocabulary gap."""

    system: str
    threshold: int
    evaluated: int  # questions with a relevant document
    by_class: tuple[tuple[str, int], ...]  # (class, failing questions), in CLASSES order
    unjudged_first: tuple[tuple[str, int], ...]  # (class, failing questions of it whose first result is unjudged)

    @property
    def failing(self) -> int:
        return sum(n for _, n in self.by_class)

    @property
    def unjudged(self) -> int:
        """Failing questions whose first result no judgement names."""
        return sum(n for _, n in self.unjudged_first)


def failures(cases: Sequence[Case], system: str, evaluated: int, threshold: int) -> Failures:
    """`diagnose`'s cases of one system, counted (a fusion's class only when it occurs: it is a fusion's alone)."""
    kinds = [k for k in CLASSES if k != FUSION_CUT or any(c.kind == k for c in cases)]
    unjudged = [c for c in cases if c.first_result is not None and c.first_grade is None]
    return Failures(
        system,
        threshold,
        evaluated,
        tuple((k, sum(c.kind == k for c in cases)) for k in kinds),
        tuple((k, n) for k in kinds if (n := sum(c.kind == k for c in unjudged))),
    )


def failures_sentence(f: Failures) -> str:
    """How many questions a system fails at the threshold, by class, and how many of them have an unjudged first
    result, by the class each is in (so the counts and the classes say the same thing); ids are the caller's.

    >>> f = Failures("BM25", 5, 225, (("vocabulary gap", 3), ("surface homonymy", 0), ("unjudged at the top", 0),
    ...              ("late rank", 27)), (("late rank", 12),))
    >>> print(failures_sentence(f))
    BM25 misses the top 5 on 30 questions out of 225 (3 vocabulary gap, 0 surface homonymy, 0 unjudged at the top, 27 late rank). On 12 of them its first result is a document no judgement names (12 late rank): a question is unjudged at the top only when nothing relevant is in its list and that unjudged first result shares a word with it; one with a relevant document further down is a late rank whatever comes first. Graded relevant, an unjudged first result would put its question at rank 1.
    """
    parts = ", ".join(f"{n:,} {kind}" for kind, n in f.by_class)
    said = (
        f"{f.system} misses the top {f.threshold} on {plural(f.failing, 'question')} out of {f.evaluated:,} ({parts})."
    )
    if not f.unjudged:
        return said
    unjudged = ", ".join(f"{n:,} {kind}" for kind, n in f.unjudged_first)
    said += f" On {f.unjudged:,} of them its first result is a document no judgement names ({unjudged})"
    if all(kind == UNJUDGED for kind, _ in f.unjudged_first):  # the class says it all
        return said + ". Graded relevant, an unjudged first result would put its question at rank 1."
    return (
        said + f": a question is {UNJUDGED} only when nothing relevant is in its list and that unjudged first result "
        "shares a word with it; one with a relevant document further down is a late rank whatever comes first. "
        "Graded relevant, an unjudged first result would put its question at rank 1."
    )


HYPOTHESIS_CLASS = "vocabulary gap"  # the article: BM25 misses q02 on one, a dense retriever would close it


@dataclass(frozen=True)
class Hypothesis:
    """The article's hypothesis (a dense retriever closes BM25's vocabulary gap) read from the changes of `other`
    against `base` at a threshold: how many of base's failures of the class other fixes, and how many of the
    questions base answers in its top k other breaks."""

    base: str
    other: str
    threshold: int
    failing: int  # base's failures of the class
    fixed: int  # of those, fixed by other
    broken: int  # questions base answers in its top k and other fails
    answered: int  # questions base answers in its top k
    kind: str = HYPOTHESIS_CLASS

    @property
    def holds(self) -> str:
        """'holds', 'holds in part', 'does not hold', or 'not tested' (base fails none of the class)."""
        if not self.failing:
            return "not tested"
        return "holds" if self.fixed == self.failing else "holds in part" if self.fixed else "does not hold"

    @property
    def sentence(self) -> str:
        """The verdict in one plain sentence."""
        tail = (
            f"breaks {self.broken} of the {plural(self.answered, 'question')} {self.base} answers in its top "
            f"{self.threshold}."
        )
        if not self.failing:
            return (
                f"Nothing to answer here: {self.base} fails no question on a {self.kind} at k = {self.threshold}, "
                f"so the hypothesis is not tested on this data; {self.other} {tail}"
            )
        return (
            f"The article's hypothesis (a dense retriever closes {self.base}'s {self.kind}) {self.holds} on this "
            f"data: {self.other} fixes {self.fixed} of the "
            f"{plural(self.failing, self.kind.replace(' ', '-') + ' question')} {self.base} fails at k = "
            f"{self.threshold}, and it {tail}"
        )


def hypothesis(
    found: Sequence[Change], base_cases: Sequence[Case], n_evaluated: int, threshold: int, base: str, other: str
) -> Hypothesis:
    """`Hypothesis` from `changes(base, other)` and base's failing questions (`diagnose`) over the evaluated ones."""
    return Hypothesis(
        base,
        other,
        int(threshold),
        sum(c.kind == HYPOTHESIS_CLASS for c in base_cases),
        sum(c.outcome == "fixed" and c.kind == HYPOTHESIS_CLASS for c in found),
        sum(c.outcome == "broken" for c in found),
        int(n_evaluated) - len(base_cases),
    )
