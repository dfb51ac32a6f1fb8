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
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from retrieval.corpus import dataset  # noqa: E402


@pytest.fixture(scope="session")
def invented():
    """The shipped invented corpus."""
    return dataset.load("invented")
