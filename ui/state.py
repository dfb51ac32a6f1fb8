"""Session-state keys, the article's defaults, and the idempotent init every page starts from."""

from __future__ import annotations

import streamlit as st

from retrieval.core.params import (
    ANALYSIS,
    ARTICLE_MEMBERS,  # noqa: F401 - the sidebar's
    QUESTION_SIDE,
    SPECS,
    Params,
)
from retrieval.core.params import SLIDERS as SLIDER_NAMES
from retrieval.corpus.text import Analysis
from retrieval.evaluation.metrics import NO_CUTOFF

from .router import pages

# widget keys (also the URL query parameters they are bound to)
K = "k"
K1 = "k1"
B = "b"
DIMS = "dims"
RRF_K = "rrf_k"
ALPHA = "alpha"
METRIC = "metric"
MEMBERS = "fuse"  # the systems both fusions combine
FUSION_DEPTH = "fusion_depth"
WEIGHT = "w_"  # + a member's name: its weight when more than two are fused
STEMMER = "stemmer"  # the text analysis (retrieval.core.params.ANALYSIS, QUESTION_SIDE): the sidebar's "Text analysis"
STOPWORDS = "stopwords"
QUERY_WORDS = "query_words"
K3 = "k3"
STEP = "step"  # the Tour's step (1 to ui.tour.N_STEPS), bound to the URL: ?step=4
# plain session keys
DATASET = "dataset"  # an uploaded retrieval.corpus.dataset.Dataset, or None for the invented corpus
RUNS = "runs"  # uploaded retrieval.corpus.dataset.TrecRun objects, by name
UPLOAD_MESSAGES = "upload_messages"  # the Data page's last messages, (kind, text) each
MESSAGES_FOR = "data_messages_for"  # fingerprint of the dataset the upload messages were written about
DENSE = "dense_source"  # the session's dense vectors (retrieval.corpus.embeddings.Aligned), or None: see ui/dense.py
# the Playground's (ui/playground.py): the typed question, the dataset question it started from, its judgements
PG_TEXT = "pg_text"  # the text input's value
PG_FROM = "pg_from"  # the "start from a dataset question" selector's value: a question id, or None
PG_ORIGIN = "pg_origin"  # the question id whose text and judgements the typed one started from, or None
PG_JUDGED = "pg_judged"  # the typed question's judgements, document id -> grade (session-local, bounded)
PG_VERSION = "pg_version"  # the judging table's generation: a new table (key) after each applied edit
PG_ROWS = "pg_rows"  # (generation, the document ids of the judging table's rows, in order)
PG_DATASET = "pg_dataset"  # the corpus fingerprint of the dataset the Playground's state belongs to
GRADES = "workspace_grades"  # the workspace raters' grades as last read: {dataset fingerprint: tuple of store Grades}
COMBINED = "combined_grades"  # (dataset fingerprint, the grades read, rule, their combination): ui.in_use
RULE = "rule"  # how the raters' grades combine: the Judge page's selector, in the URL on every page (?rule=median),
# written and followed by ui.workspace with the dataset (a widget bound to the URL would leave it on other pages)
GIVEN = "grades_given"  # grades this session gave (bounded: ui.workspace.MAX_GIVEN)
EXPERIMENTS = "experiments"  # the saved experiments as last read: {dataset fingerprint: (entries, records by id)}
PAGE_SEEN = "page_seen"  # the page the last run showed (entering the Judge page reads the grades again)
JUDGED_RANKINGS = "judged_rankings"  # (fingerprint, runs, their rankings) on judgements alone: ui.cache.run_rankings
JUDGED_DATASET = "judged_dataset"  # (dataset fingerprint, the grades, the dataset with them): ui.cache.current_dataset
# the workspace's (ui/workspace.py)
RATER = "rater"  # the name this person typed (who uploads and grades), unless a proxy names them
STORED = "stored_dataset"  # the id in the store of the dataset in use, once it (or one of its runs) is kept there
VECTORS = "stored_vectors"  # (dataset id, name) of the stored embeddings the session uses as its dense source
ADDED_RUNS = "added_runs"  # (dataset id, run name) of the runs this session added to the store
STORE_PROBLEM = "store_problem"  # why the store cannot be opened, when it cannot
LINK_FOLLOWED = "link_followed"  # the session's first run opened what its URL names
LINK_PROBLEM = "link_problem"  # (dataset id, runs, messages): what the session's link named that could not be opened
METRIC_LINK_READ = "metric_link_read"  # the session's first run took the metric its URL names (`read_metric_link`)

METRIC_KINDS = {  # label shown -> metric kind in retrieval.evaluation.metrics
    "nDCG (linear gain)": "ndcg",
    "nDCG (exponential gain, 2^g - 1)": "ndcg_exp",
    "recall": "recall",
    "hit rate": "hit",
    "MRR": "mrr",
    "precision": "precision",
    "MAP (mean average precision)": "map",
    "R-precision": "rprec",
    "bpref (judged documents only)": "bpref",
    "judged@k (coverage)": "judged",
}


METRIC_LABELS = {kind: label for label, kind in METRIC_KINDS.items()}  # metric kind (the URL's) -> label shown


SLIDERS = {name: SPECS[name] for name in SLIDER_NAMES}  # bounds, step, default and help: retrieval.core.params
METRIC_DEFAULT = "nDCG (linear gain)"
TEXT = {name: SPECS[name] for name in (*ANALYSIS, *QUESTION_SIDE)}  # the "Text analysis" group's
DEFAULTS = {
    **{key: s.cast(s.default) for key, s in SLIDERS.items()},
    METRIC: METRIC_DEFAULT,
    MEMBERS: list(ARTICLE_MEMBERS),
    FUSION_DEPTH: SPECS["fusion_depth"].cast(SPECS["fusion_depth"].default),
    **{key: s.cast(s.default) for key, s in TEXT.items()},
}


FRAME = "_frame_running"  # True while app.py runs (set around its run): a page run without it ran alone


def begin_frame() -> None:
    """Mark this run as going through app.py (app.py calls it first, and `end_frame` when the run ends)."""
    st.session_state[FRAME] = True


def end_frame() -> None:
    """The run through app.py is over."""
    st.session_state[FRAME] = False


def leave_legacy_pages_mode() -> bool:
    """Rerun through app.py when Streamlit ran a page on its own; True when it did (the run then stops).

    Until a session has called `st.navigation`, Streamlit (1.67) treats a `pages/` folder beside app.py as the
    legacy multipage layout and runs a page without app.py: a server's first session opened on a page's URL,
    and every AppTest rerun. There is then no frame and no sidebar. Calling `st.navigation` (public API) ends
    that mode for the process, and the rerun goes through app.py. tests/pages/test_app.py
    `test_streamlit_still_runs_a_page_alone` fails the day Streamlit stops doing this, so this can go.
    """
    if st.session_state.get(FRAME):
        return False

    st.navigation(pages(), position="hidden")
    st.rerun()
    return True  # not reached: st.rerun stops the run


def init_state() -> None:
    """Give every shared key its default once; later calls change nothing (pages call it first, app.py too)."""
    leave_legacy_pages_mode()
    for key, value in DEFAULTS.items():
        st.session_state.setdefault(key, value)
    st.session_state.setdefault(DATASET, None)
    st.session_state.setdefault(RUNS, {})
    st.session_state.setdefault(UPLOAD_MESSAGES, [])
    st.session_state.setdefault(DENSE, None)
    st.session_state.setdefault(GRADES, {})
    read_metric_link()


def metric_of_link(raw) -> str | None:
    """The label of the metric a link names: by its short name (``metric=bpref``, what the app writes) or by its
    label (``metric=bpref (judged documents only)``, what older links carry); None for anything else."""
    if isinstance(raw, (list, tuple)):  # a repeated parameter: its last value
        raw = raw[-1] if raw else None
    if not isinstance(raw, str):
        return None
    return METRIC_LABELS.get(raw.strip()) or (raw if raw in METRIC_KINDS else None)


def read_metric_link() -> None:
    """On a session's first run, the metric its URL names (`metric_of_link`; anything else leaves the default)."""
    if st.session_state.get(METRIC_LINK_READ):
        return
    st.session_state[METRIC_LINK_READ] = True
    label = metric_of_link(st.query_params.get_all(METRIC))
    if label is not None:
        st.session_state[METRIC] = label


def write_metric_link() -> None:
    """Keep the sidebar's metric in the URL by its short name (``metric=bpref``), none for the default, on every run:
    Streamlit drops a query parameter no widget binds when the page changes, and a widget would bind its label."""
    kind = metric_kind()
    want = None if kind == METRIC_KINDS[METRIC_DEFAULT] else kind
    if st.query_params.get(METRIC) != want or len(st.query_params.get_all(METRIC)) > 1:
        if want is None:
            st.query_params.pop(METRIC, None)
        else:
            st.query_params[METRIC] = want


def post(messages: list[tuple[str, str]], fingerprint: str) -> None:
    """Keep the Data page's messages (kind, text) until the next upload, while the dataset of this fingerprint (the
    one they are about) stays in use."""
    st.session_state[UPLOAD_MESSAGES] = messages
    st.session_state[MESSAGES_FOR] = fingerprint


def reset_to_article() -> None:
    """Put the article's values back in every slider (a button's callback)."""
    for key, value in DEFAULTS.items():
        st.session_state[key] = value


def members(available: list[str] | None = None) -> tuple[str, ...]:
    """The fusion members the sidebar holds, those no longer available left out (the article's when none is left)."""
    chosen = [m for m in st.session_state.get(MEMBERS) or [] if available is None or m in available]
    return tuple(chosen) or ARTICLE_MEMBERS


def params(available: list[str] | None = None) -> Params:
    """The retrieval parameters the sidebar currently holds (members among `available` systems)."""
    s = st.session_state
    fused = members(available)
    weights = weights_in_force(fused) if len(fused) > 2 else None
    return Params(
        k1=float(s[K1]),
        b=float(s[B]),
        dims=int(s[DIMS]),
        rrf_k=float(s[RRF_K]),
        alpha=float(s[ALPHA]),
        fusion_depth=int(s.get(FUSION_DEPTH, DEFAULTS[FUSION_DEPTH])),
        stemmer=_choice(STEMMER),
        stopwords=_choice(STOPWORDS),
        query_words=_choice(QUERY_WORDS),
        k3=float(s.get(K3, DEFAULTS[K3])),
        members=fused,
        weights=weights,
    )


def weights_held(fused: tuple[str, ...]) -> tuple[float, ...]:
    """The weight each fused member's slider holds (its default until moved)."""
    return tuple(float(st.session_state.get(WEIGHT + m, SPECS["weight"].default)) for m in fused)


def weights_in_force(fused: tuple[str, ...]) -> tuple[float, ...]:
    """The weighted fusion's weights: the sliders', or each the weight's default when every slider is at 0 (a
    fusion needs one weight above 0; the sidebar says so, `sidebar.weight_sliders`)."""
    held = weights_held(fused)
    return held if sum(held) > 0 else (float(SPECS["weight"].default),) * len(fused)


def _choice(key: str) -> str:
    """A text-analysis choice the sidebar holds (its default when the session holds none it knows)."""
    value = st.session_state.get(key)
    return value if value in TEXT[key].options else DEFAULTS[key]


def analysis() -> Analysis:
    """The text analysis the sidebar holds (stemmer, stop words): what the engine in use was built with."""
    return Analysis(_choice(STEMMER), _choice(STOPWORDS))


def cutoff() -> int:
    """The cutoff k of the metrics."""
    return int(st.session_state[K])


def metric_kind() -> str:
    """The chosen metric's kind (ndcg, recall, ...)."""
    return METRIC_KINDS.get(st.session_state[METRIC], "ndcg")


def metric_name(k: int | None = None) -> str:
    """The chosen metric's name at cutoff k (default: the slider's), e.g. ``ndcg@5`` or ``map@5``; MRR, R-precision
    and bpref have no cutoff (MRR reads the whole list; R-precision and bpref look as deep as the question's
    judgements say)."""
    kind = metric_kind()
    return kind if kind == "mrr" or kind in NO_CUTOFF else f"{kind}@{cutoff() if k is None else k}"


def metric_label(name: str) -> str:
    """A display label for a metric name, e.g. ``nDCG@5``."""
    pretty = {
        "ndcg": "nDCG",
        "ndcg_exp": "nDCG_exp",
        "recall": "recall",
        "hit": "hit",
        "mrr": "MRR",
        "precision": "P",
        "map": "MAP",
        "rprec": "R-prec",
        "bpref": "bpref",
        "judged": "judged",
    }
    kind, _, k = name.partition("@")
    return pretty.get(kind, kind) + (f"@{k}" if k else "")
