"""Compare: two systems on the sidebar's metric, the paired bootstrap of their per-question difference and a plain verdict."""

from __future__ import annotations


import numpy as np
import pandas as pd
import streamlit as st

from retrieval import stats
from ui import cache, charts, state
from ui.format import MINUS, interval_text, signed
from ui.markdown import escape_markdown as plain

state.init_state()

KEY_A, KEY_B = "cmp_a", "cmp_b"
DEFAULT_A, DEFAULT_B = "BM25", "LSA"
BINS = 50
@st.cache_data(max_entries=64, show_spinner=False)
def bootstrap(diff: np.ndarray) -> tuple[stats.Interval, pd.DataFrame]:
    """The article's paired bootstrap of the per-question differences and the histogram of its resampled means."""
    iv = stats.bootstrap(diff)
    means = stats.resampled_means(diff)
    lo, hi = float(means.min()), float(means.max())
    if hi - lo < 1e-12:  # every resample has the same mean (e.g. identical values): one narrow bar
        lo, hi = lo - 0.005, hi + 0.005
    counts, edges = np.histogram(means, bins=BINS, range=(lo, hi))
    bins = pd.DataFrame({"start": edges[:-1], "end": edges[1:], "count": counts})
    return iv, bins[bins["count"] > 0].reset_index(drop=True)


ds = cache.current_dataset()
metric = state.metric_name()
label = state.metric_label(metric)
ev = cache.evaluation([metric])
systems = ev.systems

st.title("Compare")
st.caption(
    f"**{plain(ds.name)}**: is one system better than another on **{label}** (the sidebar's metric and cutoff), "
    f"or is the difference noise? The questions are the unit: {ds.evaluated.size:,} questions with a relevant document, "
    "each scored by both systems."
)

c1, c2 = st.columns(2)
a = c1.selectbox("System A", systems, index=systems.index(DEFAULT_A) if DEFAULT_A in systems else 0,
                 key=KEY_A, persist_state="session")
b = c2.selectbox("System B", systems, index=systems.index(DEFAULT_B) if DEFAULT_B in systems else min(1, len(systems) - 1),
                 key=KEY_B, persist_state="session")

if a == b:
    st.info(f"Choose two different systems: {plain(a)} compared with itself differs by zero on every question.",
            icon=":material/info:")
elif ds.evaluated.size == 0:
    st.info("No question has a relevant document, so there is nothing to compare.", icon=":material/info:")
else:
    va, vb = ev.values[a][metric], ev.values[b][metric]
    diff = va - vb
    iv, bins = bootstrap(diff)
    name_a, name_b = plain(a), plain(b)
    span = interval_text(iv.low, iv.high)
    if iv.holds_zero:
        st.info(
            f"**{name_a} and {name_b} can't be told apart** on {label}: the 95% interval of the mean difference, "
            f"{span}, holds zero.",
            icon=":material/balance:",
        )
    else:
        better, worse = (name_a, name_b) if iv.mean > 0 else (name_b, name_a)
        st.success(
            f"**{better} is better than {worse}** on {label}, by {abs(iv.mean):.3f} on average: "
            f"the 95% interval of {name_a} {MINUS} {name_b}, {span}, leaves zero out.",
            icon=":material/trending_up:",
        )

    m1, m2, m3, m4 = st.columns([1, 1.6, 1, 1])
    m1.metric(f"mean difference, A {MINUS} B", signed(iv.mean), border=True,
              help=f"Mean over the questions of {name_a}'s {label} minus {name_b}'s.")
    m2.metric("95% interval", span, border=True,
              help="Percentile bootstrap: the 126th and the 4875th of the 5000 sorted resampled means.")
    m3.metric(f"A: {name_a}", f"{ev.mean(a, metric):.3f}", border=True, help=f"{name_a}'s mean {label}.")
    m4.metric(f"B: {name_b}", f"{ev.mean(b, metric):.3f}", border=True, help=f"{name_b}'s mean {label}.")

    st.subheader("The bootstrap distribution")
    st.altair_chart(charts.histogram_with_interval(bins, iv.low, iv.high, iv.mean), width="stretch")
    st.caption(
        f"The per-question differences resampled with replacement {stats.RESAMPLES:,} times "
        f"(numpy default_rng, seed {stats.SEED}), the mean of each resample counted. "
        "The shaded band is the 95% interval; the dashed line is zero, the red line the observed mean difference."
    )

    st.subheader("Question by question")
    wins_a, wins_b = int((diff > 0).sum()), int((diff < 0).sum())
    ties = int(diff.size - wins_a - wins_b)
    per_q = pd.DataFrame(
        {
            "qid": [ds.query_ids[q] for q in ds.evaluated],
            "question": [" ".join(ds.query_texts[q].split())[:200] for q in ds.evaluated],
            "diff": diff,
        }
    )
    st.altair_chart(charts.difference_bars(per_q, f"{label}: {a} {MINUS} {b}", a, b), width="stretch")
    st.caption(
        f"{name_a} is better on {wins_a} question{'s' if wins_a != 1 else ''}, {name_b} on {wins_b}, "
        f"and {ties} {'are ties' if ties != 1 else 'is a tie'} (grey diamonds on the zero line). Hover a bar for the question."
    )
