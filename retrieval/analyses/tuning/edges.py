"""A best setting at the edge of the range searched: where the optimum may lie beyond the grid.

A swept parameter's best value is at an edge when it lies among the outer `EDGE_ZONE` of its axis's settings (at least
the end setting itself) and the parameter could go further there: its valid range (params.SPECS) goes on, and d can
grow up to what the corpus allows (`Engine.max_dims`). b can't pass 0 or 1, nor alpha, nor d 1: no edge there. The
analysis sweep has none: its coarse k1 x b grid's ends are said beside the finer k1 x b sweep's (analyses/grids.py).

The Tuning page warns with each finding (ui/tuning.py, the headline in bold), `python -m retrieval tune` prints its
plain sentence and its numbers (JSON "edges").
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ...core.params import SPECS
from .sweep import Sweep, _num
from .wording import Piece, plain, stress

EDGE_ZONE = (
    0.1  # the best is "at the edge" when it lies in the outer tenth of an axis's settings (at least the end one)
)
HEADLINE = "The best is at the edge of the range searched"


@dataclass(frozen=True)
class Edge:
    """A best value at an open end of its parameter's range searched, with the one plain sentence that says so."""

    name: str  # the parameter: 'dims', 'k1', 'rrf_k' ...
    value: float  # the best setting's value of it
    side: str  # "low" or "high": the end of the range searched it lies at
    end: float  # the range searched's value at that end
    slider_end: float | None  # the sidebar's slider's upper end when the range searched reaches it (else None)

    @property
    def words(self) -> tuple[Piece, ...]:
        """The sentence in pieces, its headline stressed (`wording.Piece`)."""
        return (
            stress(HEADLINE),
            Piece(
                f" ({self.name} = {self.value:g}; the range searched {'ends' if self.side == 'high' else 'starts'} at "
                f"{self.end:g}): the optimum may lie {'beyond' if self.side == 'high' else 'below'} it."
            ),
        )

    @property
    def sentence(self) -> str:
        """The plain sentence: 'The best is at the edge of the range searched (dims = 196; the range searched ends
        at 200): the optimum may lie beyond it.'"""
        return plain(self.words)

    def to_json(self) -> dict:
        """The finding as JSON-ready data: its numbers and its sentence."""
        return {
            "param": self.name,
            "value": _num(self.value, self.name),
            "side": self.side,
            "end": _num(self.end, self.name),
            "text": self.sentence,
        }


def edge_sides(axis: np.ndarray, pos: int, lo: float, hi: float, zone: float = EDGE_ZONE) -> list[str]:
    """The ends of a searched axis ("low", "high") the best lies at, where the parameter could go further.

    The best (at position `pos` of the sorted `axis`) is at an end when it lies among that end's outer `zone`
    of the settings (at least the end setting itself), and the end is not the parameter's own bound (`lo`,
    `hi`: b can't pass 1, alpha 0 or 1, d the corpus's limit).
    """
    n = int(np.asarray(axis).size)
    width = max(1, math.floor(n * zone))
    out = []
    if pos < width and float(axis[0]) > lo:
        out.append("low")
    if pos >= n - width and float(axis[-1]) < hi:
        out.append("high")
    return out


def bounds(name: str, dims_limit: int) -> tuple[float, float]:
    """How far a parameter could go: its valid range (params.SPECS), d up to what the corpus allows."""
    lo, hi = SPECS[name].valid
    return (float(lo), float(dims_limit) if name == "dims" else float(hi))


def edge_findings(sw: Sweep, best: int, dims_limit: int) -> tuple[Edge, ...]:
    """One finding per swept parameter whose best (setting `best` of the sweep) lies at an open edge of its axis
    (`edge_sides`), d bounded by `dims_limit` (the corpus's `Engine.max_dims`); none for the analysis sweep."""
    if "analysis" in sw.names:
        return ()
    pos = np.unravel_index(int(best), sw.shape)
    setting = sw.setting(best)
    out = []
    for n, a, i in zip(sw.names, sw.axes, pos):
        for side in edge_sides(a, int(i), *bounds(n, dims_limit)):
            end = float(a[-1] if side == "high" else a[0])
            hi = float(SPECS[n].hi)
            out.append(Edge(n, float(setting[n]), side, end, hi if side == "high" and end >= hi else None))
    return tuple(out)
