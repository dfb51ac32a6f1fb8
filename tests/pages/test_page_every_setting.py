"""Every page runs without an exception under every value of every parameter the sidebar or the URL accepts, alone
and with every other parameter at a value other than its default (issue 43, §1).

The values come from the tables the sidebar and the URL read, never from a list kept here: each parameter of
`retrieval.core.params.SPECS` the sidebar binds to the URL (`ui.state.DEFAULTS`) at each of its names (a choice of
names), each of its choices (a select slider) or the ends of its slider (a number); each metric of
`ui.state.METRIC_KINDS`; each system the sidebar can fuse, alone and all together with their weights at each end of
the weight's slider; the Tour's every step. A parameter added to the table is covered without anyone remembering,
and one the table holds that the sidebar does not offer must be named in `NOT_IN_THE_SIDEBAR` (a test checks it).

A session opens on the landing page with the setting in its URL (as a copied link does) and visits every page of
`ui.router.PAGES`; a failure names the setting and every page that raised.
"""

from __future__ import annotations

import pytest

from apptest import frame_with, open_app
from retrieval.core.params import SPECS
from ui import router, state, tour, tuning

pytestmark = pytest.mark.app

NOT_IN_THE_SIDEBAR = {  # parameters of the table the sidebar and the URL do not offer as such, and why
    "depth": "the list depth of the library and the command line; every page keeps its own",
    "weight": "a fused member's weight, one slider per member when more than two are fused (`w_` + the member's "
    "name): covered below with every system fused",
}
URL_PARAMETERS = tuple(name for name in SPECS if name in state.DEFAULTS)  # the table's, bound to the URL by the sidebar
PAGES = tuple(path for path, _, _ in router.PAGES)


def offered(name: str) -> tuple:
    """The values the sidebar or the URL offers for a parameter of the table: its names, its choices, or the ends of
    its slider (every value between them takes the same paths as the ends and the default)."""
    spec = SPECS[name]
    if spec.options:
        return spec.options
    if spec.choices:
        return spec.choices
    return (spec.cast(spec.lo), spec.cast(spec.hi))


def other_values(name: str) -> tuple:
    """The values offered other than the article's default."""
    default = SPECS[name].cast(SPECS[name].default)
    return tuple(v for v in offered(name) if v != default)


def url_text(value) -> str:
    """A value as a link carries it: 3.0 for a float slider, 20 for a whole number, the name for a choice."""
    return str(value)


OTHER_METRICS = tuple(kind for label, kind in state.METRIC_KINDS.items() if label != state.METRIC_DEFAULT)


def alone() -> list:
    """One setting per value other than the default of each parameter: (id, URL query)."""
    out = [(f"{name}={url_text(v)}", {name: url_text(v)}) for name in URL_PARAMETERS for v in other_values(name)]
    out += [(f"metric={kind}", {state.METRIC: kind}) for kind in OTHER_METRICS]
    return out


def combined() -> list:
    """Every parameter at once at a value other than its default: each one's first such value, then each one's last
    (for a slider, its low end and its high end), with a metric of each end of the metric table."""
    first = {name: url_text(other_values(name)[0]) for name in URL_PARAMETERS}
    last = {name: url_text(other_values(name)[-1]) for name in URL_PARAMETERS}
    return [
        ("every parameter at its first other value", {**first, state.METRIC: OTHER_METRICS[0]}),
        ("every parameter at its last other value", {**last, state.METRIC: OTHER_METRICS[-1]}),
    ]


def said(raised: list) -> str:
    """A failure's message: how many page runs raised, and each with its exceptions."""
    return f"{len(raised)} page runs raised:\n" + "\n".join(map(repr, raised))


def visit(at, pages=PAGES[1:]) -> list:
    """Each page in turn in the session (the landing page already ran): [(page, its exceptions)] for those that raised."""
    raised = [(PAGES[0], [e.value for e in at.exception])] if at.exception else []
    for page in pages:
        at.switch_page(page).run()
        if at.exception:
            raised.append((page, [str(e.value)[:300] for e in at.exception]))
    return raised


def open_with(query: dict):
    """A session opened on the landing page by a link with this query (no page switched to yet)."""
    return open_app(query=query)


def test_the_table_s_parameters_are_all_offered_or_said_not_to_be():
    # a parameter added to the table is either bound to the URL by the sidebar (and so covered below) or named here
    assert set(SPECS) == set(URL_PARAMETERS) | set(NOT_IN_THE_SIDEBAR)
    assert set(URL_PARAMETERS) >= {
        "k",
        "k1",
        "b",
        "dims",
        "rrf_k",
        "alpha",
        "fusion_depth",
        "stemmer",
        "stopwords",
        "query_words",
        "k3",
    }
    assert all(other_values(name) for name in URL_PARAMETERS)  # each has something other than its default to try
    # the settings are the table's: a slider's ends, every name of a choice, every choice of a select slider
    ids = [i for i, _ in alone()]
    assert "k1=0.0" in ids and "k1=3.0" in ids and "stemmer=snowball" in ids and "stemmer=porter" in ids
    assert "fusion_depth=1000" in ids and f"metric={OTHER_METRICS[-1]}" in ids and "stemmer=none" not in ids


@pytest.mark.slow
@pytest.mark.parametrize("query", [q for _, q in alone()], ids=[i for i, _ in alone()])
def test_every_page_runs_under_each_value_alone(query):
    at = open_with(query)
    raised = visit(at)
    assert not raised, said(raised)


@pytest.mark.slow
@pytest.mark.parametrize("query", [q for _, q in combined()], ids=[i for i, _ in combined()])
def test_every_page_tour_step_and_sweep_runs_with_every_parameter_changed(query):
    at = open_with(query)
    raised = visit(at)
    for step in range(1, tour.N_STEPS + 1):
        at.switch_page(PAGES[0]).run()
        at.segmented_control(key=state.STEP).set_value(step).run()
        if at.exception:
            raised.append((f"Tour step {step}", [str(e.value)[:300] for e in at.exception]))
    at.switch_page("pages/tuning.py").run()
    for sweep in at.segmented_control(key=tuning.KEY_WHAT).options:  # every sweep the Tuning page offers
        at.segmented_control(key=tuning.KEY_WHAT).set_value(sweep).run()
        if at.exception:
            raised.append((f"Tuning, {sweep}", [str(e.value)[:300] for e in at.exception]))
    assert not raised, said(raised)


@pytest.mark.slow
@pytest.mark.parametrize("step", range(2, tour.N_STEPS + 1))
def test_the_tour_runs_at_every_step_of_its_link(step):
    at = open_with({state.STEP: str(step)})
    assert at.segmented_control(key=state.STEP).value == step
    assert not at.exception, [e.value for e in at.exception]


def fused_settings(at) -> list:
    """The fusions the sidebar offers: each system alone, and every system with each weight at each end of its slider."""
    systems = list(at.sidebar.multiselect(key=state.MEMBERS).options)
    spec = SPECS["weight"]
    ends = (float(spec.lo), float(spec.hi))
    return (
        [([m], None) for m in systems]
        + [(systems, {m: end for m in systems}) for end in ends]
        + [(systems, {m: (ends[1] if i == 0 else ends[0]) for i, m in enumerate(systems)})]
    )


@pytest.mark.slow
def test_every_page_runs_with_each_fusion_the_sidebar_offers():
    probe = open_with({})
    settings = fused_settings(probe)
    assert len(settings) >= 5 and {"BM25", "LSA"} <= set(settings[-1][0])
    raised = []
    for members, weights in settings:
        at = open_with({state.MEMBERS: members})
        assert at.sidebar.multiselect(key=state.MEMBERS).value == members
        for m, w in (weights or {}).items():
            at.sidebar.slider(key=state.WEIGHT + m).set_value(w).run()
        raised += [(members, weights, page, e) for page, e in visit(at)]
    assert not raised, said(raised)


def test_every_weight_at_zero_fuses_with_equal_weights_and_says_so():
    """The sidebar offers each weight down to 0; all at 0 is no fusion (the library refuses it): the sidebar says so
    and the fusion weighs each member the weight's default, as a session that never moved the weights does."""
    members = ["BM25", "LSA", "dense"]
    untouched = open_app("pages/overview.py", {state.MEMBERS: members})
    at = open_app("pages/overview.py", {state.MEMBERS: members})
    for m in members:
        at.sidebar.slider(key=state.WEIGHT + m).set_value(float(SPECS["weight"].lo)).run()
    assert not at.exception, [e.value for e in at.exception]
    (warning,) = [w.value for w in at.sidebar.warning if "Every weight is 0" in w.value]
    assert warning.endswith(f"weighs each member {float(SPECS['weight'].default):g} until one is.")
    assert not [w for w in untouched.sidebar.warning if "Every weight is 0" in w.value]
    assert frame_with(at, "nDCG@5").loc["weighted"].equals(frame_with(untouched, "nDCG@5").loc["weighted"])
    at.sidebar.slider(key=state.WEIGHT + "LSA").set_value(1.0).run()  # one above 0: the sliders' weights again
    assert not [w for w in at.sidebar.warning if "Every weight is 0" in w.value]
    assert not frame_with(at, "nDCG@5").loc["weighted"].equals(frame_with(untouched, "nDCG@5").loc["weighted"])
