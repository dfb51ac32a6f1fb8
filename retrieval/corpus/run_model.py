"""A run as read: an external system's ranked lists as arrays (`TrecRun`), the tie rules it is ranked by, and
`Lines`, the arrays a reader fills (ids interned once) before they become a run. The readers are `runs.py` (TREC text,
the dispatch) and `formats/run_json.py`, `formats/run_parquet.py`."""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import PurePosixPath

import numpy as np

from ..core.errors import InputError

TIES = ("docid-asc", "trec_eval")  # the rules a run's tied scores are ranked by (`--ties`)
TIES_DEFAULT = "docid-asc"


def check_ties(value: str) -> str:
    """A tie rule's name, or an error naming the choices."""
    if value not in TIES:
        raise InputError(f"ties must be one of {', '.join(TIES)}, got {value!r}")
    return value


class DocNames(Sequence):
    """A run's document ids per question, as written (`Ranking.doc_names`), made from its arrays when read: the
    ids of question q are `names[q]`, a tuple."""

    def __init__(self, vocab: tuple[str, ...], indptr: np.ndarray, doc: np.ndarray):
        self._vocab, self._indptr, self._doc = vocab, indptr, doc

    def __len__(self) -> int:
        return self._indptr.size - 1

    def __getitem__(self, q):
        if isinstance(q, slice):
            return [self[i] for i in range(*q.indices(len(self)))]
        if not -len(self) <= q < len(self):
            raise IndexError(q)
        q = q % len(self)
        v = self._vocab
        return tuple(v[c] for c in self._doc[self._indptr[q] : self._indptr[q + 1]].tolist())

    def __eq__(self, other) -> bool:
        """Equal to the same lists as a tuple of tuples (or another DocNames)."""
        if not isinstance(other, (tuple, list, DocNames)):
            return NotImplemented
        return len(self) == len(other) and all(tuple(a) == tuple(b) for a, b in zip(self, other))

    __hash__ = None  # type: ignore[assignment]


@dataclass(frozen=True, eq=False)
class TrecRun:
    """An external system's ranking: per question (in the file's order of first appearance) its documents ranked
    by score, descending, ties by `ties`; laid end to end (`indptr`), each document a code into `vocab`."""

    name: str
    query_ids: tuple[str, ...]
    indptr: np.ndarray  # int64, len(query_ids) + 1
    doc: np.ndarray  # int32 codes into vocab, question by question, ranked (4 bytes a line: 70M lines in 280 MB)
    score: np.ndarray  # float64, aligned with doc
    vocab: tuple[str, ...]  # the distinct document ids
    warnings: tuple[str, ...] = ()
    ties: str = TIES_DEFAULT
    table: dict | None = field(default=None, repr=False)  # the parse's id -> code (bytes keys), for `codes_of`
    remap: np.ndarray | None = field(default=None, repr=False)  # ... and its codes as `doc`'s

    def codes_of(self, ids: list[str]) -> np.ndarray:
        """Each id's code in `vocab`, -1 for an id the run does not name: looked up in the parse's own table (no
        table is built over the run's ids), else in one made from `vocab`."""
        if self.table is not None and self.remap is not None:
            raw = np.fromiter((self.table.get(i.encode(), -1) for i in ids), dtype=np.int64, count=len(ids))
            return np.where(raw >= 0, self.remap[np.maximum(raw, 0)], -1)
        index = {d: c for c, d in enumerate(self.vocab)}
        return np.fromiter((index.get(i, -1) for i in ids), dtype=np.int64, count=len(ids))

    @classmethod
    def from_lists(
        cls, name: str, query_ids, doc_ids, scores, warnings: tuple[str, ...] = (), ties: str = TIES_DEFAULT
    ) -> TrecRun:
        """A run from per-question documents and scores, ranked here (score descending, ties by `ties`)."""
        table: dict[str, int] = {}
        codes = [table.setdefault(d, len(table)) for ds in doc_ids for d in ds]
        lens = np.array([len(ds) for ds in doc_ids], dtype=np.int64)
        q = np.repeat(np.arange(lens.size), lens)
        flat = np.concatenate([np.asarray(s, dtype=np.float64) for s in scores]) if len(scores) else np.zeros(0)
        vocab = tuple(table)
        order = _ranked(q, flat, np.array(codes, dtype=np.int64), vocab, ties)
        order = np.arange(flat.size) if order is None else order
        return cls(
            name,
            tuple(query_ids),
            np.concatenate(([0], np.cumsum(lens))).astype(np.int64),
            np.array(codes, dtype=np.int32)[order],
            flat[order],
            vocab,
            tuple(warnings),
            ties,
        )

    @property
    def n_lines(self) -> int:
        """How many (question, document) lines the run holds."""
        return int(self.doc.size)

    @cached_property
    def doc_ids(self) -> DocNames:
        """Per question, its ranked document ids (`names[q]` is a tuple)."""
        return DocNames(self.vocab, self.indptr, self.doc)

    @property
    def scores(self) -> tuple[np.ndarray, ...]:
        """Per question, its scores in rank order (views of `score`)."""
        return tuple(self.score[a:b] for a, b in zip(self.indptr[:-1].tolist(), self.indptr[1:].tolist()))

    @cached_property
    def tied_questions(self) -> int:
        """How many questions hold two documents with the same score (their order is the tie rule's)."""
        same = np.zeros(self.doc.size, dtype=bool)
        if self.doc.size > 1:
            same[1:] = self.score[1:] == self.score[:-1]
        same[self.indptr[:-1]] = False  # a question's first document ties with none before it
        return int(np.count_nonzero(np.add.reduceat(same, self.indptr[:-1]) if same.size else 0))

    @cached_property
    def fingerprint(self) -> str:
        """A hash of the whole content (name, questions, documents in order, every score): the key caches use."""
        h = hashlib.sha256()
        h.update(json.dumps([self.name, self.ties, list(self.query_ids)]).encode())
        h.update("\x1f".join(self.vocab).encode())
        for a in (self.indptr.astype(np.int64), self.doc.astype(np.int64), self.score.astype(np.float64)):
            h.update(np.ascontiguousarray(a).tobytes())
            h.update(b"\x1e")
        return h.hexdigest()[:32]


def _ranked(q: np.ndarray, score: np.ndarray, code: np.ndarray, vocab: Sequence[str], ties: str) -> np.ndarray | None:
    """The positions of lines (question q, score, document code) in ranking order: question by question (q
    ascending), score descending, ties by document id ascending (`docid-asc`) or descending (`trec_eval`); None
    when that is the file's own order. A file already in that order, as engines write them, costs a few
    comparisons a line and no sort."""
    n = q.size
    order = None
    if n > 1:
        same = q[1:] == q[:-1]
        if np.any(q[1:] < q[:-1]) or np.any(same & (score[1:] > score[:-1])):
            order = np.lexsort((-score, q))  # stable: tied lines keep the file's order, put right below
    qs, ss = (q, score) if order is None else (q[order], score[order])
    tie = np.zeros(n, dtype=bool)
    if n > 1:
        tie[1:] = (qs[1:] == qs[:-1]) & (ss[1:] == ss[:-1])
    if not tie.any():
        return order
    if order is None:
        order = np.arange(n)
    member = tie.copy()
    member[:-1] |= tie[1:]  # a tie group: its first line and every line tied with the one before
    at = np.flatnonzero(member)
    group = np.cumsum(~tie[at])
    ids = np.array([vocab[c] for c in code[order[at]].tolist()])
    inner = np.lexsort((ids, group))  # by group, then id ascending
    if ties == "trec_eval":  # id descending within each group: each group's slice reversed
        starts = np.flatnonzero(np.diff(np.concatenate(([0], group[inner]))))
        bounds = np.concatenate((starts, [at.size]))
        lens = np.diff(bounds)
        pos = np.arange(at.size)
        first = np.repeat(bounds[:-1], lens)
        inner = inner[first + (first + np.repeat(lens, lens) - 1 - pos)]
    order[at] = order[at][inner]
    return order


class _Lines:
    """What the pieces of a run add up to: per line its question and document (codes from count(), the same id
    the same code), score and line number, and the tags seen."""

    def __init__(self, source: str):
        self.source = source
        self.qtable: dict[bytes, int] = {}
        self.dtable: dict[bytes, int] = {}
        self.qcount, self.dcount = itertools.count(), itertools.count()
        self.parts: tuple[list[np.ndarray], ...] = ([], [], [], [])  # question, document, score, line blocks
        self.tags: set[bytes] = set()

    def add(self, qids: list, dids: list, scores: np.ndarray, lines: np.ndarray, texts: list) -> None:
        """One block of lines: the ids as bytes, the scores (checked finite here: the first that is not is named
        with its line and its text, `texts[i]`)."""
        finite = np.isfinite(scores)
        if not finite.all():
            i = int(np.argmin(finite))
            raise InputError(f"{self.source}:{int(lines[i])}: the score {texts[i]!r} is not a finite number")
        n = len(qids)
        q = self._questions(qids)
        d = np.fromiter(map(self.dtable.setdefault, dids, self.dcount), dtype=np.int32, count=n)
        for part, block in zip(self.parts, (q, d, scores, lines.astype(np.int32))):
            part.append(block)

    def _questions(self, qids: list) -> np.ndarray:
        """The question codes of a block's lines: a question's lines come together in engines' files, so each
        stretch of one id (found by `itertools.groupby`, in C) is looked up once."""
        keys, lens = [], []
        for key, group in itertools.groupby(qids):
            keys.append(self.qtable.setdefault(key, next(self.qcount)))
            lens.append(len(list(group)))
        return np.repeat(np.array(keys, dtype=np.int32), lens)

    def run(self, name: str | None, ties: str) -> TrecRun:
        """The lines as a ranked run (after the duplicate check); `name` else the one tag, else the file's stem."""
        if not self.parts[0]:
            raise InputError(f"{self.source}:1: the run file holds no line")
        q, d, s, line = (_joined(part) for part in self.parts)  # each list emptied as it is joined: memory x1
        q = _remap(self.qtable.values())[q]
        remap = _remap(self.dtable.values())
        d = remap[d]
        key = q.astype(np.int64) * (len(self.dtable) + 1) + d
        ordered = np.sort(key)
        if ordered.size > 1 and np.any(ordered[1:] == ordered[:-1]):
            self._twice(key, line)
        vocab = tuple(map(bytes.decode, self.dtable))
        query_ids = tuple(map(bytes.decode, self.qtable))
        del key, ordered
        order = _ranked(q, s, d, vocab, ties)
        if order is not None:
            d, s = d[order], s[order]
        counts = np.bincount(q, minlength=len(query_ids))
        if name is None:
            name = next(iter(self.tags)).decode() if len(self.tags) == 1 else PurePosixPath(self.source).stem
        indptr = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
        return TrecRun(name, query_ids, indptr, d, s, vocab, (), ties, self.dtable, remap)

    def _twice(self, key: np.ndarray, line: np.ndarray) -> None:
        """The error naming the first line that repeats a (question, document) pair."""
        order = np.argsort(key, kind="stable")
        k = key[order]
        again = order[1:][k[1:] == k[:-1]]
        i = int(again[np.argmin(line[again])])
        vocab_d, vocab_q = list(self.dtable), list(self.qtable)
        qi, di = divmod(int(key[i]), len(self.dtable) + 1)
        raise InputError(
            f"{self.source}:{int(line[i])}: document {vocab_d[di].decode()!r} is listed twice for question "
            f"{vocab_q[qi].decode()!r}"
        )


def _joined(blocks: list[np.ndarray]) -> np.ndarray:
    """The blocks laid end to end, the list emptied (its blocks freed as soon as the whole is made)."""
    out = np.concatenate(blocks)
    blocks.clear()
    return out


def _remap(values) -> np.ndarray:
    """Codes handed out by count() (some skipped) -> 0..n-1 in the order first seen, as an array indexed by code."""
    got = np.fromiter(values, dtype=np.int64)
    remap = np.zeros(int(got.max()) + 1 if got.size else 1, dtype=np.int32)
    remap[got] = np.arange(got.size)
    return remap
