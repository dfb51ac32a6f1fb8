"""The layers hold: the import-linter contract in pyproject.toml is kept, and no module of the project imports
another of its modules inside a function (which would hide a cycle from the contract)."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

PACKAGES = ("retrieval", "ui")


def imports_inside_functions(root: Path) -> list[str]:
    """'file:line module' for each import of a project module made inside a function or method."""
    found = []
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            tree = ast.parse(path.read_text(), str(path))
            for fn in ast.walk(tree):
                if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    continue
                for node in ast.walk(fn):
                    if isinstance(node, ast.ImportFrom):
                        names = [node.module or ""] if not node.level else ["." * node.level + (node.module or "")]
                    elif isinstance(node, ast.Import):
                        names = [a.name for a in node.names]
                    else:
                        continue
                    for name in names:
                        if name.startswith(".") or name.split(".")[0] in PACKAGES:
                            found.append(f"{path.relative_to(root)}:{node.lineno} {name}")
    return found


def test_no_module_imports_the_project_inside_a_function():
    assert imports_inside_functions(ROOT) == []


def test_the_checker_finds_an_import_made_inside_a_function(tmp_path):
    (tmp_path / "retrieval").mkdir()
    (tmp_path / "ui").mkdir()
    (tmp_path / "retrieval" / "a.py").write_text("def f():\n    from . import b\n    import numpy\n")
    assert imports_inside_functions(tmp_path) == ["retrieval/a.py:2 ."]


def test_the_import_linter_contracts_are_kept():
    exe = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    if exe is None:
        pytest.fail("lint-imports is not installed: pip install -r requirements-dev.txt")
    out = subprocess.run([exe, "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    assert "2 kept, 0 broken" in out.stdout
