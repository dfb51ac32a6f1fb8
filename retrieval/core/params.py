"""The one specification of every parameter: bounds, step, default, tuning grid and help, read by the sidebar,
the URL parser, the command line and the tuning grids alike.

Each parameter has two ranges: the *slider's* (what the sidebar and the URL offer, e.g. k1 in 0..3) and the
*valid* one (what the library accepts, e.g. any k1 >= 0 from the command line). `Spec.check` is the single
validation: it names the parameter and the range in its error. `Params` is validated once, when it is made,
so a `Params` that exists is valid and nothing downstream checks it again.

The defaults are the article's: k1 = 1.2, b = 0.75, d = 6, RRF k = 60, alpha = 0.5, each fusion over the top
10 of its members, the metrics at k = 5; its text analysis: no stemmer, its 45 stop words, each question word
counted once (k3, read only when repeated words are saturated, is 8).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields

import numpy as np

from .errors import InputError

INF = math.inf


@dataclass(frozen=True)
class Spec:
    """One parameter: its name (the `Params` field, the URL key, the CLI flag with `-` for `_`), label, help,
    the article's default, the slider's range and step, the valid range, and the tuning grid."""

    name: str
    label: str
    help: str
    default: float | str
    lo: float  # the slider's range
    hi: float
    step: float
    valid: tuple[float, float]  # what the library accepts, bounds included
    grid: tuple[float, ...] = ()  # the values a tuning sweep tries (empty: 1..the corpus's limit, see `grid_for`)
    integer: bool = False
    choices: tuple[int, ...] = ()  # when set, the values the app offers (the library accepts any valid one)
    options: tuple[str, ...] = ()  # a parameter that is a choice of names (the text analysis): those names

    def cast(self, value):
        """The value as this parameter's type (int, float, or a name for a choice)."""
        if self.options:
            return str(value)
        return int(value) if self.integer else float(value)

    def check(self, value):
        """The value, validated and cast, or an InputError naming the parameter and what it accepts."""
        if self.options:
            if not isinstance(value, str) or value not in self.options:
                raise InputError(f"{self.name} must be one of {', '.join(self.options)}, got {value!r}")
            return value
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise InputError(f"{self.name} must be a number, got {value!r}")
        v = float(value)
        lo, hi = self.valid
        if self.integer and (not math.isfinite(v) or v != int(v) or v < lo or v > hi):
            raise InputError(f"{self.name} must be a whole number {_range(lo, hi)}, got {value}")
        elif not math.isfinite(v) or v < lo or v > hi:
            raise InputError(f"{self.name} must be {'a number ' if hi == INF else ''}{_range(lo, hi)}, got {value}")
        return self.cast(v)

    def snap(self, value, hi: float | None = None):
        """A value on the slider: the nearest step within [lo, hi] (hi: the dataset's own limit, e.g. LSA's d)."""
        top = self.hi if hi is None else min(self.hi, hi)
        v = min(max(round(float(value) / self.step) * self.step, self.lo), top)
        return int(round(v)) if self.integer else round(v, 6)


def _range(lo: float, hi: float) -> str:
    """'>= 0', 'in [0, 1]'."""
    g = lambda x: f"{x:g}"  # noqa: E731
    return f">= {g(lo)}" if hi == INF else f"in [{g(lo)}, {g(hi)}]"


def _steps(lo: float, hi: float, n: int) -> tuple[float, ...]:
    """n + 1 evenly spaced values from lo to hi, exact decimals (i * hi / n, not repeated additions)."""
    return tuple(float(lo + i * (hi - lo) / n) for i in range(n + 1))


SPECS: dict[str, Spec] = {
    s.name: s
    for s in (
        Spec(
            "k",
            "cutoff k",
            "Metrics look at the top k results (hit@k, recall@k, nDCG@k).",
            5,
            1,
            20,
            1,
            (1, INF),
            integer=True,
        ),
        Spec(
            "k1",
            "BM25 k1",
            "Term-frequency saturation: 0 ignores repeats, large values count them almost linearly.",
            1.2,
            0.0,
            3.0,
            0.05,
            (0.0, INF),
            _steps(0.0, 3.0, 15),
        ),  # 0, 0.2, ..., 3.0 (6 * 3 / 15 == 1.2 exactly)
        Spec(
            "b",
            "BM25 b",
            "Length normalisation: 0 ignores document length, 1 divides fully by it.",
            0.75,
            0.0,
            1.0,
            0.05,
            (0.0, 1.0),
            _steps(0.0, 1.0, 10),
        ),
        Spec(
            "dims",
            "LSA dimensions d",
            "Dimensions of the truncated SVD (at most min(documents, terms) - 1).",
            6,
            1,
            200,
            1,
            (1, INF),
            integer=True,
        ),
        Spec(
            "rrf_k",
            "RRF constant k",
            "Reciprocal Rank Fusion adds 1/(k + rank) from each list: a small k favours the top ranks.",
            60.0,
            1,
            200,
            1,
            (0.0, INF),
            tuple(float(x) for x in range(1, 201)),
        ),
        Spec(
            "alpha",
            "fusion alpha",
            "Weighted fusion: alpha x the first member + (1 - alpha) x the second, each min-max normalised.",
            0.5,
            0.0,
            1.0,
            0.05,
            (0.0, 1.0),
            _steps(0.0, 1.0, 20),
        ),
        Spec(
            "fusion_depth",
            "fusion depth",
            "How deep each member's list goes into a fusion (the article fuses each top 10).",
            10,
            10,
            1000,
            1,
            (1, INF),
            integer=True,
            choices=(10, 100, 1000),
        ),
        Spec(
            "weight",
            "weight",
            "A member's weight in the weighted fusion of more than two members (min-max scores times the weight, added).",
            0.5,
            0.0,
            1.0,
            0.05,
            (0.0, INF),
        ),
        Spec(
            "stemmer",
            "stemmer",
            "How words are reduced to a stem before they are counted, as in Elasticsearch's "
            "analyzers: none (the article), snowball (Snowball's English stemmer, Porter2), porter (Porter's 1980 "
            "algorithm); both are Snowball's C stemmers (PyStemmer). BM25, LSA and what they fuse into follow it; "
            "dense reads the raw text.",
            "none",
            0,
            0,
            0,
            (0, 0),
            options=("none", "snowball", "porter"),
        ),
        Spec(
            "stopwords",
            "stop words",
            "Which words are dropped before counting: article (the article's 45 words), "
            "lucene (Lucene's English stop set, 33 words, Elasticsearch's _english_), none.",
            "article",
            0,
            0,
            0,
            (0, 0),
            options=("article", "lucene", "none"),
        ),
        Spec(
            "query_words",
            "repeated question words",
            "How a word the question repeats counts in BM25: once (the "
            "article), each (every repeat adds its weight again, as Lucene's query parser), k3 (saturated by BM25's "
            "k3: (k3 + 1) qtf / (k3 + qtf)).",
            "once",
            0,
            0,
            0,
            (0, 0),
            options=("once", "each", "k3"),
        ),
        Spec(
            "k3",
            "BM25 k3",
            "Saturation of a question word's repeats (with repeated question words = k3): 0 counts "
            "a word once however often it is repeated, large values count each repeat almost fully.",
            8.0,
            0.0,
            20.0,
            0.5,
            (0.0, INF),
            (0.0, 1.0, 2.0, 4.0, 8.0, 16.0, 100.0),
        ),
        Spec(
            "depth",
            "list depth",
            "How many results each system's list keeps for display (the ranks of judged documents are exact at any depth).",
            100,
            1,
            1000,
            1,
            (1, INF),
            integer=True,
        ),
    )
}

SLIDERS = ("k", "k1", "b", "dims", "rrf_k", "alpha")  # the sidebar's, in its order
ANALYSIS = ("stemmer", "stopwords")  # what the index is built with (a change builds another index)
QUESTION_SIDE = ("query_words", "k3")  # how the questions' words count in BM25 (a change re-scores, no index)
MAX_DIMS = int(SPECS["dims"].hi)  # the slider's and the dims curve's cap


def grid_for(name: str, limit: int | None = None) -> np.ndarray:
    """The tuning grid of a parameter as float64; a grid without fixed values (d) runs 1..min(limit, the slider's hi);
    a choice's grid is its names."""
    s = SPECS[name]
    if s.options:
        return np.array(s.options, dtype=object)
    if s.grid:
        return np.array(s.grid, dtype=np.float64)
    top = int(s.hi) if limit is None else min(int(s.hi), int(limit))
    return np.arange(int(s.lo), top + 1, dtype=np.float64)


def check(name: str, value):
    """`SPECS[name].check(value)`, or an error listing the known parameters."""
    spec = SPECS.get(name)
    if spec is None:
        raise InputError(f"unknown parameter {name!r}: known are {', '.join(SPECS)}")
    return spec.check(value)


def default(name: str):
    """The article's value of a parameter."""
    return SPECS[name].cast(SPECS[name].default)


ARTICLE_MEMBERS = ("BM25", "LSA")


@dataclass(frozen=True)
class Params:
    """The retrieval parameters, validated when made; the defaults are the article's.

    `members` are the systems both fusions combine (the article's BM25 and LSA); `weights`, one per member, are
    the weighted fusion's (None: alpha for the first member and 1 - alpha for the second, as the article; with
    more than two members, weights must be given).
    """

    k1: float = default("k1")
    b: float = default("b")
    dims: int = default("dims")
    rrf_k: float = default("rrf_k")
    alpha: float = default("alpha")
    fusion_depth: int = default("fusion_depth")
    depth: int = default("depth")
    stemmer: str = default("stemmer")
    stopwords: str = default("stopwords")
    query_words: str = default("query_words")
    k3: float = default("k3")
    members: tuple[str, ...] = field(default=ARTICLE_MEMBERS)
    weights: tuple[float, ...] | None = None

    def __post_init__(self) -> None:
        """Validate every field (the one check; nothing downstream checks a Params again)."""
        for f in fields(self):
            if f.name in SPECS:
                SPECS[f.name].check(getattr(self, f.name))
        members = self.members
        if not isinstance(members, tuple) or not members or len(set(members)) != len(members):
            raise InputError(f"members must be a tuple of distinct system names, got {members!r}")
        if self.weights is not None:
            w = self.weights
            if not isinstance(w, tuple) or len(w) != len(members):
                raise InputError(f"weights: give a tuple of one weight per member ({', '.join(members)}), got {w!r}")
            if not all(isinstance(x, (int, float)) and math.isfinite(x) and x >= 0 for x in w) or sum(w) <= 0:
                raise InputError(f"weights must be numbers >= 0 with a positive sum, got {', '.join(map(str, w))}")
        elif len(members) > 2:
            raise InputError(f"a weighted fusion of {len(members)} members needs one weight per member (weights)")

    def check(self) -> Params:
        """Self: a Params is validated when it is made (kept for callers that check explicitly)."""
        return self

    @property
    def list_depth(self) -> int:
        """How deep every system's lists go: the display depth or the fusion depth, whichever is larger."""
        return max(self.depth, self.fusion_depth)

    def fusion_weights(self) -> tuple[float, ...]:
        """The weighted fusion's weight per member: `weights`, or (alpha, 1 - alpha), or (1,) for a single member."""
        if self.weights is not None:
            return tuple(float(x) for x in self.weights)
        if len(self.members) == 1:
            return (1.0,)
        return (self.alpha, 1.0 - self.alpha)

    def to_json(self) -> dict:
        """The parameters as JSON-ready data (tuples as lists)."""
        return {f.name: list(v) if isinstance(v := getattr(self, f.name), tuple) else v for f in fields(self)}

    @property
    def analysis(self) -> tuple[str, str]:
        """(stemmer, stopwords): what the index is built with (`text.Analysis(*params.analysis)`)."""
        return self.stemmer, self.stopwords

    def of(self, names: tuple[str, ...]) -> tuple:
        """The values of the named parameters, in that order (a cache key's part)."""
        return tuple(getattr(self, n) for n in names)
