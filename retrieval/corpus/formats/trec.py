"""Judgements: TREC qrels (`qid 0 docid grade`) or a BEIR tsv (`query-id corpus-id score`), and the fields of a
whitespace-separated TREC line (a run's too)."""

from __future__ import annotations

from ...core.errors import InputError
from ..limits import MAX_GRADE
from .lines import Data, _short, text_lines


def _fields(raw: str, source: str, line: int) -> list[str]:
    """The whitespace-separated fields of a qrels or run line; a tab-separated line whose field holds a space is an
    error (its id could never be judged, and splitting on the space would shift every column)."""
    parts = raw.split()
    if "\t" in raw:
        tabbed = raw.strip().split("\t")
        if len(tabbed) in (3, 4, 6) and len(tabbed) != len(parts):
            bad = next((f.strip() for f in tabbed if f.strip().split() != [f.strip()]), "")
            raise InputError(
                f"{source}:{line}: the field {_short(bad)} holds whitespace (ids are single words, as in TREC files)"
            )
    return parts


def parse_qrels(data: Data, source: str) -> list[tuple[str, str, int]]:
    """(question, document, grade) from TREC qrels (`qid 0 docid grade`) or a BEIR tsv (`query-id corpus-id score`)."""
    out = []
    for n, raw in text_lines(data, source):
        parts = _fields(raw, source, n)
        if not parts:
            continue
        if n == 1 and [p.lower() for p in parts[:2]] == ["query-id", "corpus-id"]:
            continue  # BEIR header
        if len(parts) == 4:
            qid, _, did, grade = parts
        elif len(parts) == 3:
            qid, did, grade = parts
        else:
            raise InputError(
                f"{source}:{n}: expected 'qid 0 docid grade' (TREC) or 'query-id corpus-id score' (BEIR), "
                f"found {len(parts)} fields"
            )
        try:
            g = int(grade)
        except ValueError:
            raise InputError(f"{source}:{n}: the grade {_short(grade)} is not an integer") from None
        if abs(g) > MAX_GRADE:
            raise InputError(f"{source}:{n}: the grade {_short(grade)} is beyond the limit of +-{MAX_GRADE}")
        out.append((qid, did, g))
    return out
