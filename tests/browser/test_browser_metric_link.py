"""The sidebar's metric in a real browser's address bar: by its short name, from an older link with its label as from
a choice in the sidebar, and kept there from page to page (issue 43, §5). AppTest does not model the address bar
(a widget bound to the URL is written there by the frontend), so this is Chromium against `streamlit run`."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest
from test_browser import ARGS, CHROMIUM, _idle, _serving

pytestmark = pytest.mark.browser


def _metric(url: str) -> list[str]:
    return parse_qs(urlsplit(url).query).get("metric", [])


def test_the_address_bar_names_the_metric_by_its_short_name(tmp_path):
    from playwright.sync_api import sync_playwright

    with _serving(tmp_path / "home") as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        page = browser.new_page(viewport={"width": 1024, "height": 768})
        page.goto(f"{url}/overview?metric=bpref+%28judged+documents+only%29&k1=2.0")  # a link from before
        _idle(page)
        page.wait_for_url("**metric=bpref*", timeout=30_000)
        assert _metric(page.url) == ["bpref"] and parse_qs(urlsplit(page.url).query)["k1"] == ["2.0"], page.url
        sidebar = page.locator("[data-testid=stSidebar]")
        chosen = sidebar.locator("[data-testid=stSelectbox]").filter(has_text="metric")
        shown = (
            chosen.inner_text() + " " + " ".join(chosen.locator("input").evaluate_all("els => els.map(e => e.value)"))
        )
        assert "bpref (judged documents only)" in shown, shown
        assert page.locator("[data-testid=stException]").count() == 0
        page.get_by_role("link", name="Compare").first.click()  # through the app's navigation
        _idle(page)
        page.wait_for_url("**/compare?*metric=bpref*", timeout=30_000)
        assert _metric(page.url) == ["bpref"], page.url
        chosen.click()
        page.get_by_role("option", name="MRR").click()
        _idle(page)
        page.wait_for_url("**metric=mrr*", timeout=30_000)
        assert _metric(page.url) == ["mrr"], page.url
        browser.close()
