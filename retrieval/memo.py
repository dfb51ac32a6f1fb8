"""The one cache mechanism: a bounded, thread-safe store of computed values keyed by value (never by `id()`).

Keys are tuples of plain values: a dataset's or a run's content fingerprint, parameter values, the keys of the
values something was computed from. Each kind of value has its own bound (least recently used dropped first),
so the memory a store holds is the sum of its kinds' bounds times their sizes. Two threads asking for the
same missing key may both compute it; the first value stored wins and both get it, so a value never changes
under a key once seen.
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
        self._lock = threading.Lock()

    def get(self, kind: str, key: Hashable, make: Callable[[], T]) -> T:
        """The value stored under (kind, key), made by `make()` on a miss (outside the lock)."""
        with self._lock:
            store = self._stores.setdefault(kind, OrderedDict())
            if key in store:
                store.move_to_end(key)
                return store[key]
        value = make()
        with self._lock:
            store = self._stores.setdefault(kind, OrderedDict())
            if key in store:  # another thread stored it first: keep one value per key
                store.move_to_end(key)
                return store[key]
            store[key] = value
            while len(store) > self._sizes.get(kind, self._default):
                store.popitem(last=False)
        return value

    def latest(self, kind: str):
        """The most recently used value of a kind, or None."""
        with self._lock:
            store = self._stores.get(kind)
            return next(reversed(store.values())) if store else None

    def size(self, kind: str) -> int:
        """How many values of a kind are held."""
        with self._lock:
            return len(self._stores.get(kind, ()))

    def clear(self) -> None:
        """Drop every value."""
        with self._lock:
            self._stores.clear()
