"""Readable at 1024×768, a teacher's projector: every page in Chromium, on the invented corpus and on a larger
collection uploaded through the Data page, with nothing cut off.

What is measured, in the page itself (page.evaluate): a metric card's label, value and delta, a button's text
(buttons, download buttons, segmented controls), a tab and the tab bar must not be wider than the box that
shows them (`scrollWidth > clientWidth` where the box clips: Streamlit ends such a text with an ellipsis); an
HTML table (st.table) must show all its columns; a chart's legend must lie inside the chart, and no axis may
repeat a label. Dataframes draw on a canvas (glide-data-grid): its accessible header row lists only the columns in
view, so the Playground's "Ranks of the judged documents" is checked to show every column that way or, as an
HTML table, by its width.

And the Playground's judging table stays where it is under the pointer when a first document is ticked.
"""

from __future__ import annotations

import io
import json
import random
import time
import zipfile
from pathlib import Path

import pytest
from test_browser import ARGS, CHROMIUM, SIGNED_IN, _idle, _upload_zip, server  # noqa: F401  (the module's server, as a fixture here too)

from ui.router import PAGES

pytestmark = pytest.mark.browser

SMALL = {"width": 1024, "height": 768}

# Every text that Streamlit clips (overflow hidden or text-overflow: ellipsis) and that is wider than its box.
CUT_TEXT = """() => {
  const roots = '[data-testid=stMetric], [data-testid=stButton], [data-testid=stDownloadButton], '
    + '[data-testid=stButtonGroup], [data-testid=stFormSubmitButton], [data-testid=stLinkButton], '
    + '[data-testid=stPopover], [role=tablist], [data-testid=stTable]';
  const out = [];
  for (const root of document.querySelectorAll('[data-testid=stMain] ' + roots.split(', ').join(', [data-testid=stMain] '))) {
    const kind = root.getAttribute('data-testid') || root.getAttribute('role');
    for (const el of [root, ...root.querySelectorAll('*')]) {
      if (!el.clientWidth || !(el.innerText || '').trim()) continue;
      const style = getComputedStyle(el);
      const clips = style.overflowX !== 'visible' || style.textOverflow === 'ellipsis';
      if (clips && el.scrollWidth > el.clientWidth + 1) {
        out.push(`${kind}: "${el.innerText.trim().replace(/\\s+/g, ' ').slice(0, 80)}" needs ${el.scrollWidth} px, has ${el.clientWidth}`);
        break;  // one finding per element is enough
      }
    }
  }
  return out;
}"""

# A legend drawn beyond its chart's edge (cut by the page), and an axis that repeats a label.
CHARTS = """() => {
  const out = [];
  for (const chart of document.querySelectorAll('[data-testid=stMain] [data-testid=stVegaLiteChart]')) {
    const box = chart.getBoundingClientRect();
    for (const legend of chart.querySelectorAll('g.role-legend')) {
      const r = legend.getBoundingClientRect();
      if (r.width && (r.right > box.right + 1 || r.left < box.left - 1)) {
        out.push(`legend "${legend.textContent.slice(0, 60)}" spans ${Math.round(r.left)}-${Math.round(r.right)} px, the chart ${Math.round(box.left)}-${Math.round(box.right)}`);
      }
    }
    for (const axis of chart.querySelectorAll('g.role-axis-label')) {
      const labels = [...axis.querySelectorAll('text')].map(t => t.textContent).filter(t => t);
      const twice = labels.filter((t, i) => labels.indexOf(t) !== i);
      if (twice.length) out.push(`axis repeats ${[...new Set(twice)].join(', ')}: ${labels.join(' ')}`);
    }
  }
  return out;
}"""

# A table's columns in view: a canvas dataframe lists in its accessible header only the columns in view.
COLUMNS_IN_VIEW = """(heading) => {
  const title = [...document.querySelectorAll('[data-testid=stMain] [data-testid=stMarkdownContainer]')]
    .find(m => m.innerText.startsWith(heading));
  const el = title.closest('[data-testid=stElementContainer]').nextElementSibling
    .querySelector('[data-testid=stDataFrame], [data-testid=stTable]');
  if (el.getAttribute('data-testid') === 'stDataFrame') {
    const n = +el.querySelector('table[role=grid]').getAttribute('aria-colcount');
    const shown = [...el.querySelectorAll('th[role=columnheader]')].map(th => th.innerText);
    return {shown, columns: n, fits: shown.length === n};
  }
  const heads = [...el.querySelectorAll('thead th')];
  const right = Math.min(el.getBoundingClientRect().right, el.querySelector('table').parentElement.getBoundingClientRect().right);
  return {shown: heads.map(th => th.innerText.trim()), columns: heads.length,
          fits: heads[heads.length - 1].getBoundingClientRect().right <= right + 1};
}"""


def collection_zip() -> bytes:
    """A BEIR zip of 300 documents and 40 questions, made the same every time: 20 topics of five words, each
    document 12 to 30 words of its topic and of common words, each question 3 to 6 of its topic's words and
    4 to 9 of its topic's documents judged relevant (grade 1 or 2; no document judged not relevant, as in many
    public collections). Ids are long-ish, as real ones are."""
    rng = random.Random(34)
    syllables = ["tra", "mon", "sel", "vik", "dor", "pen", "lu", "sar", "gri", "fo", "nel", "quo", "bas", "tem", "ris"]
    words = list(dict.fromkeys("".join(rng.sample(syllables, 3)) for _ in range(400)))
    topics = [words[5 * t : 5 * t + 5] for t in range(20)]
    common = words[100:160]
    docs, queries, qrels = [], [], []
    for i in range(300):
        t = i % 20
        text = " ".join(
            rng.choice(topics[t]) if rng.random() < 0.4 else rng.choice(common) for _ in range(rng.randint(12, 30))
        )
        docs.append(
            {"_id": f"collection-doc-{t:02d}-{i:05d}", "title": f"{topics[t][0]} {common[i % 60]}", "text": text}
        )
    for q in range(40):
        t = q % 20
        qid = f"question-{q:03d}-{topics[t][1]}"
        queries.append({"_id": qid, "text": " ".join(rng.sample(topics[t], rng.randint(3, 5)) + rng.sample(common, 1))})
        pool = [d["_id"] for d in docs if d["_id"].startswith(f"collection-doc-{t:02d}-")]
        qrels += [(qid, d, rng.choice((1, 2))) for d in rng.sample(pool, rng.randint(4, 9))]
    b = io.BytesIO()
    files = {
        "corpus.jsonl": "".join(json.dumps(d) + "\n" for d in docs),
        "queries.jsonl": "".join(json.dumps(q) + "\n" for q in queries),
        "qrels/test.tsv": "query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{d}\t{g}\n" for q, d, g in qrels),
    }
    with zipfile.ZipFile(b, "w") as z:
        for name, text in files.items():  # a fixed time stamp: the same bytes every time
            z.writestr(zipfile.ZipInfo(f"generated/{name}", date_time=(2024, 1, 1, 0, 0, 0)), text)
    return b.getvalue()


def _start_from_a_dataset_question(page) -> None:
    """On the Playground: the selector's first dataset question (its text and judgements)."""
    box = page.locator("[data-testid=stSelectbox]").filter(has_text="start from a dataset question")
    box.locator("input").click()
    page.keyboard.press("ArrowDown")
    page.keyboard.press("Enter")
    _idle(page)


def _judged_ranks(page) -> dict:
    """The Playground's "Ranks of the judged documents": its columns and whether they are all in view."""
    page.get_by_text("Ranks of the judged documents").first.wait_for(timeout=30_000)
    return page.evaluate(COLUMNS_IN_VIEW, "Ranks of the judged documents")


def _cut_on_every_page(page, base: str, query: str) -> list[str]:
    """Each page at the page's size: what is cut, named by page."""
    found = []
    for i, (path, title, _) in enumerate(PAGES):
        page.goto(f"{base}/{'' if i == 0 else Path(path).stem}{query}")
        _idle(page)
        page.wait_for_selector(f"[data-testid=stMain] h1:has-text('{title}')", timeout=60_000)
        if title == "Playground":
            _start_from_a_dataset_question(page)
            ranks = _judged_ranks(page)
            if not ranks["fits"]:
                found.append(
                    f"{title}: the ranks of the judged documents show {ranks['shown']} of {ranks['columns']} columns"
                )
        time.sleep(1.0)  # let vega draw
        found += [f"{title}: {x}" for x in page.evaluate(CUT_TEXT) + page.evaluate(CHARTS)]
        assert page.locator("[data-testid=stException]").count() == 0, title
    return found


def test_nothing_is_cut_at_1024_by_768_on_the_invented_corpus_nor_on_an_uploaded_collection(server, tmp_path):  # noqa: F811
    from playwright.sync_api import sync_playwright

    zipped = tmp_path / "generated.zip"
    zipped.write_bytes(collection_zip())
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        page = browser.new_context(viewport=SMALL, extra_http_headers=SIGNED_IN).new_page()  # signed in: it uploads
        found = [f"invented, {x}" for x in _cut_on_every_page(page, server, "")]

        _upload_zip(page, server, zipped, 120_000)
        assert "generated — 300 documents, 40 questions" in page.locator("[data-testid=stSidebar]").inner_text()
        query = "?" + page.url.split("?", 1)[1]
        found += [f"generated, {x}" for x in _cut_on_every_page(page, server, query)]
        browser.close()
    assert not found, "cut at 1024×768:\n" + "\n".join(found)


def test_ticking_a_first_document_in_the_playground_leaves_the_judging_table_under_the_pointer(server):  # noqa: F811
    """A typed question has no judgement: the first tick makes the metrics appear. They must not push the table
    down (it jumped about 560 px)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        page = browser.new_context(viewport=SMALL).new_page()
        page.goto(f"{server}/playground")
        _idle(page)
        field = page.get_by_role("textbox", name="question")
        field.fill("refund after two weeks")
        field.press("Enter")
        _idle(page)
        editor = page.locator("[data-testid=stDataFrame]").filter(has=page.locator("th:text-is('relevant')")).first
        editor.scroll_into_view_if_needed()
        time.sleep(0.5)
        before = editor.bounding_box()
        metrics_before = page.locator("[data-testid=stMain] [data-testid=stMetricValue]").all_inner_texts()
        page.mouse.click(before["x"] + 42, before["y"] + 35 + 17)  # the first row's "relevant" checkbox
        _idle(page)
        after = editor.bounding_box()
        metrics_after = page.locator("[data-testid=stMain] [data-testid=stMetricValue]").all_inner_texts()
        assert metrics_after != metrics_before and any(v[0].isdigit() for v in metrics_after), (
            metrics_before,
            metrics_after,
        )
        assert abs(after["y"] - before["y"]) <= 2, f"the judging table moved {after['y'] - before['y']:+.0f} px"
        assert page.locator("[data-testid=stException]").count() == 0
        browser.close()
