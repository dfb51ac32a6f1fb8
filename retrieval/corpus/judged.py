"""Judgements alone as a dataset: what trec_eval, pytrec_eval and ranx need to score an engine's runs, with no
documents or question texts. Its questions are the judged ones, in the order the judgements first name them; it
has no document, so every judgement keeps its document id only (index -1) and a run's documents are matched to the
judgements by id, as trec_eval matches them. What reads text (BM25, LSA, dense, the lexical diagnosis) says it
needs documents (`NEEDS_DOCUMENTS`)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..core.errors import InputError
from .dataset import MAX_GRADE, Dataset, Qrels, parse_qrels, read_file, valid_grade

NEEDS_DOCUMENTS = (
    "needs documents: judgements alone (--qrels) score run files only; give --data (a BEIR folder or .zip) for "
    "BM25, LSA, dense, the fusions and the diagnosis by words"
)


def judgements_only(judgements: list[tuple[str, str, int]], source: str, name: str) -> Dataset:
    """A dataset of judgements (question, document, grade) alone; the same checks as `assemble`'s (a pair judged
    twice, a grade beyond the limit, no positive grade), each naming `source`."""
    seen: set[tuple[str, str]] = set()
    index: dict[str, int] = {}
    rows = []
    for qid, did, grade in judgements:
        if (qid, did) in seen:
            raise InputError(f"{source}: question {qid!r} judges document {did!r} twice")
        seen.add((qid, did))
        if not valid_grade(grade):
            raise InputError(
                f"{source}: question {qid!r} grades document {did!r} {grade!r}: expected an integer within +-{MAX_GRADE}"
            )
        rows.append((index.setdefault(qid, len(index)), did, grade))
    if not any(g > 0 for *_, g in rows):
        raise InputError(f"{source}: no judgement with a positive grade")
    rows.sort(key=lambda r: r[0])
    qrels = Qrels(
        query=np.array([r[0] for r in rows], dtype=np.int64),
        doc=np.full(len(rows), -1, dtype=np.int64),
        doc_id=np.array([r[1] for r in rows], dtype=object),
        grade=np.array([r[2] for r in rows], dtype=np.int64),
    )
    return Dataset(name, (), (), tuple(index), ("",) * len(index), qrels)


def read_judgements(path: str | Path) -> Dataset:
    """A qrels file (TREC `qid 0 docid grade` or BEIR tsv) read as a dataset of judgements alone, named by its
    file's stem."""
    path = Path(path)
    return judgements_only(parse_qrels(read_file(path), str(path)), str(path), path.stem)


def parse_judgements(data: bytes, source: str) -> Dataset:
    """A qrels file's bytes (an upload named `source`) as a dataset of judgements alone, named by the file's stem."""
    return judgements_only(parse_qrels(data, source), source, Path(source).stem or "judgements")


def has_documents(dataset: Dataset) -> bool:
    """Whether the dataset holds documents (False: judgements alone, which score run files only)."""
    return dataset.n_docs > 0
