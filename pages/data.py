"""Data: upload a dataset or run files, preview them, read their statistics, download the results.
The parts are in ui/data.py."""

from __future__ import annotations

from ui import cache, dense, state
from ui import data as page

state.init_state()
page.init()

ds = cache.current_dataset()
page.header(ds)
page.uploads()
page.show_messages(ds)
dense.section(ds)
page.preview(ds)
page.statistics(ds)
page.downloads(ds)
page.follow_fit(ds)
