"""One real browser: Debian's Chromium (headless, driven by Playwright) against `streamlit run` on 127.0.0.1.

It loads the app on its landing page (the Tour), goes to the Overview by the navigation, moves the fusion-alpha
slider with the keyboard, waits for the rerun to end, checks that the Overview's bar chart changed and that no
exception is shown, and saves a screenshot.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from conftest import ROOT

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]
IDLE = "[data-testid=stApp][data-test-script-state=notRunning]"

if not Path(CHROMIUM).exists():
    if os.environ.get("CI"):
        pytest.fail(f"{CHROMIUM} is missing: .ci/run installs Debian's chromium", pytrace=False)
    pytest.skip(f"{CHROMIUM} is not installed (apt-get install -y chromium)", allow_module_level=True)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server():
    """`streamlit run app.py` on a free port of 127.0.0.1, until the module's tests end."""
    port = _free_port()
    cmd = [sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"), "--server.port", str(port),
           "--server.address", "127.0.0.1", "--server.headless", "true", "--browser.gatherUsageStats", "false"]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if urllib.request.urlopen(f"{url}/_stcore/health", timeout=2).read() == b"ok":
                break
        except OSError:
            time.sleep(0.3)
    else:
        proc.kill()
        pytest.fail(f"streamlit did not start: {proc.stdout.read().decode()[-2000:]}")
    yield url
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()


def test_moving_a_slider_redraws_the_chart(server, tmp_path):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        page = browser.new_page(viewport={"width": 1500, "height": 1100})
        page.goto(server)
        page.wait_for_selector(IDLE, timeout=60_000)
        page.wait_for_selector("[data-testid=stMain] h1:has-text('Tour')", timeout=30_000)  # the landing page
        assert page.locator("[data-testid=stException]").count() == 0
        page.get_by_role("link", name="Overview").click()
        page.wait_for_selector("[data-testid=stMain] h1:has-text('Overview')", timeout=60_000)
        page.wait_for_selector(IDLE, timeout=60_000)
        charts = page.locator("[data-testid=stVegaLiteChart]")
        charts.nth(1).wait_for(timeout=30_000)
        bars = charts.first
        bars.locator("canvas, svg").first.wait_for(timeout=30_000)
        time.sleep(1.0)  # let vega finish its first paint
        before = bars.screenshot()

        alpha = page.locator("[data-testid=stSidebar] [data-testid=stSlider]").filter(has_text="fusion alpha").locator("input")
        assert alpha.get_attribute("aria-valuetext") == "0.50"
        alpha.focus()
        started = time.monotonic()
        page.keyboard.press("End")  # alpha 0.5 -> 1.0: the weighted fusion becomes BM25 alone
        page.wait_for_url("**alpha=1**", timeout=30_000)
        page.wait_for_selector(IDLE, timeout=60_000)
        after = before
        while time.monotonic() - started < 20 and after == before:
            after = bars.screenshot()
            if after == before:
                time.sleep(0.1)
        elapsed = time.monotonic() - started

        assert alpha.get_attribute("aria-valuetext") == "1.00"
        assert after != before, "the bar chart did not change after moving alpha"
        assert page.locator("[data-testid=stException]").count() == 0
        shot = tmp_path / "overview-after-alpha.png"
        page.screenshot(path=str(shot), full_page=True)
        assert shot.stat().st_size > 10_000
        print(f"slider to redrawn chart: {elapsed:.2f} s; screenshot {shot}")
        browser.close()
