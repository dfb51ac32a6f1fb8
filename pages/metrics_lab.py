"""Metrics lab: an editable toy ranking with grades; hit, recall, RR and nDCG (linear and exponential gain) computed live
with every DCG term written out; scikit-learn's ndcg_score trap side by side; and Ragas's order-blind, ID-based context
precision and recall beside the rank-aware metrics, with a button that shuffles the ranking. The parts are in
ui/metrics_lab.py."""

from __future__ import annotations

from ui import metrics_lab as page
from ui import state

state.init_state()
page.init()

k = state.cutoff()
page.header(k)
toy = page.edit_toy()
if toy is not None:
    figures = page.Figures(toy, k)
    page.rank_aware(figures)
    page.dcg_written_out(figures)
    page.sklearn_trap(figures)
    page.order_blind(figures)
