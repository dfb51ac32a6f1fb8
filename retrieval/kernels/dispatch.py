"""How a kernel runs: compiled (numba, cached on disk) or as its plain-Python twin, split over the worker threads
(`parallel`), and the switch that serves small calls from the twin until the compiled kernels are loaded.
"""

from __future__ import annotations

import threading
import time
import types
from collections.abc import Iterable

import numpy as np
from numba.core import event as numba_event
from numba.core.dispatcher import Dispatcher

from ..core import workers
from ..core.thresholds import (
    PARALLEL_MIN_WORK,
    PYTHON_MAX_WORK,
    UNCOMPILED_PYTHON_MAX_WORK,
    VECTORISED_MAX_WORK,
)
from .disk_cache import cached_dispatchers, repair_disk_cache  # noqa: F401 - where they were
from .layout import lowest_bit


def parallel(kernel, n_items: int, work: int, *args) -> None:
    """Run `kernel(items, *args)` over 0..n_items-1 split across threads (interleaved, so costs even out).

    `work` estimates the total cost in elementary steps; below PARALLEL_MIN_WORK one thread is faster.
    """
    parallel_over(kernel, np.arange(n_items, dtype=np.int64), work, *args)


def parallel_over(kernel, items: np.ndarray, work: int, *args) -> None:
    """`parallel` over the given items (int64) instead of 0..n_items-1."""
    if isinstance(kernel, Kernel):
        kernel = kernel.pick(work)
    nt = min(workers.threads(), items.size)
    if nt <= 1 or work < PARALLEL_MIN_WORK:
        kernel(items, *args)
        return
    workers.split(kernel, items, nt, *args)


_MODE = {
    "auto": False,  # True: small calls run the twin until `mark_ready` (the app and the command line set it)
    "uncompiled": False,
}  # True: calls run a twin while numba has nothing on disk (`serve_uncompiled`)
_READY = threading.Event()  # the compiled kernels are loaded in this process (warmed up: engine.warm_up)
_LOCAL = threading.local()  # .compiled: this thread always runs the compiled kernels (the warm-up's thread)


def python_twins(modules: list[types.ModuleType]) -> dict[str, types.FunctionType]:
    """The modules' compiled functions as the plain Python they are written in (what NUMBA_DISABLE_JIT=1 runs):
    every compiled function rebuilt over a copy of its module's globals in which each compiled callee, whichever
    kernel file it comes from, is its own plain-Python twin too (the inlined rules are `rules`' plain functions).
    Returns the twins by '<module>.<name>'."""
    copies = {m.__name__: dict(vars(m)) for m in modules}
    twins: dict[int, types.FunctionType] = {}
    named: dict[str, types.FunctionType] = {}
    for m in modules:
        for name, value in vars(m).items():
            if isinstance(value, Dispatcher) and value.py_func.__module__ == m.__name__:
                f = value.py_func
                twins[id(value)] = named[f"{m.__name__}.{name}"] = types.FunctionType(
                    f.__code__, copies[m.__name__], f.__name__, f.__defaults__, f.__closure__
                )
    for g in copies.values():
        g["trailing_zeros"] = lowest_bit
        for name, value in list(g.items()):
            if isinstance(value, Dispatcher):
                g[name] = twins.get(id(value), value.py_func)
    return named


def size_of(args) -> int:
    """A call's work in elementary steps when its caller gives none: the elements of its arrays (one level into
    the named tuples)."""
    n = 0
    for a in args:
        if isinstance(a, np.ndarray):
            n += a.size
        elif isinstance(a, tuple):
            n += sum(x.size for x in a if isinstance(x, np.ndarray))
    return n


def _waiting() -> bool:
    """Whether this call comes before the compiled kernels are loaded, from a thread that does not compile them."""
    return not _READY.is_set() and not getattr(_LOCAL, "compiled", False)


def _serve_python(work: int) -> bool:
    return _MODE["auto"] and _waiting() and work <= PYTHON_MAX_WORK


class Kernel:
    """One kernel, compiled (numba, cached on disk: cache=True) and as plain Python; a call runs the compiled
    one, except in `serve_small_from_python` mode, before the compiled kernels are loaded, for a small call:
    the twin then gives the same numbers to the last bit (tests/kernels/test_kernels.py) without waiting for numba."""

    def __init__(self, compiled, python, vectorised=None):
        self.compiled = compiled
        self.python = python
        self.vectorised = vectorised  # its whole-array numpy twin, where it has one (kernels/vectorised.py)
        self.on_disk = True  # numba's cache on disk holds it (checked by `serve_uncompiled`)
        self.__name__ = self.__qualname__ = python.__name__
        self.__doc__ = python.__doc__

    def pick(self, work: int):
        """The function that runs a call of `work` elementary steps."""
        if _MODE.get("uncompiled") and not self.on_disk and _waiting():
            if self.vectorised is not None and work <= VECTORISED_MAX_WORK:
                return self.vectorised
            if work <= UNCOMPILED_PYTHON_MAX_WORK:
                return self.python
        return self.python if _serve_python(work) else self.compiled

    def __call__(self, *args):
        return self.pick(size_of(args))(*args)

    def __repr__(self) -> str:
        return f"Kernel({self.__name__})"


def serve_small_from_python(on: bool = True) -> None:
    """Until `mark_ready`, run calls of at most PYTHON_MAX_WORK steps as plain Python (the app, the command line):
    a small corpus is then served at once on a fresh clone, while numba has not compiled (or loaded) anything."""
    _MODE["auto"] = bool(on)


def serve_uncompiled(kernels: Iterable[Kernel], on: bool = True) -> None:
    """Until `mark_ready`, run each call of a kernel numba's cache on disk lacks (`on_disk`) from a twin where one
    pays: its numpy twin (`Kernel.vectorised`) up to VECTORISED_MAX_WORK steps, else its plain-Python twin up to
    UNCOMPILED_PYTHON_MAX_WORK; a larger call is compiled (and cached). For a one-shot command: a first `evaluate`
    of a corpus of a few thousand documents on a fresh clone then takes about its warm time instead of waiting
    for numba to compile (bench/first_run.py); a kernel already on disk is loaded from there."""
    for k in kernels:
        k.on_disk = on_disk(k.compiled) if on else True
    _MODE["uncompiled"] = bool(on)


def on_disk(compiled) -> bool:
    """Whether numba's cache on disk holds a compiled version of this dispatcher for its current source (True
    for a plain function: with NUMBA_DISABLE_JIT nothing is ever compiled)."""
    if not isinstance(compiled, Dispatcher):
        return True
    cache_file = getattr(getattr(compiled, "_cache", None), "_cache_file", None)
    if cache_file is None or not hasattr(cache_file, "_load_index"):
        return False
    try:
        return bool(cache_file._load_index())  # empty for a missing index, or another source's or numba's
    except Exception:  # noqa: BLE001 - unreadable: numba compiles it (repair_disk_cache clears it first)
        return False


def mark_ready() -> None:
    """The compiled kernels are loaded in this process: every call runs them from now on."""
    _READY.set()


def ready() -> bool:
    """Whether `mark_ready` was called (the compiled kernels are loaded)."""
    return _READY.is_set()


class compiled_here:
    """Within it, this thread runs only the compiled kernels (a warm-up compiles what it calls)."""

    def __enter__(self):
        self._was = getattr(_LOCAL, "compiled", False)
        _LOCAL.compiled = True
        return self

    def __exit__(self, *exc):
        _LOCAL.compiled = self._was
        return False


def dispatchers(kernels: dict[str, Kernel]) -> dict:
    """Each kernel's numba dispatcher (empty with NUMBA_DISABLE_JIT=1): its signatures and cache statistics."""
    return {n: k.compiled for n, k in kernels.items() if isinstance(k.compiled, Dispatcher)}


# --------------------------------------------------------------------------------------- compiling, said

TICK = 10.0  # seconds between two lines of a compile in progress


class CompileNotice(numba_event.Listener):
    """Says, through `write`, each time numba starts compiling one of the named dispatchers (a cache miss: loading
    one from numba's cache on disk says nothing), how long it took and how many are done, and every TICK seconds
    of a long compile that it is still going: a command that has to compile says so at once and shows progress
    instead of seeming to hang. `total`: how many a full compile takes (warmup), None when only what the run
    needs is compiled."""

    def __init__(self, named: dict, write, total: int | None = None):
        self.named = {id(d): name for name, d in named.items()}
        self.write, self.total = write, total
        self.compiled: set[str] = set()
        self.said_why = False
        self.running: dict[int, tuple[str, float]] = {}  # by thread: the kernel it compiles, since when
        self.lock = threading.Lock()
        self.stop = threading.Event()

    def _name(self, ev) -> str | None:
        return self.named.get(id(ev.data.get("dispatcher")))

    def on_start(self, ev) -> None:
        name = self._name(ev)
        if name is None:
            return
        with self.lock:
            if not self.said_why:
                self.said_why = True
                self.write(
                    "compiling kernels with numba (once: they are cached on disk, and later runs load them; "
                    "`python -m retrieval warmup` compiles them all)"
                )
                threading.Thread(target=self._tick, name="retrieval-compile-notice", daemon=True).start()
            self.running[threading.get_ident()] = (name, time.monotonic())
        self.write(f"  compiling {name} ...")

    def on_end(self, ev) -> None:
        name = self._name(ev)
        if name is None:
            return
        with self.lock:
            _, t0 = self.running.pop(threading.get_ident(), (name, time.monotonic()))
            self.compiled.add(name)  # a kernel compiled for a second signature counts once
            done = len(self.compiled)
        of = f"{done} of {self.total}" if self.total and done <= self.total else f"{done} so far"
        self.write(f"  {name} compiled in {time.monotonic() - t0:.1f} s ({of})")

    def _tick(self) -> None:
        while not self.stop.wait(TICK):
            with self.lock:
                now = [(name, time.monotonic() - t0) for name, t0 in self.running.values()]
            for name, dt in now:
                if dt >= TICK:
                    self.write(f"  ... still compiling {name} ({dt:.0f} s)")


def announce_compiling(named: dict, write, total: int | None = None) -> CompileNotice:
    """Register a `CompileNotice` for numba's compiles of the named dispatchers in this process; returns it."""
    notice = CompileNotice(named, write, total)
    numba_event.register("numba:compile", notice)
    return notice
