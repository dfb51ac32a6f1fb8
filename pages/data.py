"""Data: upload a dataset or run files, preview them, read their statistics, download the results.
The parts are in ui/data.py."""

from __future__ import annotations

from ui import cache, state, workspace
from ui import data as page

state.init_state()
page.init()

ds = cache.current_dataset()
page.header(ds)
page.uploads()
page.show_messages(ds)
workspace.section()
page.dense_section(ds)
page.preview(ds)
later = cache.waiting(ds)  # asked once: the parts drawn without LSA's fit and the poller that brings it agree
page.statistics(ds, later)
page.downloads(ds, later)
page.follow_fit(ds, later)
