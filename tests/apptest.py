"""Helpers for AppTest: open the app through app.py, as a person does."""

from __future__ import annotations

import functools
import re

from streamlit.components.v2 import manifest_scanner
from streamlit.testing.v1 import AppTest

from conftest import ROOT

APP = str(ROOT / "app.py")

# Every AppTest run scans the metadata of every installed distribution for Streamlit components (a server does it
# once, at its start): 0.36 s of a page run's 0.46 s here. The packages installed do not change while the tests
# run, so the scan is made once per test process and its answer handed to each run.
_scan_once = functools.cache(manifest_scanner.scan_component_manifests)
manifest_scanner.scan_component_manifests = lambda max_workers=None: list(_scan_once())


def open_app(page: str | None = None, query: dict[str, str] | None = None, before=None) -> AppTest:
    """Run app.py, which opens on the landing page (the Tour; optionally with URL query parameters, and `before(at)`
    called there), then switch to `page` (e.g. "pages/overview.py"); without `page` the landing page stays."""
    at = AppTest.from_file(APP, default_timeout=120)
    for key, value in (query or {}).items():
        at.query_params[key] = value
    at.run()
    if before:
        before(at)
    if page:
        at.switch_page(page).run()
        assert not at.exception, [e.value for e in at.exception]
    return at


def move(at: AppTest, key: str, value) -> AppTest:
    """Set a sidebar control through its widget, as a person would, and rerun."""
    for widget in (*at.sidebar.slider, *at.sidebar.selectbox):
        if widget.key == key:
            return widget.set_value(value).run()
    raise AssertionError(f"no sidebar control {key!r}: the page ran without app.py's frame")


def frame_with(at: AppTest, column: str):
    """The first table on the page with this column (the Data page's workspace list may come before the others)."""
    return next(d.value for d in at.dataframe if column in d.value.columns)


def shown(text: str) -> str:
    """What a person reads of a Markdown body: backslash escapes resolved, ui.markdown's code spans as they read."""
    read = re.finditer(
        r"\\([!-/:-@\[-`{-~])|(`+) ?(.+?) ?\2|(.)", text, re.DOTALL
    )  # an escape, a code span, a character
    return "".join(next(g for g in (m.group(1), m.group(3), m.group(4)) if g is not None) for m in read)


def outside_code(text: str) -> str:
    """A Markdown body with its code spans (ui.markdown's way of showing a word the renderer would turn into a link
    or a symbol: inert, shown as typed) replaced by a placeholder; backslash escapes stay as they are."""
    read = re.finditer(r"(\\[!-/:-@\[-`{-~])|(`+) ?.+? ?\2|(.)", text, re.DOTALL)
    return "".join("\0" if m.group(2) else m.group(0) for m in read)


def large_corpus(monkeypatch) -> None:
    """From now on engines are built anew and every corpus takes the prefix path (lsa.PREFIX_ABOVE = 0): LSA's first
    fit at a block counts as slow (`Engine.waiting`), as on a 100,000-document upload."""
    import weakref

    from retrieval.core.memo import Memo
    from retrieval.engine import registry
    from retrieval.retrievers import lsa

    monkeypatch.setattr(lsa, "PREFIX_ABOVE", 0)
    monkeypatch.setattr(registry, "_ENGINES", Memo({"engine": 2, "derived": 2}))
    monkeypatch.setattr(registry, "_ROOTS", weakref.WeakValueDictionary())


def the_app_s_thread() -> bool:
    """Whether the calling thread is the app's (not the background warm-up's, which evaluates the invented corpus on
    its own engine whenever a first engine of the process starts it): what a test counting the app's work counts."""
    import threading

    from retrieval.engine.warmup import WARM_UP_THREAD

    return threading.current_thread().name != WARM_UP_THREAD
