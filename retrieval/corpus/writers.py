"""What the lab writes for others to read: judgements as TREC qrels, a dataset as a BEIR zip, and the part of an
uploaded BEIR zip the store keeps; each is read back by the lab's own parsers to the same content."""

from __future__ import annotations

import io
import zipfile
from collections.abc import Iterable

import orjson

from ..core.errors import InputError
from .formats.beir import _beir_members
from .model import Dataset


def format_qrels(judgements: Iterable[tuple[str, str, int]]) -> str:
    """Judgements (question id, document id, grade) as TREC qrels, ``qid 0 docid grade`` per line: what
    `parse_qrels` reads back to the same triples (ids are single words, so each line splits into four fields)."""
    lines = [f"{q} 0 {d} {int(g)}" for q, d, g in judgements]
    return "\n".join(lines) + ("\n" if lines else "")


def beir_zip(ds: Dataset) -> bytes:
    """The dataset as a BEIR zip: corpus.jsonl and queries.jsonl (each text whole in "text"), qrels/test.tsv in the
    qrels' order, at the zip's top level. `load_beir_zip` reads it back to the same content (the same fingerprint)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for member, ids, texts in (
            ("corpus.jsonl", ds.doc_ids, ds.doc_texts),
            ("queries.jsonl", ds.query_ids, ds.query_texts),
        ):
            zf.writestr(member, b"".join(orjson.dumps({"_id": i, "text": t}) + b"\n" for i, t in zip(ids, texts)))
        rows = "".join(f"{q}\t{d}\t{g}\n" for q, d, g in ds.judgements())
        zf.writestr("qrels/test.tsv", "query-id\tcorpus-id\tscore\n" + rows)
    return buf.getvalue()


def beir_zip_kept(data: bytes, source: str) -> bytes:
    """The BEIR zip with only the members `load_beir_zip` reads (corpus, questions, the qrels file), under the same
    names, so it loads to the same content: what the store keeps of an upload (a member never read is neither kept
    nor counted against the store's limit). The bytes as given when it holds nothing else. Call it on a zip that
    `load_beir_zip` read: the members kept were bounded there."""
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, OSError, EOFError, ValueError):
        raise InputError(f"{source}: not a zip file") from None
    with zf:
        infos = zf.infolist()
        kept = _beir_members([n for n in zf.namelist() if not n.endswith("/") and "__MACOSX" not in n], source)
        if len(infos) == len(kept):
            return data
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
            for name in kept:
                info = zipfile.ZipInfo(name, zf.getinfo(name).date_time)
                info.compress_type = zipfile.ZIP_DEFLATED
                with zf.open(name) as a, dst.open(info, "w", force_zip64=True) as b:
                    while chunk := a.read(1 << 20):
                        b.write(chunk)
    return out.getvalue()
