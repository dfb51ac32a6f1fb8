"""A command pays only for the modules it uses: `python -m retrieval --help`, `gate`, `experiments` and
`workspace` never import the engine, the kernels, numba, scipy or scikit-learn (issue 45 §6), while `evaluate` still
runs the engine and `import retrieval` still gives the whole public API of the README.

What a process imported is read from `python -X importtime`'s list of every module it imported (a list of names,
not a timing: the times are in bench/RESULTS.md)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from conftest import ROOT
from retrieval import cli

HEAVY = (
    "numba",
    "scipy",
    "sklearn",
    "pandas",
    "pyarrow",
    "retrieval.engine",
    "retrieval.kernels",
    "retrieval.retrievers",
    "retrieval.analyses.tuning",
)


def imported(*argv: str, cwd=ROOT) -> tuple[subprocess.CompletedProcess, set[str]]:
    """`python -X importtime -m retrieval ARGV...`: the finished process and the names of every module it imported."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    run = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "retrieval", *argv],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    names = {line.rsplit("|", 1)[1].strip() for line in run.stderr.splitlines() if line.startswith("import time:")}
    assert "retrieval.cli" in names  # the list was read
    return run, names


def heavy(names: set[str]) -> list[str]:
    return sorted(n for n in names if any(n == h or n.startswith(h + ".") for h in HEAVY))


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    """Two `evaluate --json` reports of the invented corpus (the article's parameters, and k1 = b = 0)."""
    d = tmp_path_factory.mktemp("reports")
    paths = []
    for name, extra in (("base", []), ("k1zero", ["--k1", "0", "--b", "0"])):
        out = subprocess.run(
            [sys.executable, "-m", "retrieval", "evaluate", "--json", *extra],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )
        assert out.returncode == 0, out.stderr
        (d / f"{name}.json").write_text(out.stdout)
        paths.append(str(d / f"{name}.json"))
    return paths


@pytest.mark.slow
@pytest.mark.parametrize(
    "argv",
    [
        ["--help"],
        ["gate", "--help"],
        ["experiments", "--help"],
        ["workspace", "--help"],
        ["experiments", "list", "--help"],
        ["workspace", "trash", "--help"],
    ],
)
def test_help_loads_no_engine(argv):
    run, names = imported(*argv)
    assert run.returncode == 0, run.stderr
    assert "usage: python -m retrieval" in run.stdout
    assert heavy(names) == []
    assert "sqlalchemy" not in names or argv[0] in ("experiments", "workspace")  # the store: only its commands


@pytest.mark.slow
def test_a_gate_run_reads_two_reports_without_the_engine(reports):
    base, worse = reports
    run, names = imported("gate", "--baseline", base, "--current", worse, "--json")
    assert run.returncode in (0, 1), run.stderr
    assert '"metric": "ndcg@5"' in run.stdout
    assert heavy(names) == [] and "sqlalchemy" not in names


@pytest.mark.slow
def test_experiments_and_workspace_runs_load_the_store_but_no_engine(tmp_path):
    store = f"sqlite:///{tmp_path / 'store.sqlite'}"
    for argv in (["experiments", "list", "--store", store, "--json"], ["workspace", "trash", "--store", store]):
        run, names = imported(*argv, cwd=tmp_path)
        assert run.returncode == 0, run.stderr
        assert "retrieval.store.workspace" in names
        assert heavy(names) == [], argv


@pytest.mark.slow
def test_evaluate_still_runs_the_engine():
    run, names = imported("evaluate", "--metrics", "ndcg@5")
    assert run.returncode == 0, run.stderr
    assert {"retrieval.engine.engine", "numba"} <= names
    assert "dataset invented: 28 documents" in run.stdout


@pytest.mark.slow
def test_import_retrieval_still_gives_the_whole_public_api():
    """Only `python -m retrieval` leaves the package's names out (retrieval/__init__.py); `import retrieval` and
    `python -c` have them all."""
    probe = "import retrieval; print(all(hasattr(retrieval, n) for n in retrieval.__all__), len(retrieval.__all__))"
    out = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=120, check=False
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "15"]


def test_every_command_has_its_module_and_only_the_named_one_is_built():
    """The table routes each command to a module with its arguments; a parser built for one command leaves the
    others' arguments out (their modules unloaded), and the full parser has every command's."""
    assert set(cli.COMMANDS) == {
        "evaluate",
        "compare",
        "tune",
        "holes",
        "fusion",
        "gate",
        "experiments",
        "workspace",
        "warmup",
    }
    for name, (module, _, _) in cli.COMMANDS.items():
        assert name in cli._module(name).ARGUMENTS, module
    gate_only = cli.build_parser("gate")
    assert gate_only.parse_args(["gate", "--baseline", "a", "--current", "b"]).func.__module__ == "retrieval.cli.gate"
    with pytest.raises(Exception, match="unrecognized arguments: --k1"):
        gate_only.parse_args(["evaluate", "--k1", "1"])  # evaluate's flags were not added
    assert cli.build_parser().parse_args(["evaluate", "--k1", "1"]).k1 == 1.0


@pytest.mark.slow
def test_runs_on_judgements_alone_load_no_engine_no_index_and_no_scikit_learn(tmp_path):
    """`evaluate --qrels --run`: no corpus, so nothing of the engine, the kernels, numba, scipy or scikit-learn."""
    run_file = tmp_path / "mine.run"
    run_file.write_text("q01 Q0 refund1 1 2.0 mine\nq01 Q0 pricing1 2 1.0 mine\nq02 Q0 refund1 1 1.0 mine\n")
    qrels = ROOT / "data" / "invented" / "qrels" / "test.tsv"
    run, names = imported("evaluate", "--qrels", str(qrels), "--run", f"mine={run_file}", "--json")
    assert run.returncode == 0, run.stderr
    assert '"mine"' in run.stdout
    light = ("retrieval.retrievers", "retrieval.retrievers.listed")  # a Ranking and from_run: numpy only
    assert [n for n in heavy(names) if n not in light] == []
