"""The compiled kernels' start for the commands that run them (`evaluate`, `compare`, `tune`, `warmup`): small and,
in one run, medium corpora served by the plain-Python twins instead of waiting for numba; a damaged compiled cache
cleared and said; a compile numba cannot skip announced with its progress."""

from __future__ import annotations

import argparse
import sys

import retrieval.kernels as _kernels

from ..engine.engine import compiled_dispatchers, repair_compiled_cache
from .common import _t


def start(args: argparse.Namespace, warmup: bool = False) -> _kernels.dispatch.CompileNotice | None:
    """Before a command runs a kernel (`warmup`: the count of kernels to compile is announced too); the notice that
    says each compile, or None when quiet."""
    _kernels.serve_small_from_python()  # a small corpus needs no compiler: served at once even on a fresh clone
    _kernels.serve_uncompiled()  # nor, in one run, a medium one: the twins rather than numba's ~45 s compile
    for w in repair_compiled_cache():  # a damaged compiled cache: cleared and compiled again, said, never a traceback
        print(f"warning: {_t(w)}", file=sys.stderr)
    if not getattr(args, "quiet", False):  # a compile numba cannot skip is said at once, with its progress
        named = compiled_dispatchers()
        total = sum(not _kernels.dispatch.on_disk(d) for d in named.values()) if warmup else None
        return _kernels.dispatch.announce_compiling(named, lambda line: print(line, file=sys.stderr, flush=True), total)
    return None
