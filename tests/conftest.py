"""Shared fixtures: small deterministic datasets written by the tests themselves."""

from __future__ import annotations

import contextlib
import io
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# the bundled model's vectors are cached on disk: the tests' go to a folder of their own, never the user's
os.environ["RETRIEVAL_LAB_CACHE"] = tempfile.mkdtemp(prefix="retrieval-lab-tests-")
# and the workspace store: a SQLite file of the tests' own, never the user's store or a team's server
os.environ["RETRIEVAL_LAB_HOME"] = tempfile.mkdtemp(prefix="retrieval-lab-home-")
os.environ.pop("RETRIEVAL_LAB_DATABASE_URL", None)
os.environ.pop("RETRIEVAL_LAB_USER_HEADER", None)
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
# the tests mirror the source tree (tests/evaluation/ beside retrieval/evaluation/, tests/pages/ for the pages'
# AppTests, tests/browser/, tests/cli/ ...): every folder on the path, so a test imports another's helpers by its
# module's name (`from test_page_data import upload`); a test file's name is unique across the folders
for _folder in sorted(Path(__file__).resolve().parent.iterdir()):
    if _folder.is_dir() and not _folder.name.startswith(("_", ".")) and str(_folder) not in sys.path:
        sys.path.append(str(_folder))

from retrieval.corpus import dataset  # noqa: E402
from retrieval.kernels import dispatch  # noqa: E402


def run_cli(*args: str) -> subprocess.CompletedProcess:
    """`python -m retrieval ARGS` run in this process through `cli.main` (the code the command runs, without an
    interpreter's start of ~2 s): its exit status and what it wrote on stdout and stderr. The kernels' mode `main`
    may set (`serve_uncompiled`) is put back, so a fixture calling it leaves no trace in later tests."""
    from retrieval.cli import main

    out, err = io.StringIO(), io.StringIO()
    was = dispatch._MODE.get("uncompiled", False)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(list(args))
    finally:
        dispatch._MODE["uncompiled"] = was
    return subprocess.CompletedProcess(["python", "-m", "retrieval", *args], code, out.getvalue(), err.getvalue())


def run_process(*args: str) -> subprocess.CompletedProcess:
    """`python -m retrieval ARGS` as its own process, from the repository's root."""
    return subprocess.run(
        [sys.executable, "-m", "retrieval", *args], check=False, cwd=ROOT, capture_output=True, text=True, timeout=180
    )


@pytest.fixture(scope="session")
def invented():
    """The shipped invented corpus."""
    return dataset.load("invented")


@pytest.fixture(autouse=True)
def _a_store_of_each_test_s_own(tmp_path, monkeypatch):
    """Each test's app keeps its uploads in a store of its own (what one test stored never shows in another's)."""
    monkeypatch.setenv("RETRIEVAL_LAB_HOME", str(tmp_path / "lab-home"))


@pytest.fixture(autouse=True)
def _kernels_compiled_unless_a_test_says_otherwise():
    """A command run in the tests' process (`cli.main`) serves the kernels numba has not cached from their twins
    (`serve_uncompiled`); that mode ends with the test, so a later test's kernel calls run what it expects."""
    was = dispatch._MODE.get("uncompiled", False)
    yield
    dispatch._MODE["uncompiled"] = was


# ------------------------------------------------------------------ the quick tier stays quick
# Every test of 2 s or more carries `slow` (pyproject.toml's markers). Each test's time is recorded here: its wall
# time (setup, call and teardown, so a module fixture's cost counts for the test that pays it, as the quick tier runs
# it) and its CPU time (this process's threads and the child processes it waited for). The terminal summary lists every
# unmarked test of 2 s or more of wall time. With RETRIEVAL_LAB_CHECK_SLOW=1 (CI's quick-tier run, .ci/run) the
# session fails on an unmarked test over SLOW_SECONDS * SLOW_MARGIN of both wall and CPU time: a machine loaded by
# others stretches the wall time many times (x5 on a 2-core machine shared by 8 sessions) and the CPU time far less
# (x2), a slower machine stretches both by less than the margin, so noise cannot fail a healthy suite, while a test that needs its 5 s of work fails wherever it runs. A test between the
# two is listed, for the next person to mark or speed up. The CPU time holds a child's once it is reaped: the app's
# warm-up child (2-3 s of imports with numba's cache filled, which .ci/run's `warmup` does first) may land on the test
# running when it ends; the margin leaves room for it, and a test over it is measured again alone (`measured_alone`)
# before it fails the session. RETRIEVAL_LAB_TEST_TIMES=<file> appends each test's times.
SLOW_SECONDS = 2.0
SLOW_MARGIN = 2.5
UNMARKED = ("slow", "browser", "package")  # a test with none of these marks runs in the quick tier
CHECK_SLOW = "RETRIEVAL_LAB_CHECK_SLOW"
TIMES_FILE = "RETRIEVAL_LAB_TEST_TIMES"  # a path: each quick-tier test's times appended there as it ends (TSV)
_TIMES: dict[str, tuple[float, float]] = {}  # nodeid -> (wall seconds, CPU seconds) of each quick-tier test


def _cpu() -> float:
    """CPU seconds of this process (every thread) and of the children it has waited for."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    if any(item.get_closest_marker(m) for m in UNMARKED):
        return (yield)
    wall, cpu = time.perf_counter(), _cpu()
    try:
        return (yield)
    finally:
        _TIMES[item.nodeid] = times = (time.perf_counter() - wall, _cpu() - cpu)
        if os.environ.get(TIMES_FILE):
            with open(os.environ[TIMES_FILE], "a") as f:
                f.write(f"{times[0]:.3f}\t{times[1]:.3f}\t{item.nodeid}\n")


def unmarked_slow(times: dict[str, tuple[float, float]]) -> tuple[list, list]:
    """(listed, failing) of {test: (wall, CPU seconds)}: the tests of SLOW_SECONDS or more of wall time, slowest first,
    and those over SLOW_SECONDS * SLOW_MARGIN of both wall and CPU time; each as (wall, CPU, test)."""
    listed = sorted(((w, c, n) for n, (w, c) in times.items() if w >= SLOW_SECONDS), reverse=True)
    limit = SLOW_SECONDS * SLOW_MARGIN
    return listed, [(w, c, n) for w, c, n in listed if w > limit and c > limit]


def measured_alone(nodeid: str) -> tuple[float, float] | None:
    """A test's (wall, CPU seconds) measured again in a pytest process of its own, or None if it did not run: the
    CPU time of one process holds its background threads' (the app's warm-up, work ahead) and the children it reaped,
    which may land on whichever test is running; alone, a test pays only for itself and its fixtures."""
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "times.tsv"
        env = {k: v for k, v in os.environ.items() if k != CHECK_SLOW} | {TIMES_FILE: str(out)}
        command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", nodeid]
        subprocess.run(command, cwd=ROOT, env=env, capture_output=True, check=False, timeout=600)
        lines = out.read_text().splitlines() if out.exists() else []
    times = [tuple(line.split("\t", 2)) for line in lines]
    return next(((float(w), float(c)) for w, c, n in times if n == nodeid), None)


_CONFIRMED: dict[str, tuple[float, float] | None] = {}  # over the margin in the session -> measured alone


def pytest_sessionfinish(session, exitstatus):
    if os.environ.get(CHECK_SLOW) != "1" or session.exitstatus != 0:
        return
    limit = SLOW_SECONDS * SLOW_MARGIN
    for _w, _c, n in unmarked_slow(_TIMES)[1]:
        _CONFIRMED[n] = measured_alone(n)
    if any(m is not None and m[0] > limit and m[1] > limit for m in _CONFIRMED.values()):
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    listed, failing = unmarked_slow(_TIMES)
    if not listed:
        return
    terminalreporter.section(f"tests without `slow` that took {SLOW_SECONDS:g} s or more")
    for w, c, n in listed:
        over = "  <- over the margin" if (w, c, n) in failing else ""
        terminalreporter.line(f"{w:6.2f} s wall {c:6.2f} s CPU  {n}{over}")
    limit = SLOW_SECONDS * SLOW_MARGIN
    confirmed = []
    for n, m in _CONFIRMED.items():
        said = "did not run alone" if m is None else f"{m[0]:.2f} s wall {m[1]:.2f} s CPU"
        terminalreporter.line(f"measured again alone: {said}  {n}")
        if m is not None and m[0] > limit and m[1] > limit:
            confirmed.append(n)
    if confirmed:
        terminalreporter.line(
            f"{len(confirmed)} unmarked test(s) over {limit:g} s of wall and CPU time, in the session and alone: mark "
            f"them `slow` or make them fast ({CHECK_SLOW}=1 fails the session)",
            red=True,
        )
