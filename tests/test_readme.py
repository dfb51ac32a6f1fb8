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
    section = text[text.index(after):]
    match = re.search(rf"```{language}\n(.*?)```", section, re.S)
    assert match, f"no ```{language} block after {after!r}"
    return match.group(1)


@pytest.mark.slow
def test_the_python_quick_start_prints_what_the_readme_shows(tmp_path):
    code = readme_block("## Quick start: the Python API", "python")
    shown = readme_block("## Quick start: the Python API", "text")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout == shown
