"""A workspace import is all of the zip or none of it, on SQLite and PostgreSQL: crafted zips (a bad grades line, a
grade of 10^30, a missing experiment file, an experiment of another dataset or not a saved view at all, `"upload":
null`, a member twice, a member no export writes) are each refused with one message naming the member and line,
the store left exactly as it was and a retry taking the good zip whole; a process killed at any point of an import
leaves nothing of it; a member of 1 GiB of newlines in a 1 MB zip is refused within fixed memory, measured in a
child process."""

from __future__ import annotations

import contextlib
import io
import json
import re
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest
from test_store import _drop_test_databases, _postgres_database, url  # noqa: F401 - the databases' fixture, cleanup
from test_store_transfer import filled, snapshot

from conftest import ROOT
from retrieval.core.errors import InputError
from retrieval.store.transfer import (
    INDEX,
    MAX_LINE_BYTES,
    export_workspace,
    import_workspace,
)
from retrieval.store.workspace import open_workspace

GIB = 2**30


@pytest.fixture
def exported(url):  # noqa: F811
    """A filled store's export (two datasets, runs, embeddings, grades of three raters, an experiment) and what
    the store holds."""
    ws, _, _ = filled(url)
    data = export_workspace(ws)
    held = snapshot(ws)
    ws.engine.dispose()
    return data, held


def rezip(data: bytes, change=None, drop=(), add=(), index=None) -> bytes:
    """The export with members replaced (`change`: name -> bytes), dropped, added ((name, bytes) pairs, a name
    again included) and its index edited (`index`: a function of the parsed workspace.json)."""
    change = dict(change or {})
    src = zipfile.ZipFile(io.BytesIO(data))
    if index is not None:
        parsed = json.loads(src.read(INDEX))
        index(parsed)
        change[INDEX] = json.dumps(parsed).encode()
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as out:
        for name in src.namelist():
            if name not in drop:
                out.writestr(name, change.get(name, src.read(name)))
        for name, body in add:
            with (
                pytest.warns(UserWarning, match="Duplicate name")
                if name in src.namelist()
                else contextlib.nullcontext()
            ):
                out.writestr(name, body)
    return buf.getvalue()


def _index(data: bytes) -> dict:
    return json.loads(zipfile.ZipFile(io.BytesIO(data)).read(INDEX))


def _uploaded_documents(index: dict) -> str:
    """The member of the three-file dataset's documents file."""
    return next(d for d in index["datasets"] if d["format"] == "files")["upload"][0]["path"]


def _last_grades(data: bytes) -> str:
    """The grades member of the index's last dataset (so every dataset before it is written when it is read)."""
    return _index(data)["datasets"][-1]["grades"]


def _lines(data: bytes, member: str) -> list[str]:
    return zipfile.ZipFile(io.BytesIO(data)).read(member).decode().splitlines()


def _bad_line(data: bytes) -> bytes:
    g = _last_grades(data)
    lines = _lines(data, g)
    lines[1] = lines[1][:-5]  # the second grade's JSON cut short
    return rezip(data, {g: "\n".join(lines).encode() + b"\n"})


def _huge_grade(data: bytes) -> bytes:
    g = _last_grades(data)
    lines = _lines(data, g)
    first = json.loads(lines[2])
    first["grade"] = 10**30
    lines[2] = json.dumps(first)
    return rezip(data, {g: "\n".join(lines).encode() + b"\n"})


def _missing_experiment(data: bytes) -> bytes:
    return rezip(data, drop=(_index(data)["experiments"][0]["path"],))


def _another_dataset(data: bytes) -> bytes:
    def edit(index):
        index["experiments"][0]["dataset"] = "f" * 16

    return rezip(data, index=edit)


def _the_other_dataset(data: bytes) -> bytes:
    """The experiment (a view of the invented dataset) filed under the zip's other dataset."""

    def edit(index):
        e = index["experiments"][0]
        e["dataset"] = next(d["id"] for d in index["datasets"] if d["id"] != e["dataset"])

    return rezip(data, index=edit)


def _not_a_view(data: bytes) -> bytes:
    return rezip(data, {_index(data)["experiments"][0]["path"]: b'{"x": 1}'})


def _upload_null(data: bytes) -> bytes:
    def edit(index):
        index["datasets"][-1]["upload"] = None

    return rezip(data, index=edit)


def _index_twice(data: bytes) -> bytes:
    return rezip(data, add=((INDEX, zipfile.ZipFile(io.BytesIO(data)).read(INDEX)),))


def _unexpected(data: bytes) -> bytes:
    return rezip(data, add=(("datasets/1/notes.txt", b"hello"),))


def _run_of_another_name(data: bytes) -> bytes:
    """A run's name the store refuses (control characters), after its dataset is written."""

    def edit(index):
        d = next(d for d in index["datasets"] if d["runs"])
        d["runs"][0]["name"] = "bad\x07name"

    return rezip(data, index=edit)


def _broken_upload(data: bytes) -> bytes:
    """The three-file dataset's documents file with a line of one column."""
    return rezip(data, {_uploaded_documents(_index(data)): b"id\ttext\nd1\talpha beta\nd2\n"})


def _named_twice(data: bytes) -> bytes:
    def edit(index):
        index["datasets"][1]["grades"] = index["datasets"][0]["grades"]

    return rezip(data, index=edit)


CRAFTED = {  # how the export is changed, what the one message says (the member, and the line where there is one)
    "bad grades line": (_bad_line, r"datasets/1/grades\.jsonl:2: not JSON$"),
    "grade 10^30": (
        _huge_grade,
        (
            r"datasets/1/grades\.jsonl:3: the grade 1000000000000000000000000000000 is not a "
            r"whole number within -100\.\.100$"
        ),
    ),
    "missing experiment file": (
        _missing_experiment,
        (
            r"workspace\.json: experiment 1: names the member "
            r"'experiments/\d+\.json', which the zip does not hold$"
        ),
    ),
    "experiment of a dataset the zip does not hold": (
        _another_dataset,
        (
            r"experiment 1: names the dataset "
            r"'ffffffffffffffff', which the zip does not hold"
        ),
    ),
    "experiment of the zip's other dataset": (
        _the_other_dataset,
        (
            r"experiments/\d+\.json: a view of 28 documents and "
            r"14 questions, not of its dataset \w+ \(3 and 2\)"
        ),
    ),
    "{'x': 1} experiment": (_not_a_view, r"experiments/\d+\.json: not a saved experiment: no 'version' \(it has x\)"),
    "upload null": (_upload_null, r"workspace\.json: dataset 2: 'upload' is null, not a list$"),
    "workspace.json twice": (_index_twice, r"workspace\.zip/workspace\.json: the zip holds this member twice"),
    "a dataset's file with a broken line": (
        _broken_upload,
        (
            r"workspace\.json: dataset \d: docs\.tsv:3: 1 columns, "
            r"the header has 2$"
        ),
    ),
    "a member named twice": (
        _named_twice,
        (
            r"workspace\.json: dataset 2: names the member 'datasets/0/grades\.jsonl', "
            r"which dataset 1 names too$"
        ),
    ),
    "unexpected member": (_unexpected, r"workspace\.zip/datasets/1/notes\.txt: a member workspace\.json does not name"),
    "run name with a control character": (
        _run_of_another_name,
        (
            r"dataset \d, run 1: the run: a name cannot hold "
            r"control characters"
        ),
    ),
}


@pytest.fixture
def target(url, tmp_path):  # noqa: F811
    """An empty store of the url's kind to import into (another database on the PostgreSQL server)."""
    ws = open_workspace(f"sqlite:///{tmp_path / 'target.sqlite'}" if url.startswith("sqlite") else _postgres_database())
    yield ws
    ws.engine.dispose()


@pytest.mark.parametrize("case", list(CRAFTED))
def test_a_crafted_zip_is_refused_whole_and_a_retry_imports_the_good_one_whole(case, exported, target):
    data, held = exported
    craft, message = CRAFTED[case]
    with pytest.raises(InputError) as refused:
        import_workspace(target, craft(data))
    text = str(refused.value)
    assert "\n" not in text and re.search(message, text), text
    assert "not JSON (" not in text  # a missing member is not said to be broken JSON
    assert target.is_empty() and target.size() == 0 and snapshot(target) == {"experiments": []}
    assert import_workspace(target, data) == 2 and snapshot(target) == held


# ------------------------------------------------------------------------------------------ killed at any point

_KILLED_IMPORT = """
import sys, time
from pathlib import Path
from retrieval.store import transfer, workspace

url, zipped, marker, point = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3]), sys.argv[4]
ws = workspace.open_workspace(url)
if point != "committed":
    real = getattr(workspace.Workspace, point)

    def held(self, *args, **kwargs):
        out = real(self, *args, **kwargs)  # written, the import's transaction still open
        marker.write_text(point)
        time.sleep(600)
        return out

    setattr(workspace.Workspace, point, held)
transfer.import_workspace(ws, zipped.read_bytes())
marker.write_text("committed")
time.sleep(600)
"""

POINTS = ("add_dataset", "add_run", "add_embeddings", "add_grades", "save_experiment")  # in the order written


@pytest.mark.slow
def test_an_import_killed_at_any_point_leaves_nothing_and_a_retry_takes_it_whole(url, exported, target, tmp_path):  # noqa: F811
    """A child process imports the zip and is killed (SIGKILL) once it has written a dataset, a run, embeddings,
    grades, an experiment (the last write before the commit): each time the store holds nothing of it and the next
    import takes it. A child killed right after its import returned: the store holds all of it."""
    data, held = exported
    zipped = tmp_path / "workspace.zip"
    zipped.write_bytes(data)
    marker = tmp_path / "marker"
    for point in (*POINTS, "committed"):
        marker.unlink(missing_ok=True)
        child = subprocess.Popen(
            [sys.executable, "-c", _KILLED_IMPORT, _url_of(target), str(zipped), str(marker), point],
            cwd=ROOT,
            stderr=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + 180
        while not (marker.exists() and marker.read_text() == point):
            assert child.poll() is None, child.stderr.read()
            assert time.monotonic() < deadline, f"the child never reached {point}"
            time.sleep(0.05)
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
        if point == "committed":
            assert snapshot(target) == held
        else:
            assert target.is_empty() and target.size() == 0 and snapshot(target) == {"experiments": []}, point
    with pytest.raises(InputError, match="into an empty store only"):
        import_workspace(target, data)
    assert snapshot(target) == held


def _url_of(ws) -> str:
    return ws.engine.url.render_as_string(hide_password=False)


# ------------------------------------------------------------------------------------------- bounded memory

_MEASURED = """
import json, resource, sys
from retrieval import cli

good, store, crafted, other = sys.argv[1:5]
assert cli.main(["workspace", "import", good, "--store", store]) == 0  # everything an import uses, loaded once
rest = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
code = cli.main(["workspace", "import", crafted, "--store", other])
print(json.dumps({"code": code, "grown": (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rest) * 1024}))
"""


def _uploaded_zip(index: dict) -> str:
    """The member of the zip dataset's uploaded BEIR zip."""
    return next(d for d in index["datasets"] if d["format"] != "files")["upload"][0]["path"]


def _huge(
    data: bytes,
    member: str,
    path: Path,
    head: bytes = b"",
    fill: bytes = b"\n" * 2**20,
    tail: bytes = b"",
    size: int = GIB,
    inner: str | None = None,
) -> Path:
    """The export with `member` replaced by `head`, `size` bytes of `fill` (1 GiB) and `tail`, written a MiB at a
    time (the zip about 1 MB); with `inner`, `member` is a zip whose member `inner` is replaced so."""
    src = zipfile.ZipFile(io.BytesIO(data))
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as out:
        for name in src.namelist():
            if name != member:
                out.writestr(name, src.read(name))
                continue
            if inner is not None:
                crafted = _huge(src.read(name), inner, path.with_name("inner.zip"), head, fill, tail, size)
                out.writestr(name, crafted.read_bytes())
                continue
            with out.open(name, "w", force_zip64=True) as f:
                f.write(head)
                for _ in range(size // len(fill)):
                    f.write(fill)
                f.write(tail)
    return path


HUGE = {  # the member replaced, how, and what the one line on stderr says
    "grades of newlines": (lambda ix: ix["datasets"][-1]["grades"], {}, r"grades\.jsonl:1: a blank line"),
    "grades after a good line": (
        lambda ix: ix["datasets"][-1]["grades"],
        {
            "head": json.dumps(
                {
                    "query_id": "q01",
                    "doc_id": "misc3",
                    "rater": "ana",
                    "grade": 1,
                    "graded_at": "2026-01-01T00:00:00+00:00",
                }
            ).encode()
            + b"\n"
        },
        r"grades\.jsonl:2: a blank line",
    ),
    "grades of one endless line": (
        lambda ix: ix["datasets"][-1]["grades"],
        {"fill": b"x" * 2**20},
        rf"grades\.jsonl:1: a line of more than {MAX_LINE_BYTES:,} bytes",
    ),
    "an experiment of newlines": (
        lambda ix: ix["experiments"][0]["path"],
        {"head": b"{"},
        r"experiments/\d+\.json: (declares|expands past) [\d,]+ bytes",
    ),
    "workspace.json padded": (lambda ix: INDEX, {"fill": b" " * 2**20}, r"workspace\.json: (declares|expands past)"),
    "a dataset's uploaded file of newlines": (
        _uploaded_documents,
        {},
        (
            r"upload/0: declares 1,073,741,824 bytes, more than the "
            r"1,000,000,000 one file of this store may hold"
        ),
    ),
    "a three-file dataset's documents of 200 MiB of newlines": (
        _uploaded_documents,
        {"head": b"id\ttext\n", "size": 200 * 2**20},
        r"dataset 1: docs\.tsv: the corpus is empty",
    ),
    "a zip dataset's corpus.jsonl of 1 GiB of newlines": (
        _uploaded_zip,
        {"inner": "corpus.jsonl"},
        r"dataset 2: invented\.zip/corpus\.jsonl: the corpus is empty",
    ),
    "an experiment of 60 MiB of empty lists": (
        lambda ix: ix["experiments"][0]["path"],
        {"head": b"[", "fill": b"[]," * (2**20 // 3), "tail": b"[]]", "size": 60 * 2**20},
        r"experiments/\d+\.json: its JSON would take about [\d,]+ MiB to read",
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("case", list(HUGE))
def test_a_huge_member_in_a_1_mb_zip_is_refused_within_fixed_memory(case, tmp_path):
    """The command line's import (its bounds the larger: 4 GiB a member) of an export whose member is 1 GiB (or an
    experiment of 60 MiB of empty lists, which json.loads would make 1.5 GiB of; a three-file dataset's documents
    of 200 MiB of newlines, which the store would keep as one value and the loaders once read as 1.2 GiB; a zip
    dataset's corpus.jsonl of 1 GiB of newlines inside its uploaded zip, parsed as it is decompressed):
    exit 2, one line naming the member and line, the store empty, and the process's peak memory grown by at most
    256 MiB over its size after a good import."""
    source, _, _ = filled(f"sqlite:///{tmp_path / 'source.sqlite'}")
    data = export_workspace(source)
    good = tmp_path / "good.zip"
    good.write_bytes(data)
    which, how, message = HUGE[case]
    member = which(_index(data))
    if member == INDEX:
        how = {**how, "head": zipfile.ZipFile(io.BytesIO(data)).read(INDEX)}
    crafted = _huge(data, member, tmp_path / "crafted.zip", **how)
    assert crafted.stat().st_size < 3 * 2**20
    other = f"sqlite:///{tmp_path / 'other.sqlite'}"
    done = subprocess.run(
        [sys.executable, "-c", _MEASURED, str(good), f"sqlite:///{tmp_path / 'first.sqlite'}", str(crafted), other],
        check=False,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["code"] == 2, done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert re.search(message, line) and line.startswith("retrieval: error: "), line
    assert out["grown"] <= 256 * 2**20, f"{out['grown'] / 2**20:.0f} MiB"
    assert open_workspace(other).is_empty()
