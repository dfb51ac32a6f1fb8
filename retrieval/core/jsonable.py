"""What JSON always accepts: floats cleaned (NaN and the infinities become null), numpy scalars and arrays made
plain. Here, below every layer, so that a command that only reads and writes JSON (`gate`, `experiments`) needs
nothing more than numpy."""

from __future__ import annotations

import math

import numpy as np


def clean(x: float) -> float | None:
    """A float for JSON (NaN and the infinities become null)."""
    return None if x is None or not math.isfinite(x) else float(x)


def json_ready(obj):
    """`obj` with every float cleaned (NaN and the infinities become null) and numpy scalars and arrays made plain,
    through dicts, lists and tuples: what `json.dumps(..., allow_nan=False)` always accepts."""
    if isinstance(obj, dict):
        return {k: json_ready(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_ready(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return json_ready(obj.tolist())
    if isinstance(obj, (bool, np.bool_)):
        return bool(obj)
    if isinstance(obj, (int, np.integer)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        return clean(float(obj))
    return obj
