"""The whole workspace as one zip, and back into an empty store: a team moving servers, a teacher handing a class's
work over, a backup.

The zip holds, for each dataset (a folder named after its id):

* ``beir/``: the dataset as a BEIR folder (corpus.jsonl, queries.jsonl, qrels/test.tsv: its own judgements);
* ``upload/``: its files as they were uploaded (what an import reads back, so the dataset's id stays the same);
* ``runs/``, ``embeddings/``: each run's and embeddings' files, as uploaded;
* ``qrels/``: every rater's grades, one TREC qrels file each, and the judgements in use by each combining rule
  (the dataset's own and the raters' combined), as the metrics read them;
* ``grades.jsonl``: every grade with its rater and time (what an import restores);

and ``experiments/`` one JSON file per saved experiment, with ``workspace.json`` naming every file and what it is.
Member names are made by the export (numbers, never a user's string).

An import is one transaction (`Workspace.transaction`): all of the zip or none of it, a process killed at any
moment included. Before anything is read, the zip must hold each member once and nothing `workspace.json` does not
name; every record is checked against what the export writes (types, names, times, grades within the scale,
experiments that are saved views of their own dataset) and a refusal is one message naming the member and its line.
Memory is bounded whatever the zip declares: grades are read a line at a time (each line at most MAX_LINE_BYTES)
and written in batches, `workspace.json` and each experiment are read up to their own bound, and the files a
dataset was uploaded as (with its runs and embeddings) are read one dataset at a time within the upload bounds,
as an upload of them is, since the store keeps each as one value. Nothing is written to disk but the store.

Over 500 lines on purpose: the export and the import are one format, written and read back side by side so that
each stays the other's inverse (the import's checks are the shapes the export writes, `_DATASET`, `_RUN`, ...).
"""

from __future__ import annotations

import io
import json
import zipfile
import zlib
from collections.abc import Iterator
from datetime import UTC, datetime

from ..core.errors import InputError
from ..corpus import dataset as datasets
from ..evaluation import records
from ..evaluation.agreement import RULES, combine
from .entries import _name as stored_name
from .workspace import MAX_EXPERIMENT_BYTES, ROLES, ZIP, Grade, StoredFile, Workspace

FORMAT = "retrieval-lab workspace"
VERSION = 1
INDEX = "workspace.json"
MAX_INDEX_BYTES = 16 * 2**20  # workspace.json: about 200 bytes per file it names, so some 80,000 files
MAX_LINE_BYTES = 64 * 2**10  # one grade's line of grades.jsonl (two ids, a name of at most 200 characters, a time)
GRADES_BATCH = 5_000  # grades written at once while grades.jsonl is read
# The most bytes one value (a stored file) takes in each database: SQLite's SQLITE_MAX_LENGTH as built by default,
# PostgreSQL's bytea. A member beyond is refused before it is read, not read whole to be refused by the database.
LARGEST_VALUE = {"sqlite": 10**9, "postgresql": 2**30 - 1}
# What json.loads may make of one member (workspace.json, an experiment), estimated from its bytes before it is
# read (`_json_cost`): a saved experiment of 7,000 questions, 6 systems and 10 metrics (13 MiB) takes 30 MiB and is
# estimated at 40, while 62 MiB of empty lists ("[[],[],...") would take 1.5 GiB.
MAX_JSON_MEMORY = 192 * 2**20
_BEIR = ("corpus.jsonl", "queries.jsonl", "qrels/test.tsv")  # a dataset's BEIR folder in the export (datasets.beir_zip)
_GRADE_KEYS = ("query_id", "doc_id", "rater", "grade", "graded_at")


def _time(t: datetime) -> str:
    return t.astimezone(UTC).isoformat()


def _parse_time(value, where: str) -> datetime:
    try:
        t = datetime.fromisoformat(value)
    except (TypeError, ValueError):
        raise InputError(f"{where}: {_short(value)} is not a time") from None
    return t if t.tzinfo else t.replace(tzinfo=UTC)


def _short(value) -> str:
    text = json.dumps(value) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def export_workspace(ws: Workspace) -> bytes:
    """Every dataset of the store with its files, runs, embeddings, grades (per rater, and combined by each rule)
    and experiments, as one zip (see the module's docstring)."""
    buf = io.BytesIO()
    index: dict = {"format": FORMAT, "version": VERSION, "exported_at": _time(datetime.now(UTC)), "datasets": []}
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for n, entry in enumerate(ws.datasets()):
            base = f"datasets/{n}"
            ds = ws.load_dataset(entry.id)
            with zipfile.ZipFile(io.BytesIO(datasets.beir_zip(ds))) as beir:
                for member in beir.namelist():
                    zf.writestr(f"{base}/beir/{member}", beir.read(member))
            files = []
            for i, f in enumerate(ws.dataset_files(entry.id)):
                zf.writestr(f"{base}/upload/{i}", f.data)
                files.append({"name": f.name, "path": f"{base}/upload/{i}"})
            runs = []
            for i, r in enumerate(ws.runs(entry.id)):
                zf.writestr(f"{base}/runs/{i}.run", ws.load_run_file(entry.id, r.name).data)
                runs.append(
                    {
                        "name": r.name,
                        "file_name": r.file_name,
                        "path": f"{base}/runs/{i}.run",
                        "added_at": _time(r.added_at),
                        "added_by": r.added_by,
                    }
                )
            vectors = []
            for i, e in enumerate(ws.embeddings(entry.id)):
                paths = []
                for j, f in enumerate(ws.embeddings_files(entry.id, e.name)):
                    zf.writestr(f"{base}/embeddings/{i}/{j}", f.data)
                    paths.append({"name": f.name, "path": f"{base}/embeddings/{i}/{j}"})
                vectors.append({"name": e.name, "files": paths, "added_at": _time(e.added_at), "added_by": e.added_by})
            every = ws.grades(entry.id, latest=False)
            zf.writestr(
                f"{base}/grades.jsonl",
                "".join(
                    json.dumps(
                        {
                            "query_id": g.query_id,
                            "doc_id": g.doc_id,
                            "rater": g.rater,
                            "grade": g.grade,
                            "graded_at": _time(g.graded_at),
                        }
                    )
                    + "\n"
                    for g in every
                ),
            )
            latest = ws.grades(entry.id)
            raters = sorted({g.rater for g in latest})
            qrels = {}
            for i, rater in enumerate(raters):
                path = f"{base}/qrels/rater-{i}.txt"
                zf.writestr(
                    path,
                    datasets.format_qrels(sorted((g.query_id, g.doc_id, g.grade) for g in latest if g.rater == rater)),
                )
                qrels[path] = {"rater": rater}
            judged = {(q, d) for q, d, _ in ds.judgements()}
            for rule in RULES:
                added = combine(((g.query_id, g.doc_id, g.rater, g.grade) for g in latest), rule)
                path = f"{base}/qrels/in-use-{rule}.txt"
                zf.writestr(
                    path,
                    datasets.format_qrels(
                        ds.judgements() + sorted((q, d, g) for (q, d), g in added.items() if (q, d) not in judged)
                    ),
                )
                qrels[path] = {"combined_by": rule}
            index["datasets"].append(
                {
                    "id": entry.id,
                    "name": entry.name,
                    "format": entry.format,
                    "added_at": _time(entry.added_at),
                    "added_by": entry.added_by,
                    "owner": entry.owner,
                    "beir": f"{base}/beir",
                    "upload": files,
                    "runs": runs,
                    "embeddings": vectors,
                    "grades": f"{base}/grades.jsonl",
                    "qrels": qrels,
                }
            )
        experiments = []
        for e in ws.experiments():
            _, body = ws.experiment(e.id)
            path = f"experiments/{e.id}.json"
            zf.writestr(path, json.dumps(body, allow_nan=False, indent=1))
            experiments.append(
                {
                    "dataset": e.dataset_id,
                    "name": e.name,
                    "created_at": _time(e.created_at),
                    "created_by": e.created_by,
                    "path": path,
                }
            )
        index["experiments"] = experiments
        zf.writestr(INDEX, json.dumps(index, indent=1))
    return buf.getvalue()


_KINDS = {str: "a string", list: "a list", dict: "an object", int: "a whole number"}


def _json_kind(value) -> str:
    return {
        type(None): "null",
        bool: "true or false",
        int: "a number",
        float: "a number",
        str: "a string",
        list: "a list",
        dict: "an object",
    }.get(type(value), type(value).__name__)


def _record(value, keys: dict, where: str, optional: dict | None = None) -> dict:
    """`value` when it is an object holding each of `keys` with a value of its type (and perhaps the `optional`
    ones), and nothing else; else one InputError naming `where` and the key."""
    optional = optional or {}
    if not isinstance(value, dict):
        raise InputError(f"{where}: {_json_kind(value)}, not an object")
    for key, kind in (*keys.items(), *((k, t) for k, t in optional.items() if k in value)):
        if key not in value:
            raise InputError(f"{where}: no {key!r}")
        v = value[key]
        if v is None and key in _NULLABLE:
            continue
        if not isinstance(v, kind) or isinstance(v, bool):
            raise InputError(f"{where}: {key!r} is {_json_kind(v)}, not {_KINDS[kind]}")
    extra = [k for k in value if k not in keys and k not in optional]
    if extra:
        raise InputError(f"{where}: {extra[0]!r} is not a key the export writes")
    return value


_FILE = {"name": str, "path": str}
_DATASET = {
    "id": str,
    "name": str,
    "format": str,
    "added_at": str,
    "added_by": str,
    "upload": list,
    "runs": list,
    "embeddings": list,
    "grades": str,
}
_DERIVED = {"beir": str, "qrels": dict}  # views for other tools: named members, never read by an import
_OWNED = {"owner": str}  # who may rename or delete it (null: nobody, admins only); absent before owners: its adder
_NULLABLE = {"owner"}
_RUN = {"name": str, "file_name": str, "path": str, "added_at": str, "added_by": str}
_EMBEDDINGS = {"name": str, "files": list, "added_at": str, "added_by": str}
_EXPERIMENT = {"dataset": str, "name": str, "created_at": str, "created_by": str, "path": str}


def _members(index: dict, source: str) -> dict[str, str]:
    """Every member `workspace.json` names, each with where it is named; its records checked on the way (their
    keys and types), a member named twice refused."""
    named: dict[str, str] = {}

    def name(path: str, where: str) -> None:
        if path == INDEX:
            raise InputError(f"{where}: names the member {INDEX} itself as one of its files")
        if path in named:
            raise InputError(f"{where}: names the member {path!r}, which {named[path].split(': ', 1)[1]} names too")
        named[path] = where

    datasets_ = index["datasets"]
    for k, d in enumerate(datasets_):
        where = f"{source}/{INDEX}: dataset {k + 1}"
        _record(d, _DATASET, where, {**_DERIVED, **_OWNED})
        for f in d["upload"]:
            name(_record(f, _FILE, f"{where}, its upload")["path"], where)
        for i, r in enumerate(d["runs"]):
            name(_record(r, _RUN, f"{where}, run {i + 1}")["path"], f"{where}, run {i + 1}")
        for i, e in enumerate(d["embeddings"]):
            at = f"{where}, embeddings {i + 1}"
            for f in _record(e, _EMBEDDINGS, at)["files"]:
                name(_record(f, _FILE, at)["path"], at)
        name(d["grades"], where)
        for path in d.get("qrels", {}):
            name(path, where)
        if "beir" in d:
            for member in _BEIR:
                name(f"{d['beir']}/{member}", where)
    for k, e in enumerate(index["experiments"]):
        where = f"{source}/{INDEX}: experiment {k + 1}"
        name(_record(e, _EXPERIMENT, where)["path"], where)
    return named


def _json_cost(data: bytes) -> int:
    """An upper estimate of the memory json.loads makes of `data`, in bytes: CPython's objects (a small dict about
    240 bytes, a list 72, a float and its slot in a container 40) and the text itself, counted in C."""
    return 240 * data.count(b"{") + 72 * data.count(b"[") + 40 * data.count(b",") + len(data)


class _Reader:
    """The zip's members: each one held once, none that workspace.json does not name; read within bounds, each
    named in any error."""

    def __init__(self, data: bytes, source: str, limits: datasets.ZipLimits):
        try:
            self.zf = zipfile.ZipFile(io.BytesIO(data))
        except (zipfile.BadZipFile, OSError, EOFError, ValueError):
            raise InputError(f"{source}: not a zip file") from None
        self.source, self.limits, self.read_so_far = source, limits, 0
        self.names: set[str] = set()
        for name in self.zf.namelist():
            if name in self.names:
                raise InputError(f"{source}/{name}: the zip holds this member twice (an export writes each once)")
            self.names.add(name)

    def check_members(self, named: dict[str, str]) -> None:
        """Refuse a member workspace.json does not name."""
        extra = sorted(self.names - set(named) - {INDEX})
        if extra:
            raise InputError(f"{self.source}/{extra[0]}: a member {INDEX} does not name (an export writes none)")

    def _info(self, name: str, where: str) -> zipfile.ZipInfo:
        if name not in self.names:
            raise InputError(f"{where}: names the member {name!r}, which the zip does not hold")
        return self.zf.getinfo(name)

    def _count(self, n: int, name: str) -> None:
        self.read_so_far += n
        if self.read_so_far > self.limits.total:
            raise InputError(f"{self.source}/{name}: the members expand beyond {self.limits.total:,} bytes in all")

    def bytes(self, name: str, where: str, largest: int) -> bytearray:
        """A stored file's bytes (held whole, not copied: the store keeps it as one value), within the upload
        bounds and `largest`, the most one value of the store's database takes (checked before it is read)."""
        info = self._info(name, where)
        if info.file_size > largest:
            raise InputError(
                f"{self.source}/{name}: declares {info.file_size:,} bytes, more than the {largest:,} one "
                "file of this store may hold"
            )
        (data,) = datasets.read_members(self.zf, (info.filename,), self.source, self.limits)
        self._count(len(data), name)
        return data

    def _chunks(self, info: zipfile.ZipInfo, bound: int, what: str) -> Iterator[bytes]:
        """A member's bytes a chunk at a time, refused once past `bound` (whatever its header declares)."""
        where = f"{self.source}/{info.filename}"
        if info.file_size > bound:
            raise InputError(f"{where}: declares {info.file_size:,} bytes, more than {bound:,} ({what})")
        read = 0
        try:
            with self.zf.open(info) as f:
                while chunk := f.read(2**20):
                    read += len(chunk)
                    if read > bound:
                        raise InputError(f"{where}: expands past {bound:,} bytes ({what})")
                    self._count(len(chunk), info.filename)
                    yield chunk
        except (zipfile.BadZipFile, zlib.error, OSError, EOFError) as e:
            raise InputError(f"{where}: damaged zip member ({e})") from None
        except (RuntimeError, NotImplementedError) as e:  # encrypted member, unsupported compression
            raise InputError(f"{where}: cannot be read ({e})") from None

    def json(self, name: str, where: str, bound: int, what: str):
        """A JSON member read whole, up to `bound` bytes."""
        data = b"".join(self._chunks(self._info(name, where), min(bound, self.limits.member), what))
        cost = _json_cost(data)
        if cost > MAX_JSON_MEMORY:
            raise InputError(
                f"{self.source}/{name}: its JSON would take about {cost / 2**20:,.0f} MiB to read "
                f"({data.count(b'{'):,} objects, {data.count(b'['):,} lists), more than the "
                f"{MAX_JSON_MEMORY / 2**20:,.0f} MiB an import gives one member"
            )
        try:
            return json.loads(data)
        except (ValueError, UnicodeDecodeError) as e:
            raise InputError(f"{self.source}/{name}: not JSON ({e})") from None
        except RecursionError:
            raise InputError(f"{self.source}/{name}: JSON nested too deep") from None

    def lines(self, name: str, where: str) -> Iterator[tuple[int, bytes]]:
        """A member's lines with their numbers, one at a time (memory: one line, at most MAX_LINE_BYTES)."""
        info = self._info(name, where)
        at = f"{self.source}/{name}"
        if info.file_size > self.limits.member:
            raise InputError(
                f"{at}: declares {info.file_size:,} bytes, more than the {self.limits.member:,} a member may expand to"
            )
        read, n = 0, 0
        with self.zf.open(info) as f:
            while True:
                n += 1
                try:
                    line = f.readline(MAX_LINE_BYTES + 1)
                except (zipfile.BadZipFile, zlib.error, OSError, EOFError) as e:
                    raise InputError(f"{at}:{n}: damaged zip member ({e})") from None
                if not line:
                    return
                read += len(line)
                if read > self.limits.member:
                    raise InputError(f"{at}:{n}: expands past the {self.limits.member:,} bytes a member may take")
                self._count(len(line), name)
                if len(line) > MAX_LINE_BYTES:
                    raise InputError(
                        f"{at}:{n}: a line of more than {MAX_LINE_BYTES:,} bytes (a grade's line is far shorter)"
                    )
                yield n, line


def _grades(reader: _Reader, name: str, where: str) -> Iterator[Grade]:
    """The grades of grades.jsonl, a line at a time, each checked as the export writes it."""
    for n, raw in reader.lines(name, where):
        at = f"{reader.source}/{name}:{n}"
        if not raw.strip():
            raise InputError(f"{at}: a blank line (the export writes one grade a line)")
        try:
            g = json.loads(raw)
        except (ValueError, UnicodeDecodeError):
            raise InputError(f"{at}: not JSON") from None
        except RecursionError:
            raise InputError(f"{at}: JSON nested too deep") from None
        _record(g, {k: (int if k == "grade" else str) for k in _GRADE_KEYS}, at)
        if not datasets.valid_grade(g["grade"]):
            raise InputError(
                f"{at}: the grade {_short(g['grade'])} is not a whole number within "
                f"-{datasets.MAX_GRADE}..{datasets.MAX_GRADE}"
            )
        if not g["query_id"].strip() or not g["doc_id"].strip():
            raise InputError(f"{at}: an empty question or document id")
        stored_name(g["rater"], f"{at}: the rater")
        yield Grade(g["query_id"], g["doc_id"], g["rater"], g["grade"], _parse_time(g["graded_at"], at))


def import_workspace(
    ws: Workspace, data: bytes, source: str = "workspace.zip", limits: datasets.ZipLimits | None = None
) -> int:
    """Read an exported workspace into `ws`, which must be empty; returns how many datasets. Each dataset is read
    again from its uploaded files (the upload bounds apply) and must give the id it was exported under. All of it
    is one transaction: on any error (one InputError naming the member and line) the store is as it was."""
    reader = _Reader(data, source, limits or datasets.zip_limits())
    if INDEX not in reader.names:
        raise InputError(f"{source}: the zip does not hold {INDEX}, which every exported workspace holds")
    index = reader.json(INDEX, source, MAX_INDEX_BYTES, f"the bound of {INDEX}")
    if not isinstance(index, dict) or index.get("format") != FORMAT or index.get("version") != VERSION:
        said = (index.get("format"), index.get("version")) if isinstance(index, dict) else (None, None)
        raise InputError(f"{source}: not a workspace of this lab ({INDEX} says {said[0]!r} version {said[1]!r})")
    _record(
        index,
        {"format": str, "version": int, "datasets": list, "experiments": list},
        f"{source}/{INDEX}",
        {"exported_at": str},
    )
    reader.check_members(_members(index, source))
    with ws.transaction():
        if not ws.is_empty():
            raise InputError(f"{ws.label}: a workspace is imported into an empty store only (this one holds datasets)")
        imported = set()
        for k, d in enumerate(index["datasets"]):
            where = f"{source}/{INDEX}: dataset {k + 1}"
            imported.add(_import_dataset(ws, reader, d, where))
        for k, e in enumerate(index["experiments"]):
            where = f"{source}/{INDEX}: experiment {k + 1}"
            if e["dataset"] not in imported:
                raise InputError(f"{where}: names the dataset {_short(e['dataset'])}, which the zip does not hold")
            path = e["path"]
            body = records.check(
                reader.json(path, where, MAX_EXPERIMENT_BYTES, "the bound of a saved experiment"), f"{source}/{path}"
            )
            entry = ws.dataset(e["dataset"])
            shown = body["report"]["dataset"]
            if (shown["documents"], shown["queries"]) != (entry.n_docs, entry.n_questions):
                raise InputError(
                    f"{source}/{path}: a view of {shown['documents']:,} documents and {shown['queries']:,} "
                    f"questions, not of its dataset {entry.id} ({entry.n_docs:,} and {entry.n_questions:,})"
                )
            _stored(
                where,
                ws.save_experiment,
                e["dataset"],
                e["name"],
                body,
                e["created_by"],
                _parse_time(e["created_at"], where),
            )
    return len(imported)


def _stored(where: str, write, *args):
    """A write of the store (its refusal: a name it does not take, the size limit) or a dataset's files read again
    (a line they do not hold as uploaded), the error naming `where`."""
    try:
        return write(*args)
    except InputError as e:
        raise InputError(f"{where}: {e}") from None


def _import_dataset(ws: Workspace, reader: _Reader, d: dict, where: str) -> str:
    """One dataset of the index with its runs, embeddings and grades, inside the import's transaction; its id."""
    fmt, expected = d["format"], d["id"]
    if fmt not in ROLES:
        raise InputError(f"{where}: format {_short(fmt)} (the export writes {' or '.join(map(repr, ROLES))})")
    if len(d["upload"]) != len(ROLES[fmt]):
        raise InputError(f"{where}: {len(d['upload'])} uploaded files for format {fmt!r}")
    if ws.dataset(expected) is not None:
        raise InputError(f"{where}: the dataset {expected} again (the export names each once)")
    largest = LARGEST_VALUE.get(ws.engine.dialect.name, 10**9)
    files = [StoredFile(f["name"], reader.bytes(f["path"], where, largest)) for f in d["upload"]]
    if fmt == ZIP:  # read as its upload was (the loaders' errors name the file and line; `where` the member)
        ds = _stored(where, datasets.load_beir_zip, files[0].data, files[0].name, reader.limits)
    else:
        ds = _stored(where, datasets.from_files, *((f.data, f.name) for f in files), d["name"])
    if ds.fingerprint != expected:
        raise InputError(f"{where}: its files give the dataset {ds.fingerprint}, not {_short(expected)}")
    _stored(
        where,
        ws.add_dataset,
        ds.renamed(d["name"]),
        fmt,
        files,
        d["added_by"],
        _parse_time(d["added_at"], where),
        d.get("owner", d["added_by"]),
    )
    del files, ds  # one dataset's files held at a time
    for i, r in enumerate(d["runs"]):
        at = f"{where}, run {i + 1}"
        _stored(
            at,
            ws.add_run,
            expected,
            r["name"],
            StoredFile(r["file_name"], reader.bytes(r["path"], at, largest)),
            r["added_by"],
            _parse_time(r["added_at"], at),
        )
    for i, e in enumerate(d["embeddings"]):
        at = f"{where}, embeddings {i + 1}"
        _stored(
            at,
            ws.add_embeddings,
            expected,
            e["name"],
            [StoredFile(f["name"], reader.bytes(f["path"], at, largest)) for f in e["files"]],
            e["added_by"],
            _parse_time(e["added_at"], at),
        )
    batch: list[Grade] = []
    for g in _grades(reader, d["grades"], where):
        batch.append(g)
        if len(batch) == GRADES_BATCH:
            _stored(f"{reader.source}/{d['grades']}", ws.add_grades, expected, batch)
            batch = []
    _stored(f"{reader.source}/{d['grades']}", ws.add_grades, expected, batch)
    return expected
