"""The data model: a collection's documents, questions and graded judgements (`Dataset`, its `Qrels`), assembled
from parsed records by `assemble`, which checks them as a whole (ids unique, grades in bounds, unknown ids counted)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from functools import cached_property

import numpy as np

from ..core.errors import InputError
from ..core.words import agree, plural
from .formats.lines import _plain_ids, _short
from .limits import MAX_GRADE

DOCUMENT_VALUES = ("doc_index", "tie_key")  # what a dataset's document ids alone decide (Dataset.lend)


def valid_grade(grade) -> bool:
    """The one rule of a judgement's grade: a whole number (not a bool) within +-MAX_GRADE."""
    return not isinstance(grade, bool) and isinstance(grade, (int, np.integer)) and abs(int(grade)) <= MAX_GRADE


@dataclass(frozen=True, eq=False)
class Qrels:
    """Graded judgements as parallel arrays, sorted by question; a grade of 0 or less is judged not relevant."""

    query: np.ndarray  # question index, int64
    doc: np.ndarray  # document index, int64; -1 for a document that is not in the corpus
    doc_id: np.ndarray  # document id strings (object)
    grade: np.ndarray  # int64

    def __len__(self) -> int:
        return int(self.query.size)

    @property
    def relevant(self) -> np.ndarray:
        """Mask of the judgements with a positive grade."""
        return self.grade > 0


@dataclass(frozen=True, eq=False)
class Dataset:
    """Documents, questions and judgements of one collection, with the warnings raised while loading it."""

    name: str
    doc_ids: tuple[str, ...]
    doc_texts: tuple[str, ...]
    query_ids: tuple[str, ...]
    query_texts: tuple[str, ...]
    qrels: Qrels
    warnings: tuple[str, ...] = field(default=())

    @property
    def n_docs(self) -> int:
        """Number of documents."""
        return len(self.doc_ids)

    @property
    def n_queries(self) -> int:
        """Number of questions."""
        return len(self.query_ids)

    @cached_property
    def doc_index(self) -> dict[str, int]:
        """Document id -> position."""
        return {d: i for i, d in enumerate(self.doc_ids)}

    @cached_property
    def query_index(self) -> dict[str, int]:
        """Question id -> position."""
        return {q: i for i, q in enumerate(self.query_ids)}

    @cached_property
    def tie_key(self) -> np.ndarray:
        """Each document's position in ascending id order: ties in score are broken by this key."""
        order = np.argsort(np.array(self.doc_ids, dtype=object), kind="stable")
        key = np.empty(len(order), dtype=np.int64)
        key[order] = np.arange(len(order))
        return key

    @cached_property
    def n_relevant(self) -> np.ndarray:
        """Relevant documents per question."""
        rel = self.qrels.relevant
        return np.bincount(self.qrels.query[rel], minlength=self.n_queries)

    @cached_property
    def evaluated(self) -> np.ndarray:
        """Indices of the questions with at least one relevant document: the ones every mean is over."""
        return np.flatnonzero(self.n_relevant > 0)

    @cached_property
    def _corpus_hash(self):
        """The hash of the documents and questions (ids and texts), before the judgements are added to it."""
        h = hashlib.sha256()
        for part in (self.doc_ids, self.doc_texts, self.query_ids, self.query_texts):
            h.update("\x1f".join(part).encode())
            h.update(b"\x1e")
        return h

    @cached_property
    def corpus_fingerprint(self) -> str:
        """A hash of the documents and questions (ids and texts), not the judgements: what an index, BM25's
        columns, an LSA fit and dense vectors depend on (datasets differing only in judgements share it)."""
        return self._corpus_hash.copy().hexdigest()[:16]

    @cached_property
    def fingerprint(self) -> str:
        """A hash of the whole content, the key the app caches indexes and results on."""
        h = self._corpus_hash.copy()
        h.update(self.qrels.query.tobytes() + self.qrels.doc_id.astype(str).tobytes() + self.qrels.grade.tobytes())
        return h.hexdigest()[:16]

    def with_judgements(self, judgements: Iterable[tuple[str, str, int]]) -> Dataset:
        """The same documents and questions with `judgements` (question id, document id, grade) added after
        each question's own; nothing else changes (name, warnings).

        A judgement may not overwrite one the dataset holds: grading a pair already judged, naming an unknown
        question or document, judging a pair twice or a grade that is not an integer within +-MAX_GRADE is an
        InputError naming it. What depends on the texts only (the hash of the texts, the id indexes, the tie
        key) is carried over, not recomputed: `corpus_fingerprint` is the same, `fingerprint` differs.
        """
        qr = self.qrels
        judged = set(zip(qr.query.tolist(), qr.doc_id.tolist()))
        rows: list[tuple[int, int, str, int]] = []
        for qid, did, grade in judgements:
            q, d = self.query_index.get(qid), self.doc_index.get(did)
            what = f"{self.name}: the judgement of document {_short(str(did))} for question {_short(str(qid))}"
            if q is None:
                raise InputError(f"{what}: no such question")
            if d is None:
                raise InputError(f"{what}: no such document")
            if not valid_grade(grade):
                raise InputError(f"{what}: the grade {grade!r} is not an integer within +-{MAX_GRADE}")
            if (q, did) in judged:
                raise InputError(f"{what}: the pair is judged already (judgements are added, never overwritten)")
            judged.add((q, did))
            rows.append((q, d, did, int(grade)))
        if not rows:
            return self
        query = np.concatenate((qr.query, np.array([r[0] for r in rows], dtype=np.int64)))
        order = np.argsort(query, kind="stable")  # each question's own judgements first, the new ones after
        new = Qrels(
            query=query[order],
            doc=np.concatenate((qr.doc, np.array([r[1] for r in rows], dtype=np.int64)))[order],
            doc_id=np.concatenate((qr.doc_id, np.array([r[2] for r in rows], dtype=object)))[order],
            grade=np.concatenate((qr.grade, np.array([r[3] for r in rows], dtype=np.int64)))[order],
        )
        return self.lend(
            replace(self, qrels=new), (*DOCUMENT_VALUES, "_corpus_hash", "corpus_fingerprint", "query_index")
        )

    def lend(self, out: Dataset, names: tuple[str, ...] = ()) -> Dataset:
        """`out`, a dataset of the same documents (or texts, for the question-side names), with this one's cached
        values `names` (default DOCUMENT_VALUES) given instead of recomputed: 40 ms of id sorting at 100k documents."""
        for name in names or DOCUMENT_VALUES:
            out.__dict__[name] = getattr(self, name)
        return out

    def renamed(self, name: str) -> Dataset:
        """The same dataset under another name (its fingerprint does not hold the name)."""
        if name == self.name:
            return self
        return self.lend(
            replace(self, name=name),
            (*DOCUMENT_VALUES, "_corpus_hash", "corpus_fingerprint", "query_index", "fingerprint"),
        )

    def judgements(self) -> list[tuple[str, str, int]]:
        """Every judgement as (question id, document id, grade), in the qrels' order."""
        qr = self.qrels
        return [(self.query_ids[q], d, g) for q, d, g in zip(qr.query.tolist(), qr.doc_id.tolist(), qr.grade.tolist())]

    def relevant_of(self, q: int) -> dict[str, int]:
        """The judged documents of question `q` with a positive grade, id -> grade."""
        m = (self.qrels.query == q) & self.qrels.relevant
        return dict(zip(self.qrels.doc_id[m].tolist(), self.qrels.grade[m].tolist()))


def _check_unique(records: list[tuple[str, str]], source: str, what: str) -> None:
    """An error naming the first duplicated id and both of its lines' positions, or the first id holding whitespace."""
    if _plain_ids([rid for rid, _ in records]):
        return
    seen: dict[str, int] = {}
    for i, (rid, _) in enumerate(records, 1):
        if rid in seen:
            raise InputError(f"{source}: duplicate {what} id {rid!r} (records {seen[rid]} and {i})")
        if not isinstance(rid, str) or rid.split() != [rid]:
            raise InputError(
                f"{source}: record {i}: the {what} id {_short(str(rid))} is not a single word "
                "(ids are single words, as in TREC files)"
            )
        seen[rid] = i


def assemble(
    name: str,
    docs: list[tuple[str, str]],
    queries: list[tuple[str, str]],
    judgements: list[tuple[str, str, int]],
    sources: tuple[str, str, str] = ("documents", "questions", "judgements"),
) -> Dataset:
    """A validated Dataset; judgements naming unknown questions are left out and unknown documents kept, both counted in warnings."""
    doc_src, q_src, qrels_src = sources
    if not docs:
        raise InputError(f"{doc_src}: the corpus is empty")
    if not queries:
        raise InputError(f"{q_src}: no question")
    _check_unique(docs, doc_src, "document")
    _check_unique(queries, q_src, "question")
    doc_index = {d: i for i, (d, _) in enumerate(docs)}
    query_index = {q: i for i, (q, _) in enumerate(queries)}
    seen: set[tuple[str, str]] = set()
    rows = []
    unknown_q: dict[str, int] = {}
    unknown_d: dict[str, int] = {}
    for qid, did, grade in judgements:
        if (qid, did) in seen:
            raise InputError(f"{qrels_src}: question {qid!r} judges document {did!r} twice")
        seen.add((qid, did))
        if not valid_grade(grade):
            raise InputError(
                f"{qrels_src}: question {qid!r} grades document {did!r} {grade!r}: "
                f"expected an integer within +-{MAX_GRADE}"
            )
        if qid not in query_index:
            unknown_q[qid] = unknown_q.get(qid, 0) + 1
            continue
        if did not in doc_index:
            unknown_d[did] = unknown_d.get(did, 0) + 1
        rows.append((query_index[qid], doc_index.get(did, -1), did, grade))
    warnings = []
    if unknown_q:
        n = sum(unknown_q.values())
        ex = ", ".join(sorted(unknown_q)[:5])
        m = len(unknown_q)
        warnings.append(
            f"{qrels_src}: {plural(n, 'judgement')} {agree(n, 'names', 'name')} {plural(m, 'question')} that "
            f"{agree(m, 'is', 'are')} not in {q_src} ({ex}); {agree(n, 'it is', 'they are')} left out"
        )
    if unknown_d:
        n = sum(unknown_d.values())
        ex = ", ".join(sorted(unknown_d)[:5])
        m = len(unknown_d)
        warnings.append(
            f"{qrels_src}: {plural(n, 'judgement')} {agree(n, 'names', 'name')} {plural(m, 'document')} that "
            f"{agree(m, 'is', 'are')} not in {doc_src} ({ex}); {agree(n, 'it is', 'they are')} kept: no system can "
            f"retrieve {agree(m, 'it', 'them')}, but {agree(n, 'it counts', 'they count')} in recall and in the ideal DCG"
        )
    if not any(g > 0 for *_, g in rows):
        raise InputError(f"{qrels_src}: no judgement with a positive grade names a known question")
    rows.sort(key=lambda r: r[0])
    qrels = Qrels(
        query=np.array([r[0] for r in rows], dtype=np.int64),
        doc=np.array([r[1] for r in rows], dtype=np.int64),
        doc_id=np.array([r[2] for r in rows], dtype=object),
        grade=np.array([r[3] for r in rows], dtype=np.int64),
    )
    return Dataset(
        name=name,
        doc_ids=tuple(d for d, _ in docs),
        doc_texts=tuple(t for _, t in docs),
        query_ids=tuple(q for q, _ in queries),
        query_texts=tuple(t for _, t in queries),
        qrels=qrels,
        warnings=tuple(warnings),
    )
