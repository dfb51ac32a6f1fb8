"""Shared fixtures: small deterministic datasets written by the tests themselves."""

from __future__ import annotations

import os
import sys
import tempfile
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

from retrieval.corpus import dataset  # noqa: E402
from retrieval.kernels import dispatch  # noqa: E402


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
