"""The one cache mechanism: a bounded, thread-safe store of computed values keyed by value (never by `id()`).

Keys are tuples of plain values: a dataset's or a run's content fingerprint, parameter values, the keys of the
values something was computed from. Each kind of value has its own bound (least recently used dropped first),
so the memory a store holds is the sum of its kinds' bounds times their sizes. A key is computed by one thread
at a time: a second thread asking for a key being computed waits for that value (a background LSA fit and the page
that needs it pay for one SVD, not two); if the first thread fails, the waiting one computes it itself. The first
value stored wins, so a value never changes under a key once seen. Nested gets go one way (a run asks for its fit,
never a fit for its run), so no two threads wait on each other.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import TypeVar

T = TypeVar("T")


class Memo:
    """Least-recently-used stores, one per kind, each bounded by `sizes[kind]` (default `default_size`)."""

    def __init__(self, sizes: dict[str, int] | None = None, default_size: int = 8):
        self._sizes = dict(sizes or {})
        self._default = int(default_size)
        self._stores: dict[str, OrderedDict] = {}
        self._making: dict[tuple[str, Hashable], threading.Event] = {}  # keys being made, set when done
        self._lock = threading.Lock()

    def get(self, kind: str, key: Hashable, make: Callable[[], T]) -> T:
        """The value stored under (kind, key), made by `make()` on a miss (outside the lock), or the value another
        thread is making for it, once made."""
        while True:
            with self._lock:
                store = self._stores.setdefault(kind, OrderedDict())
                if key in store:
                    store.move_to_end(key)
                    return store[key]
                pending = self._making.get((kind, key))
                if pending is None:
                    done = self._making[(kind, key)] = threading.Event()
                    break
            pending.wait()  # then look again: its value, or (it failed, or was dropped already) make it here
        try:
            value = make()
            with self._lock:
                store = self._stores.setdefault(kind, OrderedDict())
                store[key] = value
                while len(store) > self._sizes.get(kind, self._default):
                    store.popitem(last=False)
            return value
        finally:
            with self._lock:
                del self._making[(kind, key)]
            done.set()

    def ready(self, kind: str, key: Hashable) -> bool:
        """Whether a value is stored under (kind, key) (a get would return at once)."""
        with self._lock:
            return key in self._stores.get(kind, ())

    def latest(self, kind: str):
        """The most recently used value of a kind, or None."""
        with self._lock:
            store = self._stores.get(kind)
            return next(reversed(store.values())) if store else None

    def size(self, kind: str) -> int:
        """How many values of a kind are held."""
        with self._lock:
            return len(self._stores.get(kind, ()))

    def items(self, kind: str) -> list[tuple[Hashable, object]]:
        """The (key, value) pairs of a kind, least recently used first."""
        with self._lock:
            return list(self._stores.get(kind, {}).items())

    def discard(self, kind: str, key: Hashable) -> bool:
        """Drop the value under (kind, key), if held; whether one was."""
        with self._lock:
            return self._stores.get(kind, {}).pop(key, None) is not None

    def clear(self) -> None:
        """Drop every value."""
        with self._lock:
            self._stores.clear()


class SharedMemo:
    """An engine's cache when it shares the corpus-side kinds (`kinds`) with other engines: those go to `corpus`,
    the store of the engine it was derived from, every other kind to its own `own` (the same interface as Memo)."""

    def __init__(self, own: Memo, corpus: Memo, kinds: tuple[str, ...]):
        self.own, self.corpus, self.kinds = own, corpus, frozenset(kinds)

    def _of(self, kind: str) -> Memo:
        return self.corpus if kind in self.kinds else self.own

    def get(self, kind, key, make):
        """The value under (kind, key), from the shared store for a corpus-side kind."""
        return self._of(kind).get(kind, key, make)

    def ready(self, kind: str, key) -> bool:
        """Whether a value is stored under (kind, key), in the shared store for a corpus-side kind."""
        return self._of(kind).ready(kind, key)

    def latest(self, kind: str):
        """The most recently used value of a kind, or None."""
        return self._of(kind).latest(kind)

    def size(self, kind: str) -> int:
        """How many values of a kind are held."""
        return self._of(kind).size(kind)

    def items(self, kind: str) -> list:
        """The (key, value) pairs of a kind, least recently used first."""
        return self._of(kind).items(kind)

    def clear(self) -> None:
        """Drop this engine's own values (the shared ones belong to the engines of the same corpus)."""
        self.own.clear()
