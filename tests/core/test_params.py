"""The one parameter table: validation naming the parameter, slider steps, tuning grids, and every reader of it."""

from __future__ import annotations

import math

import numpy as np
import pytest

from retrieval import cli
from retrieval.analyses import tuning
from retrieval.core import params
from retrieval.core.errors import InputError
from retrieval.core.params import SPECS, Params


def test_the_defaults_are_the_articles():
    p = Params()
    assert (p.k1, p.b, p.dims, p.rrf_k, p.alpha, p.fusion_depth) == (1.2, 0.75, 6, 60.0, 0.5, 10)
    assert p.members == ("BM25", "LSA") and p.fusion_weights() == (0.5, 0.5)
    assert params.default("k") == 5


@pytest.mark.parametrize(
    "name, bad, says",
    [
        ("k1", -0.1, "k1 must be a number >= 0, got -0.1"),
        ("k1", math.nan, "k1 must be a number >= 0, got nan"),
        ("b", 1.5, "b must be in [0, 1], got 1.5"),
        ("alpha", -1, "alpha must be in [0, 1], got -1"),
        ("rrf_k", math.inf, "rrf_k must be a number >= 0, got inf"),
        ("dims", 2.5, "dims must be a whole number >= 1, got 2.5"),
        ("dims", 0, "dims must be a whole number >= 1, got 0"),
        ("fusion_depth", 0, "fusion_depth must be a whole number >= 1, got 0"),
        ("k1", "1.2", "k1 must be a number, got '1.2'"),
        ("dims", True, "dims must be a number, got True"),
    ],
)
def test_a_bad_value_is_refused_naming_the_parameter_and_its_range(name, bad, says):
    with pytest.raises(InputError) as e:
        params.check(name, bad)
    assert str(e.value) == says
    with pytest.raises(InputError, match=name):
        Params(**{name: bad})  # a Params cannot be made invalid


def test_an_unknown_parameter_lists_the_known_ones():
    with pytest.raises(InputError, match="unknown parameter 'k2': known are k, k1, b, dims, rrf_k, alpha"):
        params.check("k2", 1)


def test_members_and_weights_are_checked_when_made():
    assert Params(members=("BM25",)).fusion_weights() == (1.0,)
    assert Params(members=("BM25", "LSA", "x"), weights=(2, 1, 1)).fusion_weights() == (2.0, 1.0, 1.0)
    for bad in (
        dict(members=()),
        dict(members=("BM25", "BM25")),
        dict(members=["BM25", "LSA"]),
        dict(members=("a", "b", "c")),
        dict(weights=(1.0,)),
        dict(weights=(-1.0, 2.0)),
        dict(weights=(0.0, 0.0)),
    ):
        with pytest.raises(InputError):
            Params(**bad)


def test_snap_goes_to_the_nearest_step_inside_the_slider_and_the_datasets_limit():
    assert SPECS["k1"].snap(1.23) == 1.25 and SPECS["k1"].snap(7.0) == 3.0 and SPECS["k1"].snap(-1) == 0.0
    assert SPECS["alpha"].snap(0.52) == 0.5
    assert SPECS["dims"].snap(6.4) == 6 and isinstance(SPECS["dims"].snap(6.4), int)
    assert SPECS["dims"].snap(150, hi=27) == 27  # the corpus allows min(documents, terms) - 1
    assert SPECS["rrf_k"].snap(0.2) == 1  # the slider starts at 1 (the library accepts 0)


def test_the_tuning_grids_are_the_tables_written_out():
    assert np.array_equal(tuning.K1_GRID, [i * 3 / 15 for i in range(16)]) and 1.2 in tuning.K1_GRID
    assert np.array_equal(tuning.B_GRID, [i / 10 for i in range(11)]) and 0.75 not in tuning.B_GRID
    assert np.array_equal(tuning.ALPHA_GRID, [i / 20 for i in range(21)])
    assert np.array_equal(tuning.RRF_K_GRID, np.arange(1, 201))
    assert np.array_equal(params.grid_for("dims", limit=27), np.arange(1, 28))
    assert params.grid_for("dims").max() == params.MAX_DIMS == SPECS["dims"].hi


def test_the_command_line_flags_come_from_the_table():
    parser = cli.build_parser()
    args = parser.parse_args(["evaluate"])
    for name in ("k1", "b", "dims", "rrf_k", "alpha", "fusion_depth"):
        assert getattr(args, name) == params.default(name)
    assert parser.parse_args(["evaluate", "--rrf-k", "10", "--fusion-depth", "100"]).rrf_k == 10.0
    assert cli.main(["evaluate", "--b", "2"]) == 2  # one line naming b, exit 2


def test_the_sidebar_reads_the_same_table():
    from ui import state

    assert list(state.SLIDERS) == list(params.SLIDERS)
    for name, spec in state.SLIDERS.items():
        assert spec is SPECS[name]
        assert state.DEFAULTS[name] == params.default(name)
