"""ranx/ir_measures JSON runs (`{"qid": {"docid": score, ...}, ...}`), read into the same arrays as a TREC run and
refused with the same errors, each naming the line of the value (or of the repeated key) at fault."""

from __future__ import annotations

import json
import re
from pathlib import PurePosixPath

import numpy as np

from ...core.errors import InputError
from ..run_model import TrecRun, _Lines
from .lines import _short


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
