"""retrieval/analyses/noise.py: whether two systems tie, and whether the best fusion's gain over its best member is
noise, said from the paired bootstrap's numbers, plain (the app's escapes and bold: tests/ui/test_ui_tour.py); and the
finding in `python -m retrieval fusion`."""

from __future__ import annotations

import json

import numpy as np

from retrieval import cli
from retrieval.analyses import noise
from retrieval.core.params import Params
from retrieval.engine.engine import Engine
from retrieval.evaluation import stats


def iv(mean: float, low: float, high: float) -> stats.Interval:
    return stats.Interval(mean, low, high, stats.RESAMPLES, stats.SEED, stats.CONFIDENCE)


def test_a_tie_is_said_only_when_the_interval_holds_zero_or_the_means_are_equal():
    held = noise.Tie("BM25", "LSA", 0.691171, 0.679138, iv(0.012033, -0.081, 0.107), "nDCG@5", 14)
    assert held.tied and held.sentence == (
        "BM25 is ahead of LSA by 0.012 on mean nDCG@5 (0.691 against 0.679), but the 95% bootstrap interval of "
        "BM25 \u2212 LSA, [\u22120.081, +0.107], holds zero: on these 14 questions they tie, and ranking them on their "
        "means would be a mistake."
    )
    apart = noise.Tie("BM25", "LSA", 0.5, 0.8, iv(-0.3, -0.41, -0.19), "MRR", 30)
    assert not apart.tied and apart.sentence.endswith("leaves zero out: on this data they do not tie.")
    assert noise.Tie("a", "b", 0.5, 0.5, iv(0.0, 0.0, 0.0), "x", 1).tied
    assert "they <tie>" in held.text(stress=lambda s: f"<{s}>")


def test_noise_or_not_follows_the_interval():
    inside = noise.Noise("RRF", "BM25", iv(0.046, -0.007, 0.113), "nDCG@5", 14)
    assert (
        not inside.beyond_noise
        and "the gain of RRF over BM25 (+0.046) can't be told apart from noise" in inside.sentence
    )
    behind = noise.Noise("RRF", "BM25", iv(-0.02, -0.05, 0.01), "nDCG@5", 14)
    assert "the difference of RRF over BM25 (\u22120.020)" in behind.sentence
    worse = noise.Noise("RRF", "BM25", iv(-0.05, -0.09, -0.01), "nDCG@5", 200)
    assert worse.beyond_noise and worse.sentence.endswith("so BM25 is better here on nDCG@5.")


def test_the_best_fusion_is_read_against_the_best_member(invented, capsys):
    ev = Engine(invented).evaluate(Params(), ["ndcg@5"])
    found, diff = noise.best_against_best(ev, ["weighted", "RRF"], ["BM25", "LSA"], "ndcg@5", "nDCG@5")
    means = {s: ev.mean(s, "ndcg@5") for s in ("weighted", "RRF", "BM25", "LSA")}
    assert found.fusion == max(("weighted", "RRF"), key=lambda s: (means[s], s == "weighted"))
    assert found.member == max(("BM25", "LSA"), key=lambda s: (means[s], s == "BM25"))
    assert np.array_equal(diff, ev.values[found.fusion]["ndcg@5"] - ev.values[found.member]["ndcg@5"])
    assert found.interval == stats.bootstrap(diff) and found.n == diff.size
    assert found.beyond_noise == (not found.interval.low <= 0 <= found.interval.high)
    assert cli.main(["fusion", "--json"]) == 0
    said = json.loads(capsys.readouterr().out)["noise"]
    assert (said["fusion"], said["member"], said["beyond_noise"]) == (found.fusion, found.member, found.beyond_noise)
    assert said["ci_low"] == found.interval.low and said["sentence"].startswith("With 14 questions")
