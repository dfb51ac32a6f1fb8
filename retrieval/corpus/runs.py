"""Run files: an external system's ranked lists, read in one streamed pass into arrays.

A run is what an engine (Elasticsearch, OpenSearch, Pyserini, ...) exports: per question, documents with a score.
Four shapes are read, by the same parser and with the same errors, each naming the file and the line (a Parquet
file's row): TREC (`qid Q0 docid rank score tag`, plain or gzipped), ranx/ir_measures JSON
(`{"qid": {"docid": score, ...}, ...}`) and Parquet (columns qid, docid, score).

How the TREC text is read at engine scale (7M lines): a piece of about a MiB of whole lines at a time is split by
`bytes.split` in C; each line's field count is checked for the whole piece at once with numpy (one `bincount` of
the fields' starts over the lines); ids are interned once (one dict `setdefault` per line, in C through `map`);
scores are parsed by `float` through `map` and checked as a block (`np.isfinite`). A piece that is not plain ASCII,
or that fails any check, is read again line by line, and the line-by-line reader names the bad line exactly as
before. Memory: the arrays (20 bytes a line), the distinct ids, and one piece.

The ranking rule: score descending, ties by document id ascending (the article's and the built-in systems' rule,
`TIES_DEFAULT`), or `trec_eval`'s: ties by document id descending, as trec_eval and pytrec_eval order them. The rank
column is ignored, as trec_eval ignores it. A document listed twice for one question is an error.

Over 500 lines because it is one concept, the run as read: the run itself (`TrecRun`, its tie rules), the block and
line readers of TREC text that must name the same lines, and the JSON and Parquet readers that feed the same
`_Lines` and so raise the same errors. The JSON and Parquet readers (about 150 lines) are the part to move out if
it grows.
"""

from __future__ import annotations

import hashlib
import io
import itertools
import json
import re
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path, PurePosixPath

import numpy as np

from ..core.errors import InputError
from .files import read_file
from .formats.lines import Data, _newline_pieces, _short
from .formats.trec import _fields

TIES = ("docid-asc", "trec_eval")  # the rules a run's tied scores are ranked by (`--ties`)
TIES_DEFAULT = "docid-asc"
_RUN_FORMAT = "expected 'qid Q0 docid rank score tag'"
# bytes that `str.splitlines` breaks a line at, or `str.split` splits on, other than what `bytes.split` knows:
# a piece holding one is read line by line, so that lines are numbered and split as the text reader does
_ODD_BYTES = (b"\x0b", b"\x0c", b"\x1c", b"\x1d", b"\x1e", b"\x1f")  # and a carriage return not before \n
_SPACE = np.zeros(256, dtype=bool)
_SPACE[[9, 10, 13, 32]] = True


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


# ------------------------------------------------------------------------------------------------ reading


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


def _trec_lines(text: str, first: int, out: _Lines) -> None:
    """A piece of TREC run text read line by line (the reference reader, and where each error is found)."""
    qids, dids, scores, lines, texts = [], [], [], [], []
    source = out.source
    for n, raw in enumerate(text.splitlines(), first):
        parts = _fields(raw, source, n)
        if not parts:
            continue
        if len(parts) != 6:
            raise InputError(f"{source}:{n}: {_RUN_FORMAT}, found {len(parts)} fields")
        qid, _, did, rank, score, tag = parts
        try:
            int(rank)
        except ValueError:
            raise InputError(f"{source}:{n}: the rank {_short(rank)} is not an integer") from None
        try:
            s = float(score)
        except ValueError:
            raise InputError(f"{source}:{n}: the score {_short(score)} is not a number") from None
        qids.append(qid.encode())
        dids.append(did.encode())
        scores.append(s)
        lines.append(n)
        texts.append(score)
        out.tags.add(tag.encode())
    if qids:
        out.add(qids, dids, np.array(scores, dtype=np.float64), np.array(lines), texts)


def _plain(piece: bytes) -> bool:
    """Whether a piece is ASCII with no byte that `str.splitlines` or `str.split` reads otherwise than a newline-
    and-whitespace split of bytes does (a lone carriage return, \\v, \\f, \\x1c-\\x1f): then its lines are its
    newlines and its fields `bytes.split`'s. A few scans in C, no regular expression."""
    if not piece.isascii() or any(b in piece for b in _ODD_BYTES):
        return False
    return b"\r" not in piece or piece.count(b"\r") == piece.count(b"\r\n")


def _trec_piece(piece: bytes, first: int, out: _Lines) -> bool:
    """A piece of plain ASCII TREC lines read as a block; False when it must be read line by line instead."""
    if not _plain(piece):
        return False
    raw = np.frombuffer(piece, dtype=np.uint8)
    space = _SPACE[raw]
    starts = ~space
    starts[1:] &= space[:-1]
    newlines = np.flatnonzero(raw == 10)
    n_lines = newlines.size + (0 if piece.endswith(b"\n") else 1)
    fields = np.bincount(np.searchsorted(newlines, np.flatnonzero(starts)), minlength=n_lines)
    if np.any((fields != 0) & (fields != 6)):
        return False
    if b"\t" in piece and not _tabs_plain(raw, newlines, fields):
        return False
    toks = piece.split()
    ranks = toks[3::6]
    if not b"".join(ranks).isdigit():
        return False
    texts = toks[4::6]
    try:
        scores = np.fromiter(map(float, texts), dtype=np.float64, count=len(texts))
    except ValueError:
        return False
    lines = np.flatnonzero(fields) + first
    finite = np.isfinite(scores)
    if not finite.all():  # named here with its text as written
        i = int(np.argmin(finite))
        raise InputError(f"{out.source}:{int(lines[i])}: the score {texts[i].decode()!r} is not a finite number")
    tags = toks[5::6]
    if tags.count(tags[0]) == len(tags):  # one tag throughout, as an engine writes it: compared in C
        out.tags.add(tags[0])
    else:
        out.tags.update(tags)
    out.add(toks[0::6], toks[2::6], scores, lines, texts)
    return True


def _tabs_plain(raw: np.ndarray, newlines: np.ndarray, fields: np.ndarray) -> bool:
    """Whether every line holding a tab has its six fields each between single tabs (no space inside a field:
    the tab check of `_fields` passes), so the block reader may read it."""
    per_line = np.bincount(np.searchsorted(newlines, np.flatnonzero(raw == 9)), minlength=fields.size)
    spaces = np.bincount(np.searchsorted(newlines, np.flatnonzero(raw == 32)), minlength=fields.size)
    has = per_line > 0
    return bool(np.all(per_line[has] == 5) and np.all(spaces[has] == 0))


def _chunks(data: Data) -> Iterator[bytes]:
    """The bytes of `data` in chunks (whole, or as they come)."""
    if isinstance(data, (bytes, bytearray, memoryview)):
        yield bytes(data) if not isinstance(data, bytes) else data
    else:
        yield from data


def _gunzipped(data: Data, source: str) -> Iterator[bytes]:
    """A gzip stream's bytes decompressed a chunk at a time (memory: one chunk), or an error naming the file."""
    z = zlib.decompressobj(wbits=31)
    try:
        for chunk in _chunks(data):
            for i in range(0, len(chunk), 1 << 20):
                out = z.decompress(chunk[i : i + (1 << 20)], 1 << 22)
                yield out
                while z.unconsumed_tail:
                    yield z.decompress(z.unconsumed_tail, 1 << 22)
        if not z.eof:
            raise InputError(f"{source}: the gzip stream is cut short (the file is damaged or incomplete)")
    except zlib.error as e:
        raise InputError(f"{source}: not a readable gzip file ({e})") from None


def _peek(chunks: Iterator[bytes]) -> tuple[bytes, Iterator[bytes]]:
    """The first non-empty chunk and the stream with it put back."""
    for chunk in chunks:
        if chunk:
            return chunk, itertools.chain([chunk], chunks)
    return b"", iter(())


def parse_run(data: Data, source: str, name: str | None = None, ties: str = TIES_DEFAULT) -> TrecRun:
    """A run file's bytes (whole or in chunks) as a ranked run: TREC text, plain or gzipped, a JSON object of
    questions (`{"qid": {"docid": score}}`, as ranx and ir_measures write) or Parquet. The format is told by the
    content, not the name. Its name is `name`, else the one tag of a TREC file, else the file's stem."""
    check_ties(ties)
    head, chunks = _peek(_chunks(data))
    if head[:4] == b"PAR1":  # a Parquet file (an upload): read from memory
        return parse_parquet_run(io.BytesIO(b"".join(chunks)), source, name, ties)
    if head[:2] == b"\x1f\x8b":
        head, chunks = _peek(_gunzipped(chunks, source))
    if head.removeprefix(b"\xef\xbb\xbf").lstrip()[:1] in (b"{", b"["):
        return _json_run(b"".join(chunks), source, name, ties)
    out = _Lines(source)
    first = 1
    for piece in _newline_pieces(chunks):
        piece = bytes(piece)
        if first == 1 and piece[:3] == b"\xef\xbb\xbf":
            piece = piece[3:]
        if not _trec_piece(piece, first, out):
            for text in _text_of(piece, source, first):
                _trec_lines(text, first, out)
        first += _count_lines(piece)
    return out.run(name, ties)


def _text_of(piece: bytes, source: str, first: int) -> Iterator[str]:
    """A piece as text (UTF-8), an error naming the line of a byte that is not."""
    try:
        yield piece.decode("utf-8")
    except UnicodeDecodeError as e:
        at = first + piece[: e.start].count(b"\n")
        raise InputError(f"{source}:{at}: not UTF-8 text ({e.reason})") from None


def _count_lines(piece: bytes) -> int:
    """How many lines `str.splitlines` counts in a piece of whole lines (a plain ASCII piece: its newlines)."""
    if _plain(piece):
        return piece.count(b"\n") + (0 if piece.endswith(b"\n") or not piece else 1)
    return len(piece.decode("utf-8", errors="replace").splitlines())


# ------------------------------------------------------------------------------------------- JSON runs


class _Pairs(list):
    """A JSON object as its (key, value) pairs in order (a repeated key kept, to be named)."""


def _json_run(data: bytes, source: str, name: str | None, ties: str) -> TrecRun:
    """A ranx/ir_measures JSON run: an object of question ids, each an object of document id: score. An error
    names the line of the value (or of the repeated key) at fault."""
    text = _decoded(data, source)
    try:
        top = json.loads(text, object_pairs_hook=_Pairs)
    except json.JSONDecodeError as e:
        raise InputError(f"{source}:{e.lineno}: not valid JSON ({e.msg})") from None
    shape = "expected a JSON object of question ids, each an object of document id: score"
    if not isinstance(top, _Pairs):
        raise InputError(f"{source}:1: {shape}")
    out = _Lines(source)
    seen_q: set[str] = set()
    for qid, docs in top:
        at = _line_of(text, qid)
        if qid in seen_q:
            raise InputError(f"{source}:{at}: question {qid!r} is listed twice")
        seen_q.add(qid)
        if not isinstance(docs, _Pairs):
            raise InputError(f"{source}:{at}: question {qid!r}: {shape}")
        _check_word(qid, "question", source, at)
        qids, dids, scores, texts = [], [], [], []
        for did, value in docs:
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                line = _line_of(text, did, after=qid)
                raise InputError(f"{source}:{line}: the score {_short(json.dumps(value))} is not a number")
            qids.append(qid.encode())
            dids.append(did.encode())
            scores.append(float(value))
            texts.append(repr(value))
        for did in dids:
            _check_word(did.decode(), "document", source, at)
        if qids:
            arr = np.array(scores, dtype=np.float64)
            if not np.isfinite(arr).all():
                i = int(np.argmin(np.isfinite(arr)))
                line = _line_of(text, dids[i].decode(), after=qid)
                raise InputError(f"{source}:{line}: the score {texts[i]!r} is not a finite number")
            lines = np.array([at] * len(qids))
            out.add(qids, dids, arr, lines, texts)
        dup = len({d for d in dids}) != len(dids)
        if dup:
            twice = next(d for i, d in enumerate(dids) if d in dids[:i]).decode()
            raise InputError(
                f"{source}:{_line_of(text, twice, after=qid, nth=2)}: document {twice!r} is listed twice for "
                f"question {qid!r}"
            )
    if not out.parts[0]:
        raise InputError(f"{source}:1: the run file holds no line")
    return out.run(name or PurePosixPath(source).stem, ties)


def _decoded(data: bytes, source: str) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise InputError(f"{source}:{line}: not UTF-8 text ({e.reason})") from None


def _check_word(rid: str, what: str, source: str, line: int) -> None:
    if rid.split() != [rid]:
        raise InputError(
            f"{source}:{line}: the {what} id {_short(rid)} is not a single word (ids are single words, as in TREC files)"
        )


def _line_of(text: str, key: str, after: str | None = None, nth: int = 1) -> int:
    """The line of the `nth` key `key` in a JSON text (after the key `after`, a question's, when given)."""
    start = 0
    if after is not None:
        m = re.search(re.escape(json.dumps(after)) + r"\s*:", text)
        start = m.start() if m else 0
    pos = start
    for _ in range(nth):
        m = re.compile(re.escape(json.dumps(key)) + r"\s*:").search(text, pos)
        if m is None:
            break
        pos = m.end()
        found = m.start()
    else:
        return text.count("\n", 0, found) + 1
    return text.count("\n", 0, start) + 1


# --------------------------------------------------------------------------------------------- Parquet runs

_COLUMNS = (("qid", "q_id", "query_id"), ("docid", "doc_id", "docno"), ("score",))


def parse_parquet_run(
    path: Path | io.BytesIO, source: str, name: str | None = None, ties: str = TIES_DEFAULT
) -> TrecRun:
    """A Parquet run (columns qid, docid, score; or ranx's q_id, doc_id, score), read a row group at a time; an
    error names the row (the first data row is 1) as a text file's line."""
    import pyarrow as pa  # only a Parquet run needs pyarrow (a dependency of pandas)
    import pyarrow.parquet as pq

    try:
        f = pq.ParquetFile(path)
    except (pa.ArrowException, OSError) as e:
        raise InputError(f"{source}: not a readable Parquet file ({e})") from None
    names = f.schema_arrow.names
    cols = []
    for choices in _COLUMNS:
        found = next((c for c in choices if c in names), None)
        if found is None:
            raise InputError(
                f"{source}: no column {' or '.join(choices)} (a Parquet run has columns qid, docid, score; "
                f"found {', '.join(names)})"
            )
        cols.append(found)
    out = _Lines(source)
    row = 1
    try:
        for batch in f.iter_batches(columns=cols, batch_size=1 << 16):
            q, d, s = (batch.column(i) for i in range(3))
            n = batch.num_rows
            lines = np.arange(row, row + n)
            for col, what in ((q, "question id"), (d, "document id"), (s, "score")):
                if col.null_count:
                    at = int(np.argmax(col.is_null().to_numpy(zero_copy_only=False)))
                    raise InputError(f"{source}:{row + at}: the {what} is empty (null)")
            if not pa.types.is_floating(s.type) and not pa.types.is_integer(s.type):
                raise InputError(f"{source}:{row}: the score column holds {s.type}, not numbers")
            qs = [str(x).encode() for x in q.to_pylist()]
            ds = [str(x).encode() for x in d.to_pylist()]
            for ids, what in ((qs, "question"), (ds, "document")):
                bad = next((i for i, x in enumerate(ids) if x.split() != [x]), None)
                if bad is not None:
                    _check_word(ids[bad].decode(), what, source, row + bad)
            scores = s.to_numpy(zero_copy_only=False).astype(np.float64)
            out.add(qs, ds, scores, lines, [repr(x) for x in scores.tolist()] if not np.isfinite(scores).all() else [])
            row += n
    except pa.ArrowException as e:
        raise InputError(f"{source}: not a readable Parquet file ({e})") from None
    return out.run(name or PurePosixPath(source).stem, ties)


def read_run(path: str | Path, name: str | None = None, ties: str = TIES_DEFAULT) -> TrecRun:
    """A run file read from disk: Parquet by its `.parquet` suffix, else TREC (plain or gzipped) or JSON by its
    content, streamed; its name is `name`, else the file's tag, else its stem."""
    path = Path(path)
    if path.suffix.lower() in (".parquet", ".pq"):
        read_file_checked(path)
        return parse_parquet_run(path, str(path), name, ties)
    return parse_run(_file_chunks(path), str(path), name, ties)


def read_file_checked(path: Path) -> None:
    """The checks `read_file` makes (a regular, readable file), without reading it whole."""
    if not path.exists():
        raise InputError(f"{path}: no such file")
    if not path.is_file():
        read_file(path)  # says what it is instead


def _file_chunks(path: Path) -> Iterator[bytes]:
    """A regular file's bytes a chunk at a time, or one error naming it (as `read_file`)."""
    read_file_checked(path)
    try:
        with open(path, "rb") as f:
            while chunk := f.read(1 << 22):
                yield chunk
    except OSError as e:
        raise InputError(f"{path}: cannot be read ({e.strerror})") from None


__all__ = [
    "TIES",
    "TIES_DEFAULT",
    "DocNames",
    "TrecRun",
    "check_ties",
    "parse_parquet_run",
    "parse_run",
    "read_run",
]
