"""Experiments: save the current view by name, compare two saved experiments, follow a metric across them.
The parts are in ui/experiments.py."""

from __future__ import annotations

from ui import experiments as page
from ui import state

state.init_state()
page.page()
