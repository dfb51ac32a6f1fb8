"""`pip install .`: the wheel carries the library, the invented corpus and the app; installed, it runs from any folder.

The wheel is built offline (`--no-build-isolation --no-index`) from a copy of the checkout, so no stale `build/`
can add or hide a file, then installed with `pip install --no-deps --target`; every run below has that target as
its only path to `retrieval` (the current folder is an empty temporary one, not the repository).
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import urllib.request
import zipfile
from pathlib import Path

import pytest

from conftest import ROOT
from retrieval.store.workspace import known_revisions

pytestmark = pytest.mark.package

CORPUS = ROOT / "data" / "invented"  # the repository's data/, shipped as retrieval/_data/
APP_FILES = [
    "app.py",
    ".streamlit/config.toml",
    *(f"{d}/{p.name}" for d in ("pages", "ui") for p in sorted((ROOT / d).glob("*.py"))),
]
SKIP_COPY = {".git", ".venv", "__pycache__", "build", "dist", ".pytest_cache"}


def _pip(*args: str) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "pip", *args, "--no-deps", "--no-index", "--disable-pip-version-check"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]


def _ignore(folder: str, names: list[str]) -> set[str]:
    out = {n for n in names if n in SKIP_COPY or n.endswith(".egg-info")}
    return out | ({"out"} if Path(folder) == ROOT / "bench" else set())


def _seed_numba_cache(target: Path) -> None:
    """Give the installed kernels the checkout's compiled cache (same bytes, same mtime), sparing a 20 s compile.

    Numba keys its cache on the source file's size and mtime, not its path; a cold checkout just compiles.
    """
    cache = target / "retrieval" / "__pycache__"
    cache.mkdir(exist_ok=True)
    for f in (ROOT / "retrieval" / "__pycache__").glob("*.nb[ic]"):
        shutil.copy2(f, cache / f.name)
    for src in (ROOT / "retrieval").glob("*.py"):
        st = src.stat()
        os.utime(target / "retrieval" / src.name, ns=(st.st_atime_ns, st.st_mtime_ns))


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    if not (importlib.util.find_spec("setuptools.command.bdist_wheel") or importlib.util.find_spec("wheel")):
        why = "building offline needs setuptools>=70.1 (pinned in requirements-dev.txt): pip install -r requirements-dev.txt"
        if os.environ.get("CI"):
            pytest.fail(why, pytrace=False)
        pytest.skip(why)
    base = tmp_path_factory.mktemp("package")
    shutil.copytree(ROOT, base / "src", ignore=_ignore)
    _pip("wheel", "--no-build-isolation", "-w", str(base / "dist"), str(base / "src"))
    (whl,) = (base / "dist").glob("retrieval_lab-*.whl")
    return whl


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> tuple[Path, Path, dict[str, str]]:
    """(target, an empty working folder, the environment whose only path to `retrieval` is the target)."""
    target = tmp_path_factory.mktemp("site")
    _pip("install", "--target", str(target), str(wheel))
    _seed_numba_cache(target)
    env = {**os.environ, "PYTHONPATH": str(target), "PYTHONNOUSERSITE": "1"}
    return target, tmp_path_factory.mktemp("elsewhere"), env


def test_the_wheel_holds_the_library_the_corpus_and_the_app_and_nothing_else(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    corpus = {f"retrieval/_data/invented/{p.relative_to(CORPUS).as_posix()}" for p in CORPUS.rglob("*") if p.is_file()}
    assert {
        "retrieval/_data/invented/README.md",
        "retrieval/_data/invented/corpus.jsonl",
        "retrieval/_data/invented/queries.jsonl",
        "retrieval/_data/invented/qrels/test.tsv",
    } <= corpus
    assert corpus <= names
    assert {p.relative_to(ROOT).as_posix() for p in (ROOT / "retrieval").rglob("*.py")} <= names
    assert {f"retrieval/_app/{f}" for f in APP_FILES} <= names
    dist_info = wheel.name.split("-py3")[0] + ".dist-info/"
    assert {n for n in names if not n.startswith(("retrieval/", dist_info))} == set()
    assert not any("__pycache__" in n for n in names)


def test_the_wheel_declares_requirements_txt_pins_and_the_command(wheel):
    with zipfile.ZipFile(wheel) as z:
        dist_info = wheel.name.split("-py3")[0] + ".dist-info"
        meta = z.read(f"{dist_info}/METADATA").decode()
        entry_points = z.read(f"{dist_info}/entry_points.txt").decode()
    pins = [
        ln.strip()
        for ln in (ROOT / "requirements.txt").read_text().splitlines()
        if ln.strip() and not ln.startswith("#")
    ]
    dev = [
        ln.strip()
        for ln in (ROOT / "requirements-dev.txt").read_text().splitlines()
        if ln.strip() and not ln.startswith(("#", "-r"))
    ]
    declared = [ln.removeprefix("Requires-Dist: ") for ln in meta.splitlines() if ln.startswith("Requires-Dist: ")]
    assert [d for d in declared if "; extra ==" not in d] == pins
    assert [d.split(";")[0].strip() for d in declared if d.endswith('extra == "dev"')] == dev
    assert "Requires-Python: >=3.11" in meta.splitlines()
    assert "retrieval-lab = retrieval.lab:main" in entry_points.splitlines()


def test_installed_evaluate_runs_from_another_folder_on_the_packaged_corpus(installed):
    target, elsewhere, env = installed
    out = subprocess.run(
        [sys.executable, "-m", "retrieval", "evaluate", "--json"],
        cwd=elsewhere,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["dataset"] == {"name": "invented", "documents": 28, "queries": 14}
    assert len(report["per_query"]) > 0 and not report["warnings"]


def test_installed_library_is_the_target_copy_and_imports_no_streamlit(installed):
    target, elsewhere, env = installed
    probe = (
        "import json, sys, retrieval, retrieval.cli, retrieval.lab, retrieval.corpus.dataset as d; "
        "print(json.dumps([retrieval.__file__, str(d.BUILTIN['invented']), str(retrieval.lab.app_path()), "
        "'streamlit' in sys.modules]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], cwd=elsewhere, env=env, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    module, corpus, app, streamlit_loaded = json.loads(out.stdout)
    assert Path(module) == target / "retrieval" / "__init__.py"
    assert Path(corpus) == target / "retrieval" / "_data" / "invented"
    assert Path(app) == target / "retrieval" / "_app" / "app.py"
    assert streamlit_loaded is False


def test_installed_store_makes_its_tables_from_the_packaged_migrations(installed):
    target, elsewhere, env = installed
    probe = (
        "import json, retrieval.store.workspace as w; ws = w.open_workspace('sqlite:///store.sqlite'); "
        "print(json.dumps([w.__file__, w.known_revisions(), ws.datasets()]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], cwd=elsewhere, env=env, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    module, revisions, stored = json.loads(out.stdout)
    assert Path(module) == target / "retrieval" / "store" / "workspace.py"
    assert revisions == known_revisions() and stored == [] and (elsewhere / "store.sqlite").is_file()


def test_installed_app_opens_on_the_tour_with_the_invented_corpus(installed):
    target, elsewhere, env = installed
    script = (
        "import json, sys; from streamlit.testing.v1 import AppTest; from retrieval import lab; "
        "app = lab.app_path(); sys.path.insert(0, str(app.parent)); "  # as `streamlit run` does
        "at = AppTest.from_file(str(app), default_timeout=120).run(); import ui; "
        "print(json.dumps([ui.__file__, [e.value for e in at.exception], at.title[0].value, at.sidebar.markdown[0].value]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], cwd=elsewhere, env=env, capture_output=True, text=True, timeout=180
    )
    assert out.returncode == 0, out.stderr
    ui_file, exceptions, title, sidebar = json.loads(out.stdout.splitlines()[-1])
    assert Path(ui_file) == target / "retrieval" / "_app" / "ui" / "__init__.py"
    assert exceptions == [] and title == "Tour"  # the landing page
    assert "invented" in sidebar and "28 documents" in sidebar


def test_the_retrieval_lab_command_serves_the_installed_app(installed):
    target, elsewhere, env = installed
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cmd = [
        str(target / "bin" / "retrieval-lab"),
        "--server.port",
        str(port),
        "--server.address",
        "127.0.0.1",
        "--server.headless",
        "true",
        "--browser.gatherUsageStats",
        "false",
    ]
    proc = subprocess.Popen(cmd, cwd=elsewhere, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    watchdog = threading.Timer(60, proc.kill)  # a server that never announces itself ends the read below
    watchdog.start()
    try:
        said = []
        for line in proc.stdout:  # Streamlit prints the URL once it listens
            said.append(line)
            if f"http://127.0.0.1:{port}" in line:
                break
        assert f"http://127.0.0.1:{port}" in "".join(said), "".join(said)[-2000:]
        assert urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=10).read() == b"ok"
    finally:
        watchdog.cancel()
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_in_a_checkout_the_command_finds_the_root_app():
    from retrieval import lab

    assert lab.app_path() == ROOT / "app.py"
