"""The README's Python quick start runs as written and prints what the README says it prints."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from conftest import ROOT


def readme_block(after: str, language: str) -> str:
    """The first fenced block of `language` after the heading `after` in the README."""
    text = (ROOT / "README.md").read_text()
    section = text[text.index(after) :]
    match = re.search(rf"```{language}\n(.*?)```", section, re.S)
    assert match, f"no ```{language} block after {after!r}"
    return match.group(1)


@pytest.mark.slow
def test_the_python_quick_start_prints_what_the_readme_shows(tmp_path):
    code = readme_block("## Quick start: the Python API", "python")
    shown = readme_block("## Quick start: the Python API", "text")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout == shown


def test_the_first_lines_say_where_to_point_the_browser():
    """The server is headless (no browser opens by itself): the README's first lines give the address the
    config serves, as `retrieval-lab --help` does."""
    from retrieval import lab

    server = lab.server_settings(ROOT / "app.py")
    assert server["headless"] is True
    head = "\n".join((ROOT / "README.md").read_text().splitlines()[:5])
    assert lab.address(server) == "http://127.0.0.1:8501" and lab.address(server) in head and "no browser opens" in head


def test_the_command_line_quick_start_shows_what_evaluate_prints(capsys):
    """The console block's `evaluate` lines, up to its '…', are the command's first lines as printed."""
    from retrieval.cli import main

    block = readme_block("## Quick start: the command line", "console").splitlines()
    assert block[0] == "$ .venv/bin/python -m retrieval evaluate"
    shown = block[1 : block.index(next(line for line in block if line.startswith("…")))]
    assert main(["evaluate"]) == 0
    assert capsys.readouterr().out.splitlines()[: len(shown)] == shown
