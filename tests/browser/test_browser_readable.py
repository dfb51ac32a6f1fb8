"""The places a teacher found cut or unreadable at 1024×768, in Chromium, on the invented corpus and on a collection
uploaded as a BEIR zip (judgements naming relevant documents only): each system's top list (its text column),
Tour step 6's tables, the fusion chart's labels on the Tuning page, the Data page's "Delete it for everyone", the
Overview's word on unjudged documents, and the page icons (Material Symbols, drawn by the font the app serves,
never an emoji that a machine without an emoji font draws as an empty box).

What is measured, in the page itself: a text's box against the box that clips it (scrollWidth ≤ clientWidth), a
dataframe's accessible header (only the columns in view are listed) and the width of its text column, every text
of a chart inside the chart's box.
"""

from __future__ import annotations

import time

import pytest
from test_browser import ARGS, CHROMIUM, IDLE, SIGNED_IN, _idle, _upload_zip, server  # noqa: F401  (the module's server, as a fixture here too)
from test_browser_layout import SMALL, collection_zip

from retrieval.analyses import coverage
from retrieval.core.params import Params
from retrieval.corpus import dataset as datasets
from retrieval.engine.engine import evaluate

pytestmark = pytest.mark.browser

# The canvas dataframes of the main area: for each, its header cells in view, its column count and its width.
FRAMES = """() => [...document.querySelectorAll('[data-testid=stMain] [data-testid=stDataFrame]')].map(el => ({
  columns: +el.querySelector('table[role=grid]').getAttribute('aria-colcount'),
  shown: [...el.querySelectorAll('th[role=columnheader]')].map(th => th.innerText.trim()),
  width: el.getBoundingClientRect().width,
}))"""

# Every text drawn in the fusion chart that lies outside the chart's box (cut by the page).
CHART_TEXT_OUTSIDE = """() => {
  const out = [];
  for (const chart of document.querySelectorAll('[data-testid=stMain] [data-testid=stVegaLiteChart]')) {
    if (!chart.textContent.includes('#1 ·')) continue;  // the fusion chart: a row per fused document
    const box = chart.getBoundingClientRect();
    for (const t of chart.querySelectorAll('svg text')) {
      const r = t.getBoundingClientRect();
      if (r.width && (r.right > box.right + 1 || r.left < box.left - 1)) out.push(`"${t.textContent}" ${Math.round(r.left)}-${Math.round(r.right)} px, the chart ${Math.round(box.left)}-${Math.round(box.right)}`);
    }
  }
  return out;
}"""

# A widget's label (check box, button) wider than the box that shows it.
LABEL_CUT = """(text) => {
  const el = [...document.querySelectorAll('[data-testid=stMain] label, [data-testid=stMain] button')]
    .find(e => e.innerText.trim().startsWith(text));
  if (!el) return 'missing';
  for (const x of [el, ...el.querySelectorAll('*')]) {
    if (x.clientWidth && x.scrollWidth > x.clientWidth + 1 && (x.innerText || '').trim()) return `${x.scrollWidth} px in ${x.clientWidth}`;
  }
  const r = el.getBoundingClientRect(), main = document.querySelector('[data-testid=stMain]').getBoundingClientRect();
  return r.right <= main.right + 1 ? '' : `ends at ${r.right} px, the page at ${main.right}`;
}"""

# Every icon of the navigation and of the Tour's cards: a Material Symbol (the app's own font) or an emoji (a box
# without an emoji font).
ICONS = """() => {
  const of = (root) => [...document.querySelectorAll(root)].map(a => ({
    text: a.innerText.trim(),
    material: [...a.querySelectorAll('[data-testid=stIconMaterial]')].map(i => getComputedStyle(i).fontFamily),
    emoji: a.querySelectorAll('[data-testid=stIconEmoji]').length,
  }));
  return {nav: of('[data-testid=stSidebarNav] a'), cards: of('[data-testid=stMain] [data-testid=stPageLink] a')};
}"""


TOP_LIST_FIXED = 36 + 75 + 58 + 78  # a top list's rank, document ("small"), grade and score columns (ui.per_question)


def _open(page, url: str, path: str, query: str, heading: str | None = None) -> None:
    page.goto(f"{url}/{path}{query}")
    page.wait_for_selector(IDLE, timeout=240_000)  # a first visit may index and compile on a busy machine
    _idle(page)
    if heading:
        page.get_by_text(heading).first.scroll_into_view_if_needed(timeout=60_000)
        time.sleep(1.0)  # let the canvas and vega draw


def _readable(page, url: str, query: str) -> list[str]:
    """What is cut at the places of the issue, on the dataset the query names."""
    found = []
    _open(page, url, "per_question", query, "of each system")
    for f in page.evaluate(FRAMES):
        # a system's top list: every column in view and the text column at least 200 px (the others take 247)
        if "score" in f["shown"] and (f["columns"] != len(f["shown"]) or f["width"] - TOP_LIST_FIXED < 200):
            found.append(f"per question, a top list: {f['shown']} of {f['columns']} columns, {f['width']:.0f} px wide")
    _open(page, url, "", (query + "&" if query else "?") + "step=6", "6. Fusing the two")
    page.get_by_text("6. Fusing the two").first.wait_for(timeout=60_000)
    time.sleep(1.0)
    for f in page.evaluate(FRAMES):
        if f["columns"] != len(f["shown"]):
            found.append(f"tour step 6: {f['shown']} of {f['columns']} columns in view")
    _open(page, url, "tuning", query, "Fusion explained")
    page.locator("[data-testid=stVegaLiteChart]").filter(has_text="#1 ·").first.scroll_into_view_if_needed(
        timeout=60_000
    )
    time.sleep(1.5)
    found += [f"tuning, the fusion chart's text: {x}" for x in page.evaluate(CHART_TEXT_OUTSIDE)]
    labels = (
        page.locator("[data-testid=stVegaLiteChart]")
        .filter(has_text="#1 ·")
        .first.locator("g.role-axis-label text")
        .all_text_contents()
    )
    assert any("top 10" in t for t in labels), labels  # each row's note, whole, under its label
    assert page.locator("[data-testid=stException]").count() == 0
    return found


def test_the_issue_s_places_are_readable_at_1024_by_768(server, tmp_path):  # noqa: F811
    from playwright.sync_api import sync_playwright

    zipped = tmp_path / "generated.zip"
    zipped.write_bytes(collection_zip())
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        page = browser.new_context(viewport=SMALL, extra_http_headers=SIGNED_IN).new_page()  # signed in: it uploads
        found = [f"invented, {x}" for x in _readable(page, server, "")]

        _open(page, server, "", "?step=10", "Now try your own data")
        icons = page.evaluate(ICONS)
        assert len(icons["nav"]) == 11 and not any(i["emoji"] for i in icons["nav"]), icons  # nothing to draw as a box
        assert len(icons["cards"]) == 6, icons  # the Tour's cards: a Material Symbol each, in the app's own font
        assert all(
            len(i["material"]) == 1 and "Material Symbols" in i["material"][0] and not i["emoji"]
            for i in icons["cards"]
        ), icons

        _upload_zip(page, server, zipped, 120_000)
        query = "?" + page.url.split("?", 1)[1]
        found += [f"generated, {x}" for x in _readable(page, server, query)]

        # the Overview says how much of each top 5 is unjudged, though these judgements name relevant documents only
        _open(page, server, "overview", query)
        said = " ".join(page.locator("[data-testid=stMain] [data-testid=stAlert]").all_inner_texts())
        ds = datasets.load_beir_zip(zipped.read_bytes(), "generated.zip")
        assert not (ds.qrels.grade <= 0).any()  # relevant documents only: the warning was suppressed there
        found_here = coverage.coverage(ds, evaluate(ds, Params(), ["ndcg@5"]).rankings, 5)
        assert found_here.much_unjudged  # the collection was made with few judgements per question
        want = coverage.coverage_sentence(found_here)
        assert want.replace("\\", "") in said.replace("\\", ""), (want, said)
        assert "of BM25's top 5" in said, said

        # the Data page's stored dataset: "Delete it for everyone" whole
        _open(page, server, "data", query, "Delete it for everyone")
        cut = page.evaluate(LABEL_CUT, "Delete it for everyone")
        if cut:
            found.append(f"data: 'Delete it for everyone' {cut}")
        browser.close()
    assert not found, "cut at 1024×768:\n" + "\n".join(found)
