"""Numba's cache on disk (`cache=True`: an index `.nbi` per function and a data file `.nbc` per compiled signature, both
pickles) checked as numba reads it, and a damaged one cleared so that numba compiles the kernel again.

Numba 0.68 raises EOFError at a kernel's first call when its index or a data file is cut (a kill or a full disk
while it wrote): numba/numba#10434, fixed by the pull request numba/numba#10656 (open at the time of writing), after
which a corrupt file is a cache miss and this module can go. Numba has no public API to validate or clear one
function's cache (its documentation says to delete the cache directory), so the check reads, here and nowhere else
but `dispatch.on_disk`, the cache object numba keeps on each dispatcher: `_cache._cache_file` with its
`_index_path`, `_data_path` and `_load_index` (numba's own reading of the index).
"""

from __future__ import annotations

import pickletools
import types
from collections.abc import Iterable
from pathlib import Path

from numba.core.dispatcher import Dispatcher


def _readable(data: bytes) -> bool:
    """Whether `data` is one whole pickle (its opcodes read to the end: nothing is built or run)."""
    try:
        ops = list(pickletools.genops(data))
    except Exception:  # noqa: BLE001 - truncated, garbled: any failure means "not whole"
        return False
    return bool(ops) and ops[-1][0].name == "STOP"


def _damaged(cache_file) -> bool:
    """Whether numba would fail reading this cache (an EOFError or an unpickling error where it expects a file it
    wrote): its index (numba's version, then the source stamp and the overloads) or a data file the index names."""
    index = Path(cache_file._index_path)
    try:
        data = index.read_bytes()
    except FileNotFoundError:
        return False  # nothing cached yet
    except OSError:
        return True
    if not _readable(data):
        return True
    try:
        overloads = cache_file._load_index()  # numba's own reading (it ignores another version's or source's index)
    except Exception:  # noqa: BLE001 - what numba would raise at the kernel's first call
        return True
    for name in overloads.values():
        try:
            if not _readable(Path(cache_file._data_path(name)).read_bytes()):
                return True
        except FileNotFoundError:
            continue  # numba compiles again when a data file is gone
        except OSError:
            return True
    return False


def repair_disk_cache(found: Iterable) -> list[str]:
    """Numba's on-disk cache (cache=True) of each dispatcher in `found` checked as numba reads it; a damaged one (an
    empty or cut index, a cut data file: a kill or a full disk while numba wrote) is cleared, its index and data
    files deleted, so that numba compiles the kernel again and writes them anew instead of raising EOFError at its
    first call. Returns one warning per kernel cleared, naming its index file."""
    said = []
    for d in found:
        cache_file = getattr(getattr(d, "_cache", None), "_cache_file", None)
        if cache_file is None or not hasattr(cache_file, "_index_path"):
            continue  # not cached on disk (NUMBA_DISABLE_JIT, cache=False)
        if not _damaged(cache_file):
            continue
        index = Path(cache_file._index_path)
        for f in (index, *index.parent.glob(f"{index.stem}.*.nbc")):
            try:
                f.unlink(missing_ok=True)
            except OSError:
                pass
        said.append(
            f"{index}: numba's compiled cache of {d.py_func.__name__} was damaged; it was cleared and "
            "the kernel is compiled again (once)"
        )
    return said


def cached_dispatchers(modules: Iterable[types.ModuleType]) -> list:
    """Every numba dispatcher the modules define (each once), the kernels and the helpers they call."""
    seen: dict[int, Dispatcher] = {}
    for m in modules:
        for value in vars(m).values():
            if isinstance(value, Dispatcher) and value.py_func.__module__ == m.__name__:
                seen.setdefault(id(value), value)
    return list(seen.values())
