"""The worker threads: the pools every compiled pass and the tokeniser split their work over, and threads that
work in the background.

Two pools, each made on first use and kept for the process (a leaf of the package: it imports nothing of it):

* the app's (threads named ``retrieval``), for work a person waits for;
* the background's (``retrieval-background``), whose threads run at the lowest scheduling priority the system
  gives a thread (Linux: nice 19, each thread alone), for work done ahead.

A pool asked for more threads than it has is replaced by a larger one and shut down (the calls it is running
finish; it takes no new ones). Which pool a call uses is the calling thread's: a thread started by
`background_thread` uses the background's, every other thread the app's. No thread's priority is ever changed
but the background threads' own, each set once, when the thread starts: a caller's thread is never touched.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor

_LOCAL = threading.local()  # .background: this thread is a background thread (its splits use the background pool)
_LOCK = threading.Lock()
_CORES: int | None = None


def threads() -> int:
    """Worker threads: RETRIEVAL_THREADS, else the cores this process may use."""
    global _CORES
    env = os.environ.get("RETRIEVAL_THREADS")
    if env:
        return max(1, int(env))
    if _CORES is None:
        try:
            _CORES = max(1, len(os.sched_getaffinity(0)))
        except AttributeError:  # pragma: no cover - not Linux
            _CORES = max(1, os.cpu_count() or 1)
    return _CORES


def lowest_priority() -> None:
    """The calling thread at the lowest scheduling priority (Linux: nice 19 for this thread alone; elsewhere
    nothing). Called only by threads made for background work, as they start."""
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)
    except (AttributeError, OSError):  # pragma: no cover - no per-thread priority here
        pass


def _background_start() -> None:
    lowest_priority()
    _LOCAL.background = True


class _Pool:
    """A thread pool and the number of threads it was made with."""

    def __init__(self, size: int, background: bool):
        self.size = size
        self.executor = ThreadPoolExecutor(
            max_workers=size,
            thread_name_prefix="retrieval-background" if background else "retrieval",
            initializer=_background_start if background else None,
        )


_POOLS: dict[bool, _Pool] = {}


def in_background() -> bool:
    """Whether the calling thread is a background thread (`background_thread`, or a background pool's)."""
    return getattr(_LOCAL, "background", False)


def pool(size: int) -> ThreadPoolExecutor:
    """The calling thread's pool (the background's for a background thread), with at least `size` threads."""
    background = in_background()
    with _LOCK:
        current = _POOLS.get(background)
        if current is None or current.size < size:
            _POOLS[background] = _Pool(size, background)
            if current is not None:
                current.executor.shutdown(wait=False)
            current = _POOLS[background]
        return current.executor


def submit(fn: Callable, *args) -> Future:
    """`fn(*args)` on one of the calling thread's pool's threads: a Future. For work that runs beside the
    caller's own (the tokeniser's second half of a batch)."""
    return pool(threads()).submit(fn, *args)


def split(fn: Callable, items, parts: int, *args) -> None:
    """`fn(items[i::parts], *args)` for each i on the calling thread's pool, waiting for all (interleaved, so
    costs even out); the first error raised is raised here."""
    executor = pool(parts)
    for f in [executor.submit(fn, items[i::parts].copy(), *args) for i in range(parts)]:
        f.result()


def background_thread(target: Callable[[], None], name: str) -> threading.Thread:
    """A started daemon thread running `target` at the lowest priority, whose splits use the background pool:
    work done ahead (`Engine.prefetch`) takes the cores only when nothing a person waits for needs them. The
    thread ends when `target` returns."""

    def run() -> None:
        _background_start()
        target()

    t = threading.Thread(target=run, name=name, daemon=True)
    t.start()
    return t
