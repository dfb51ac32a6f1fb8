"""BEIR: a folder or a zip holding corpus.jsonl, queries.jsonl and qrels/test.tsv (or a single file in qrels/), and
the built-in datasets, which are BEIR folders."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path, PurePosixPath

from ...core.errors import InputError
from ..files import _folder_names, read_file
from ..limits import ZipLimits, _declared, _member_chunks, zip_limits
from ..model import Dataset, assemble
from .jsonl import parse_jsonl
from .trec import parse_qrels

_PACKAGE = Path(__file__).resolve().parents[2]
# the built-in datasets: the repository's data/ in a source checkout, `retrieval/_data/` where the package is installed
# (pyproject.toml ships data/ there), found wherever the package runs from
DATA_DIR = next(
    (d for d in (_PACKAGE / "_data", _PACKAGE.parent / "data") if (d / "invented").is_dir()), _PACKAGE / "_data"
)
BUILTIN = {"invented": DATA_DIR / "invented"}


def _beir_members(names: list[str], source: str) -> tuple[str, str, str]:
    """Paths of corpus.jsonl, queries.jsonl and the qrels file among the entries of a BEIR folder or zip."""
    corpus = sorted((n for n in names if PurePosixPath(n).name == "corpus.jsonl"), key=lambda n: (n.count("/"), n))
    if not corpus:
        raise InputError(
            f"{source}: no corpus.jsonl (a BEIR dataset holds corpus.jsonl, queries.jsonl and qrels/test.tsv)"
        )
    root = PurePosixPath(corpus[0]).parent
    queries = str(root / "queries.jsonl")
    if queries not in names:
        raise InputError(f"{source}: no queries.jsonl beside {corpus[0]}")
    qrels_dir = root / "qrels"
    test = str(qrels_dir / "test.tsv")
    if test in names:
        return corpus[0], queries, test
    candidates = sorted(
        n for n in names if PurePosixPath(n).parent == qrels_dir and n.endswith((".tsv", ".txt", ".qrels"))
    )
    if len(candidates) != 1:
        found = ", ".join(PurePosixPath(c).name for c in candidates) or "none"
        raise InputError(f"{source}: expected qrels/test.tsv or a single file in qrels/ (found: {found})")
    return corpus[0], queries, candidates[0]


def load_beir_zip(data: bytes, source: str, limits: ZipLimits | None = None) -> Dataset:
    """A BEIR dataset from the bytes of a .zip (its files at the top or inside one folder).

    `limits` bounds what its members may expand to: by default `zip_limits()`, the app's bounds (the command line
    passes `zip_limits(CLI_LIMITS)`). Each member is parsed as it is decompressed, never held whole: memory grows
    with the records kept, not with the members' size (a corpus.jsonl of a GiB of newlines costs a MiB).
    """
    limits = limits or zip_limits()
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, OSError, EOFError, ValueError):
        raise InputError(f"{source}: not a zip file") from None
    with zf:
        names = [n for n in zf.namelist() if not n.endswith("/") and "__MACOSX" not in n]
        members = _beir_members(names, source)
        infos, total = _declared(zf, members, source, limits), [0]
        srcs = tuple(f"{source}/{n}" for n in members)
        parsed = [
            parse(_member_chunks(zf, info, source, limits, total), src)
            for parse, info, src in zip((parse_jsonl, parse_jsonl, parse_qrels), infos, srcs)
        ]
    return assemble(PurePosixPath(source).stem, *parsed, srcs)


def load_beir_dir(path: Path, name: str | None = None) -> Dataset:
    """A BEIR dataset from a folder."""
    if not path.is_dir():
        raise InputError(f"{path}: not a folder")
    _folder_names(path)  # a folder it may not list: said as such, not as a folder missing its files
    missing = [n for n in ("corpus.jsonl", "queries.jsonl") if not (path / n).is_file()]
    missing += [] if (path / "qrels").is_dir() else ["qrels/"]
    if missing:
        raise InputError(
            f"{path}: not a BEIR folder, its top level has no {', '.join(missing)} "
            "(a BEIR folder holds corpus.jsonl, queries.jsonl and qrels/test.tsv)"
        )
    names = ["corpus.jsonl", "queries.jsonl"] + [
        f"qrels/{n}" for n in sorted(_folder_names(path / "qrels")) if (path / "qrels" / n).is_file()
    ]
    c, q, r = _beir_members(names, str(path))
    paths = [path / n for n in (c, q, r)]
    srcs = tuple(str(p) for p in paths)
    return assemble(
        name or path.name,
        parse_jsonl(read_file(paths[0]), srcs[0]),
        parse_jsonl(read_file(paths[1]), srcs[1]),
        parse_qrels(read_file(paths[2]), srcs[2]),
        srcs,
    )


def load(name_or_path: str | Path = "invented", limits: ZipLimits | None = None) -> Dataset:
    """A built-in dataset by name (`invented`) or a BEIR folder or .zip by path (`limits`: see `load_beir_zip`)."""
    key = str(name_or_path)
    if key in BUILTIN:
        return load_beir_dir(BUILTIN[key], name=key)
    path = Path(key)
    if path.is_dir():
        return load_beir_dir(path)
    if path.suffix.lower() == ".zip":
        return load_beir_zip(read_file(path), str(path), limits)
    if not path.exists():
        raise InputError(f"{key}: no such dataset (built-in: {', '.join(BUILTIN)}; or a BEIR folder or .zip)")
    raise InputError(f"{key}: not a BEIR folder or .zip")
