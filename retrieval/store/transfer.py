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
Member names are made by the export (numbers, never a user's string); an import reads every member in memory,
within the upload bounds, and writes nothing to disk.
"""

from __future__ import annotations

import io
import json
import zipfile
from datetime import UTC, datetime

from ..core.errors import InputError
from ..corpus import dataset as datasets
from ..evaluation.agreement import RULES, combine
from .workspace import FILES, ROLES, ZIP, Grade, StoredFile, Workspace

FORMAT = "retrieval-lab workspace"
VERSION = 1
INDEX = "workspace.json"


def _time(t: datetime) -> str:
    return t.astimezone(UTC).isoformat()


def _parse_time(value: str, where: str) -> datetime:
    try:
        t = datetime.fromisoformat(str(value))
    except ValueError:
        raise InputError(f"{where}: {value!r} is not a time") from None
    return t if t.tzinfo else t.replace(tzinfo=UTC)


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
                runs.append({"name": r.name, "file_name": r.file_name, "path": f"{base}/runs/{i}.run",
                             "added_at": _time(r.added_at), "added_by": r.added_by})
            vectors = []
            for i, e in enumerate(ws.embeddings(entry.id)):
                paths = []
                for j, f in enumerate(ws.embeddings_files(entry.id, e.name)):
                    zf.writestr(f"{base}/embeddings/{i}/{j}", f.data)
                    paths.append({"name": f.name, "path": f"{base}/embeddings/{i}/{j}"})
                vectors.append({"name": e.name, "files": paths, "added_at": _time(e.added_at), "added_by": e.added_by})
            every = ws.grades(entry.id, latest=False)
            zf.writestr(f"{base}/grades.jsonl", "".join(
                json.dumps({"query_id": g.query_id, "doc_id": g.doc_id, "rater": g.rater, "grade": g.grade,
                            "graded_at": _time(g.graded_at)}) + "\n" for g in every))
            latest = ws.grades(entry.id)
            raters = sorted({g.rater for g in latest})
            qrels = {}
            for i, rater in enumerate(raters):
                path = f"{base}/qrels/rater-{i}.txt"
                zf.writestr(path, datasets.format_qrels(sorted((g.query_id, g.doc_id, g.grade) for g in latest
                                                               if g.rater == rater)))
                qrels[path] = {"rater": rater}
            judged = {(q, d) for q, d, _ in ds.judgements()}
            for rule in RULES:
                added = combine(((g.query_id, g.doc_id, g.rater, g.grade) for g in latest), rule)
                path = f"{base}/qrels/in-use-{rule}.txt"
                zf.writestr(path, datasets.format_qrels(ds.judgements() + sorted(
                    (q, d, g) for (q, d), g in added.items() if (q, d) not in judged)))
                qrels[path] = {"combined_by": rule}
            index["datasets"].append({
                "id": entry.id, "name": entry.name, "format": entry.format, "added_at": _time(entry.added_at),
                "added_by": entry.added_by, "owner": entry.owner, "beir": f"{base}/beir", "upload": files, "runs": runs,
                "embeddings": vectors, "grades": f"{base}/grades.jsonl", "qrels": qrels})
        experiments = []
        for e in ws.experiments():
            _, body = ws.experiment(e.id)
            path = f"experiments/{e.id}.json"
            zf.writestr(path, json.dumps(body, allow_nan=False, indent=1))
            experiments.append({"dataset": e.dataset_id, "name": e.name, "created_at": _time(e.created_at),
                                "created_by": e.created_by, "path": path})
        index["experiments"] = experiments
        zf.writestr(INDEX, json.dumps(index, indent=1))
    return buf.getvalue()


class _Reader:
    """The zip's members, read in memory within the upload bounds, each named in any error."""

    def __init__(self, data: bytes, source: str, limits: datasets.ZipLimits):
        try:
            self.zf = zipfile.ZipFile(io.BytesIO(data))
        except (zipfile.BadZipFile, OSError, EOFError, ValueError):
            raise InputError(f"{source}: not a zip file") from None
        self.source, self.limits, self.read_so_far = source, limits, 0
        self.names = set(self.zf.namelist())

    def bytes(self, name: str) -> bytes:
        if not isinstance(name, str) or name not in self.names:
            raise InputError(f"{self.source}: {INDEX} names {name!r}, which the zip does not hold")
        (data,) = datasets.read_members(self.zf, (name,), self.source, self.limits)
        self.read_so_far += len(data)
        if self.read_so_far > self.limits.total:
            raise InputError(f"{self.source}: its members expand beyond {self.limits.total:,} bytes")
        return bytes(data)

    def json(self, name: str):
        try:
            return json.loads(self.bytes(name))
        except (ValueError, UnicodeDecodeError) as e:
            raise InputError(f"{self.source}/{name}: not JSON ({e})") from None


def _field(record: dict, key: str, where: str):
    if not isinstance(record, dict) or key not in record:
        raise InputError(f"{where}: no {key!r}")
    return record[key]


def import_workspace(ws: Workspace, data: bytes, source: str = "workspace.zip",
                     limits: datasets.ZipLimits | None = None) -> int:
    """Read an exported workspace into `ws`, which must be empty; returns how many datasets. Each dataset is read
    again from its uploaded files (the upload bounds apply) and must give the id it was exported under. Every
    write goes through the store's transactions; on an error the datasets read so far stay (the message names the
    member), the store holding nothing half-written."""
    if not ws.is_empty():
        raise InputError(f"{ws.label}: a workspace is imported into an empty store only (this one holds datasets)")
    reader = _Reader(data, source, limits or datasets.zip_limits())
    index = reader.json(INDEX)
    if _field(index, "format", INDEX) != FORMAT or _field(index, "version", INDEX) != VERSION:
        raise InputError(f"{source}: not a workspace of this lab ({INDEX} says {index.get('format')!r} "
                         f"version {index.get('version')!r})")
    count = 0
    for k, d in enumerate(_field(index, "datasets", INDEX)):
        where = f"{source}/{INDEX}: dataset {k + 1}"
        fmt, expected = _field(d, "format", where), _field(d, "id", where)
        if fmt not in ROLES:
            raise InputError(f"{where}: format {fmt!r}")
        files = [StoredFile(str(_field(f, "name", where)), reader.bytes(_field(f, "path", where)))
                 for f in _field(d, "upload", where)]
        if len(files) != len(ROLES[fmt]):
            raise InputError(f"{where}: {len(files)} uploaded files for format {fmt!r}")
        if fmt == ZIP:
            ds = datasets.load_beir_zip(files[0].data, files[0].name, limits)
        else:
            ds = datasets.from_files(*((f.data, f.name) for f in files), name=str(_field(d, "name", where)))
        if ds.fingerprint != expected:
            raise InputError(f"{where}: its files give the dataset {ds.fingerprint}, not {expected!r}")
        ds = ds.renamed(str(_field(d, "name", where)))
        ws.add_dataset(ds, FILES if fmt == FILES else ZIP, files, str(_field(d, "added_by", where)),
                       _parse_time(_field(d, "added_at", where), where))
        for r in _field(d, "runs", where):
            ws.add_run(ds.fingerprint, str(_field(r, "name", where)),
                       StoredFile(str(_field(r, "file_name", where)), reader.bytes(_field(r, "path", where))),
                       str(_field(r, "added_by", where)), _parse_time(_field(r, "added_at", where), where))
        for e in _field(d, "embeddings", where):
            ws.add_embeddings(ds.fingerprint, str(_field(e, "name", where)),
                              [StoredFile(str(_field(f, "name", where)), reader.bytes(_field(f, "path", where)))
                               for f in _field(e, "files", where)],
                              str(_field(e, "added_by", where)), _parse_time(_field(e, "added_at", where), where))
        grades = []
        name = _field(d, "grades", where)
        for line, text in enumerate(reader.bytes(name).decode("utf-8", "replace").splitlines(), 1):
            if not text.strip():
                continue
            try:
                g = json.loads(text)
            except ValueError:
                raise InputError(f"{source}/{name}:{line}: not JSON") from None
            at = f"{source}/{name}:{line}"
            grades.append(Grade(str(_field(g, "query_id", at)), str(_field(g, "doc_id", at)), str(_field(g, "rater", at)),
                                _field(g, "grade", at), _parse_time(_field(g, "graded_at", at), at)))
        ws.add_grades(ds.fingerprint, grades)
        count += 1
    for k, e in enumerate(_field(index, "experiments", INDEX)):
        where = f"{source}/{INDEX}: experiment {k + 1}"
        body = reader.json(_field(e, "path", where))
        if not isinstance(body, dict):
            raise InputError(f"{where}: its JSON is not an object")
        ws.save_experiment(str(_field(e, "dataset", where)), str(_field(e, "name", where)), body,
                           str(_field(e, "created_by", where)), _parse_time(_field(e, "created_at", where), where))
    return count
