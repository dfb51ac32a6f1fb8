"""The quick tier stays quick: conftest's check of unmarked tests of 2 s or more, and CI running it on the quick tier
alone (where a module fixture's cost counts for the quick test that pays it)."""

from __future__ import annotations

import re

import pytest

from conftest import ROOT, SLOW_MARGIN, SLOW_SECONDS, measured_alone, unmarked_slow


def test_a_loaded_machine_lists_a_test_but_never_fails_it():
    # wall time stretched by other processes, little CPU of its own: listed (over 2 s), not failed
    listed, failing = unmarked_slow({"t::loaded": (9.0, 0.8), "t::quick": (0.3, 0.3)})
    assert [n for _, _, n in listed] == ["t::loaded"] and failing == []


def test_a_slower_machine_within_the_margin_lists_but_does_not_fail():
    near = SLOW_SECONDS * SLOW_MARGIN * 0.95  # a 1.9 s test on a machine twice as slow
    listed, failing = unmarked_slow({"t::near": (near, near)})
    assert [n for _, _, n in listed] == ["t::near"] and failing == []


def test_a_test_that_needs_its_seconds_of_work_fails_wherever_it_runs():
    times = {"t::work": (6.0, 5.5), "t::waits": (6.0, 0.1), "t::fast": (0.1, 0.1), "t::children": (5.5, 5.2)}
    listed, failing = unmarked_slow(times)
    assert [n for _, _, n in listed] == ["t::work", "t::waits", "t::children"]  # slowest first
    assert [n for _, _, n in failing] == ["t::work", "t::children"]


def test_ci_runs_the_quick_tier_alone_with_the_check_and_then_every_other_tier():
    script = (ROOT / ".ci" / "run").read_text()
    quick = re.search(r'^RETRIEVAL_LAB_CHECK_SLOW=1 \S+ -m pytest -q -m "(.+?)" --durations=15$', script, re.M)
    rest = re.search(r'^\S+ -m pytest -q -m "(.+?)" --durations=15$', script, re.M)
    assert quick and quick.group(1) == "not slow and not browser and not package"
    assert rest and rest.group(1) == "slow or browser or package"  # the complement: every test runs once


@pytest.mark.slow  # two pytest processes
def test_a_test_over_the_margin_is_measured_again_alone_before_it_fails():
    # the CPU time of one process holds its background threads' and reaped children's: a test over the margin in the
    # session is run again in a process of its own, and fails the session only if it is over the margin there too
    quick = "tests/test_tiers.py::test_a_loaded_machine_lists_a_test_but_never_fails_it"
    wall, cpu = measured_alone(quick)
    assert 0 <= cpu and wall < SLOW_SECONDS * SLOW_MARGIN and cpu < SLOW_SECONDS * SLOW_MARGIN
    assert measured_alone("tests/test_tiers.py::no_such_test") is None
