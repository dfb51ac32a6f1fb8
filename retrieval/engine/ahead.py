"""Work ahead: the rankings a few d steps away from the slider's, computed in one background thread where a d step
costs enough to pay (`WorkAhead`, a part of `Engine`: the engine's memo, lock and runs are its own)."""

from __future__ import annotations

import threading
from dataclasses import replace

from ..core import params as params_spec  # the parameter table (`params` names the values everywhere here)
from ..core import workers
from ..core.params import Params
from ..retrievers.systems import REGISTRY, Sources

PREFETCH_ABOVE = 20_000_000  # documents x questions above which the d steps next to the current are computed ahead
PREFETCH_REACH = 3  # d steps on each side computed ahead at most, the nearest first: a slider dragged lands a few
# steps away (Streamlit sends the value where it is let go), and at 100k each step computed is 150-270 ms saved
PREFETCH_BUDGET = 600_000_000  # documents x questions x d values computed ahead after one request: 3 steps a side
# at 100,000 x 1,000 (about 0.3 s of the two cores a value, at the lowest priority), 1 at 1M (3-5 s a value)
PREFETCH_DELAY = 0.25  # seconds a request waits before it is computed (requests made meanwhile replace it)
PREFETCH_AFTER_OTHER = 2.0  # ... when another slider moved (k1, b, alpha, RRF k) and d's passes are cached: only the
# fusions are left to compute ahead (60-90 ms of a d step at 100k); computed after every step of a k1 walk in the
# browser, the thread was busy through each of the page's reruns, holding the interpreter lock (the server sampled)


def reach_for(n_docs: int, n_queries: int) -> int:
    """How many d steps on each side `Engine.prefetch` computes: PREFETCH_BUDGET's share of documents x questions
    (two values a step), between 1 and PREFETCH_REACH. 100,000 x 1,000: 3; 300,000 x 1,000 and more: 1."""
    return max(1, min(PREFETCH_REACH, PREFETCH_BUDGET // (2 * max(1, n_docs * n_queries))))


class WorkAhead:
    """`Engine`'s work ahead on the d slider (the engine supplies dataset, memo, key, cached, rankings, max_dims,
    slow_fit and its lock)."""

    def prefetch_pays(self) -> bool:
        """Whether a d step costs enough here to be computed ahead (`prefetch`): LSA's pass over documents x
        questions above PREFETCH_ABOVE (at 100,000 x 1,000 a d step measured 210-330 ms; on Cranfield, 1,400 x 225,
        a few milliseconds, and nothing runs ahead)."""
        return self.dataset.n_docs * self.dataset.n_queries > PREFETCH_ABOVE

    def reach(self) -> int:
        """How many d steps on each side `prefetch` computes on this corpus (`reach_for`)."""
        return reach_for(self.dataset.n_docs, self.dataset.n_queries)

    def neighbours(self, params: Params, down_first: bool = False) -> list[Params]:
        """The parameters up to `reach` d steps away that `prefetch` would compute, nearest first (d + 1, d - 1,
        d + 2, ...; `down_first`: d - 1 before d + 1 at each distance): within 1 and the largest d the corpus and
        the slider allow, not waiting on a slow SVD (a new block is never fitted ahead)."""
        top = min(self.max_dims(), params_spec.MAX_DIMS)
        out = []
        for s in range(1, self.reach() + 1):
            for d in (params.dims - s, params.dims + s) if down_first else (params.dims + s, params.dims - s):
                if 1 <= d <= top and not self.slow_fit(d):
                    out.append(replace(params, dims=d))
        return out

    def _passes_ready(self, params: Params, sources: Sources) -> bool:
        """Whether the runs that read d (LSA's: a pass over every document) are cached at `params`: what a d step
        costs most, where computing ahead pays most."""
        return all(
            self.memo.ready("run", self.key(name, params, sources))
            for name, system in REGISTRY.items()
            if "dims" in system.params
        )

    def prefetch(self, params: Params, sources: Sources = ()) -> threading.Thread | None:
        """Compute, in one background thread, the rankings a few d steps away from `params` (`neighbours`) that are
        not cached yet, so that the next d step of a slider, or a drag a few steps long, reads them (a step taken
        while one is being computed waits for that computation, not for a second one: the memo makes a key once).
        Only where it pays (`prefetch_pays`). The step in the direction d last moved comes first at each distance.
        The thread starts PREFETCH_DELAY after the request (PREFETCH_AFTER_OTHER when another slider moved and d's
        passes are cached: only the fusions are left to compute), and a request made meanwhile replaces it and waits
        its own delay (a slider still moving computes nothing ahead, and the page that asked draws undisturbed); a
        newer request also ends the one being computed after its current step. It and its kernels' worker threads
        run at the lowest priority (`workers.background_thread`), so a step the other way, computed at once, keeps the
        cores. One thread per engine. Returns the thread working (or None: nothing to do)."""
        if "LSA" not in REGISTRY or not self.prefetch_pays():
            return None
        with self._lock:
            before, self._ahead_params = self._ahead_params, params
        down = before is not None and params.dims < before.dims
        on_d = before is not None and before != params and replace(before, dims=params.dims) == params
        todo = [p for p in self.neighbours(params, down) if not self.cached(p, sources)]
        if not todo:
            return None
        passes_missing = not all(self._passes_ready(p, sources) for p in todo)
        delay = PREFETCH_DELAY if on_d or passes_missing else PREFETCH_AFTER_OTHER

        def work() -> None:
            while True:
                with self._lock:
                    pending = self._ahead_next
                    self._ahead_wake.clear()
                if pending is not None and self._ahead_wake.wait(pending[2]):
                    continue  # a request made meanwhile replaces this one, and waits its own delay
                with self._lock:  # the sliders at rest
                    request, self._ahead_next = self._ahead_next, None
                    if request is None:
                        self._ahead = None
                        return
                for p in request[0]:
                    if self._ahead_next is not None:  # a newer request goes first
                        break
                    try:
                        self.rankings(p, request[1])
                    except Exception:  # noqa: BLE001 - a page asking for these rankings makes them, shows the error
                        pass

        with self._lock:
            self._ahead_next = (todo, sources, delay)
            self._ahead_wake.set()
            t = self._ahead
            if t is None:
                t = self._ahead = workers.background_thread(work, "prefetch")
            return t
