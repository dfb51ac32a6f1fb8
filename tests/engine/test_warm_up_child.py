"""The app's warm-up child (`python -m retrieval warmup`, started by the server) is reaped when the server stops,
SIGTERM included: never left a zombie under an init that reaps nothing (issue 44)."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import ROOT

SERVER = """
import signal, sys, threading
from retrieval.engine import engine
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # as Streamlit's server: a SIGTERM ends it normally
threading.Thread(target=engine._warm_up_in_child, daemon=True).start()
threading.Event().wait()
"""


def _children(pid: int) -> list[int]:
    out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True, text=True).stdout
    return [int(x) for x in out.split()]


def _state(pid: int) -> str | None:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return None


@pytest.mark.slow
def test_a_server_stopped_during_warm_up_reaps_its_child():
    server = subprocess.Popen([sys.executable, "-c", SERVER], cwd=ROOT)
    deadline = time.monotonic() + 60
    while not (children := _children(server.pid)):
        assert time.monotonic() < deadline and server.poll() is None, "the warm-up child never started"
        time.sleep(0.05)
    (child,) = children
    server.send_signal(signal.SIGTERM)
    assert server.wait(timeout=30) == 0
    time.sleep(1.5)  # longer than the child's watch of its parent (0.5 s)
    assert _state(child) in (None,), f"the warm-up child is {_state(child)} (Z: a zombie)"
