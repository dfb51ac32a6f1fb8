"""Shared fixtures: small deterministic datasets written by the tests themselves."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from retrieval import dataset  # noqa: E402


@pytest.fixture(scope="session")
def invented():
    """The shipped invented corpus."""
    return dataset.load("invented")
