"""Slider latency in a real browser: from a key press on a sidebar slider to the Overview's bar chart redrawn.

Starts `streamlit run app.py` on 127.0.0.1 and a free port, opens it in Debian's headless Chromium through
Playwright (the same launch as tests/browser/test_browser.py), optionally uploads a BEIR zip through the Data page
(timing set_input_files -> the success message, and the stages that message reports), then goes to the
Overview and presses arrow keys on the BM25 k1, fusion alpha and RRF constant sliders, N times each.

How a redraw is detected, inside the page (one clock: the page's performance.now()):

* a capturing `keydown` listener stamps the key press (`event.timeStamp`);
* WebSocket.prototype.send is wrapped, so the moment the browser sends the rerun request is known (the
  slider's own debounce lies between the key and this);
* a MutationObserver logs every change of `data-test-script-state` on the app (running / notRunning);
* from the key press on, a requestAnimationFrame loop fingerprints the first `[data-testid=stVegaLiteChart]`
  once per frame: the canvas's pixels (getImageData, FNV-1a over every pixel, plus the canvas size) or, for
  an SVG renderer, a hash of its markup. The redraw time is the frame at which the fingerprint last changed,
  i.e. when the chart reached the picture it keeps (an intermediate blank or partial frame does not count as
  done). A tick is over once the rerun has ended and the fingerprint has not moved for SETTLE_MS.

A tick whose new values leave every bar where it was (no pixel or markup change) is reported as "unchanged":
there is no redraw to time, only the rerun. The Overview's caption (it names k1, alpha and the RRF k) is
watched too: its change marks the first new element from the rerun on the screen.

Ticks: `alternate` presses ArrowRight, ArrowLeft, ... so the slider goes back and forth between two values;
after the first two presses both results are in the app's caches (BM25 per (k1, b), the weighted fusion per
alpha). `walk` presses ArrowRight every time: a new value each press, nothing cached. `--pattern
alternate,walk` runs both, in that order, in the same session.

Examples (2-core machine: run nothing else heavy meanwhile):

    python bench/browser_latency.py --pattern alternate,walk          # the invented corpus
    (cd ../shared/datasets && zip -r -q /tmp/browser-latency/cranfield.zip cranfield)
    python bench/browser_latency.py --zip /tmp/browser-latency/cranfield.zip --pattern alternate,walk
    python bench/browser_latency.py --synthetic 100000 --pattern alternate,walk
        # bench/synthetic.py's corpus (its cached pickle), written as a BEIR folder + zip under
        # /tmp/browser-latency, then uploaded through the Data page like any zip
    python bench/browser_latency.py --zip /tmp/browser-latency/cranfield.zip --messages
        # also stamps every WebSocket message the browser receives: a second table splits each redraw at the last
        # message before it (the server's part up to it, the browser's after it: Vega's update and paint)
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
IDLE = "[data-testid=stApp][data-test-script-state=notRunning]"
VIEWPORT = {"width": 1500, "height": 1100}
SLIDERS = {  # name on the command line -> the slider's label in the sidebar
    "k1": "BM25 k1",
    "alpha": "fusion alpha",
    "rrf": "RRF constant k",
    "dims": "LSA dimensions d",
}
SETTLE_MS = 700  # a tick is over when the rerun has ended and the chart has not changed for this long
TMP = Path(tempfile.gettempdir()) / "browser-latency"

# With --messages, installed first: a stamp (page clock) and the size of every WebSocket message the browser
# receives (Streamlit's deltas), so a tick can say when the last message before the chart's final picture came.
MESSAGES_JS = r"""
(() => {
  const recvs = window.__lat_recvs = [];
  const WS = window.WebSocket;
  window.WebSocket = class extends WS {
    constructor(...args) {
      super(...args);
      this.addEventListener('message', (e) => {
        const d = e.data;
        recvs.push([performance.now(), d.byteLength !== undefined ? d.byteLength : (d.size !== undefined ? d.size : d.length)]);
      });
    }
  };
})();
"""

# Installed before any page script runs: stamps of WebSocket sends and of the script state, and `__lat.arm()`.
INIT_JS = r"""
(() => {
  const L = window.__lat = {sends: [], states: [], ticks: []};
  const send = WebSocket.prototype.send;
  WebSocket.prototype.send = function (data) { L.sends.push(performance.now()); return send.call(this, data); };
  const watch = () => {
    const app = document.querySelector('[data-testid=stApp]');
    if (!app) { setTimeout(watch, 20); return; }
    L.states.push([performance.now(), app.getAttribute('data-test-script-state')]);
    new MutationObserver(() => L.states.push([performance.now(), app.getAttribute('data-test-script-state')]))
      .observe(app, {attributes: true, attributeFilter: ['data-test-script-state']});
  };
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', watch); else watch();

  L.fingerprint = () => {
    const chart = document.querySelector('[data-testid=stVegaLiteChart]');
    if (!chart) return 'none';
    const canvas = chart.querySelector('canvas');
    let h = 0x811c9dc5;
    if (canvas) {
      if (!canvas.width || !canvas.height) return 'empty';
      const ctx = canvas.getContext('2d');
      const px = new Uint32Array(ctx.getImageData(0, 0, canvas.width, canvas.height).data.buffer);
      for (let i = 0; i < px.length; i++) { h = Math.imul(h ^ px[i], 0x01000193); }
      return 'c' + canvas.width + 'x' + canvas.height + ':' + (h >>> 0).toString(16);
    }
    const svg = chart.querySelector('svg');
    if (!svg) return 'none';
    const s = svg.innerHTML;
    for (let i = 0; i < s.length; i++) { h = Math.imul(h ^ s.charCodeAt(i), 0x01000193); }
    return 's' + s.length + ':' + (h >>> 0).toString(16);
  };
  L.caption = () => {
    const c = document.querySelector('[data-testid=stMain] [data-testid=stCaptionContainer]');
    return c ? c.textContent : '';
  };

  // Arm one tick: the next keydown starts a requestAnimationFrame loop that logs fingerprint changes.
  L.arm = () => {
    const t = {baseline: L.fingerprint(), caption0: L.caption(), key: null, frames: 0, changes: [],
               captionAt: null, done: false, sends0: L.sends.length, states0: L.states.length,
               recvs0: (window.__lat_recvs || []).length};
    L.ticks.push(t);
    const onKey = (e) => {
      document.removeEventListener('keydown', onKey, true);
      t.key = e.timeStamp;
      let last = t.baseline;
      const frame = (now) => {
        if (t.done) return;
        t.frames++;
        const f = L.fingerprint();
        if (f !== last) { t.changes.push([performance.now(), f]); last = f; }
        if (t.captionAt === null && L.caption() !== t.caption0) t.captionAt = performance.now();
        requestAnimationFrame(frame);
      };
      requestAnimationFrame(frame);
    };
    document.addEventListener('keydown', onKey, true);
    return t.baseline;
  };

  // Is the armed tick over? The rerun started after the key and ended, and the chart has been still for settle ms.
  L.settled = (settle) => {
    const t = L.ticks[L.ticks.length - 1];
    if (!t || t.key === null) return false;
    const now = performance.now();
    const st = L.states.slice(t.states0).filter(([ts]) => ts >= t.key);
    const ran = st.findIndex(([, s]) => s === 'running');
    if (ran < 0) return false;
    const end = st.slice(ran).find(([, s]) => s === 'notRunning');
    if (!end) return false;
    const lastChange = t.changes.length ? t.changes[t.changes.length - 1][0] : t.key;
    return now - Math.max(end[0], lastChange) >= settle;
  };

  // The armed tick's numbers, in ms from the key press.
  L.result = () => {
    const t = L.ticks[L.ticks.length - 1];
    t.done = true;
    const rel = (x) => (x === null || x === undefined) ? null : x - t.key;
    const send = L.sends.slice(t.sends0).find((ts) => ts >= t.key);
    const st = L.states.slice(t.states0).filter(([ts]) => ts >= t.key);
    const ran = st.findIndex(([, s]) => s === 'running');
    const end = ran < 0 ? undefined : st.slice(ran).find(([, s]) => s === 'notRunning');
    const final = t.changes.length ? t.changes[t.changes.length - 1][1] : t.baseline;
    return {
      send: rel(send), running: ran < 0 ? null : rel(st[ran][0]), rerun_end: end ? rel(end[0]) : null,
      first_change: t.changes.length ? rel(t.changes[0][0]) : null,
      redraw: final !== t.baseline ? rel(t.changes[t.changes.length - 1][0]) : null,
      n_changes: t.changes.length, frames: t.frames, caption: rel(t.captionAt),
      baseline: t.baseline, final: final, ...L.messages(t),
    };
  };

  // With --messages: the messages received after the key; the last one before the chart's final change.
  L.messages = (t) => {
    if (!window.__lat_recvs) return {};
    const got = window.__lat_recvs.slice(t.recvs0).filter(([ts]) => ts >= t.key);
    const done = t.changes.length ? t.changes[t.changes.length - 1][0] : null;
    const before = done === null ? [] : got.filter(([ts]) => ts <= done);
    return {recv_n: got.length, recv_bytes: got.reduce((a, [, n]) => a + n, 0),
            recv_first: got.length ? got[0][0] - t.key : null,
            recv_last_before_redraw: before.length ? before[before.length - 1][0] - t.key : null,
            recv_times: got.map(([ts, n]) => [Math.round(ts - t.key), n])};
  };
})();
"""


# ------------------------------------------------------------------------------------------ the server


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """`streamlit run app.py` on 127.0.0.1 and a free port, in its own process group; stopped on exit."""

    def __init__(self, root: Path = ROOT, env: dict | None = None) -> None:
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        TMP.mkdir(parents=True, exist_ok=True)
        self.log_path = TMP / f"streamlit-{self.port}.log"
        self.log = open(self.log_path, "wb")
        cmd = [
            sys.executable,
            "-m",
            "streamlit",
            "run",
            str(root / "app.py"),
            "--server.port",
            str(self.port),
            "--server.address",
            "127.0.0.1",
            "--server.headless",
            "true",
            "--browser.gatherUsageStats",
            "false",
        ]
        self.proc = subprocess.Popen(
            cmd, cwd=root, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True, env=env
        )
        atexit.register(self.stop)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                break
            try:
                if urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=2).read() == b"ok":
                    return
            except OSError:
                time.sleep(0.3)
        self.stop()
        raise SystemExit(f"streamlit did not start; its log: {self.log_path}\n{self.log_path.read_text()[-2000:]}")

    def stop(self) -> None:
        """Terminate the server (its process group: our own child and whatever it started), then kill if needed."""
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)
        if not self.log.closed:
            self.log.close()


def _on_signal(signum, _frame):
    raise SystemExit(128 + signum)  # unwinds through the finally blocks and atexit: the server is stopped


# ------------------------------------------------------------------------------------------ zips


def zip_folder(folder: Path, dest_dir: Path = TMP) -> Path:
    """`folder` zipped under dest_dir as <name>.zip, its files inside <name>/ (as `cd parent && zip -r`)."""
    dest_dir.mkdir(parents=True, exist_ok=True)
    out = dest_dir / f"{folder.name}.zip"
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for p in sorted(folder.rglob("*")):
            if p.is_file():
                z.write(p, f"{folder.name}/{p.relative_to(folder).as_posix()}")
    return out


def synthetic_zip(n_docs: int, dest_dir: Path = TMP) -> Path:
    """bench/synthetic.py's corpus (cached pickle) written as a BEIR folder under dest_dir, and zipped (reused if present)."""
    name = f"synthetic-{n_docs}"
    folder = dest_dir / name
    out = dest_dir / f"{name}.zip"
    if out.exists():
        return out
    sys.path.insert(0, str(ROOT / "bench"))
    sys.path.insert(0, str(ROOT))
    import synthetic  # noqa: PLC0415

    t = time.perf_counter()
    ds = synthetic.load(n_docs)
    (folder / "qrels").mkdir(parents=True, exist_ok=True)
    with open(folder / "corpus.jsonl", "w", encoding="utf-8") as f:
        for did, text in zip(ds.doc_ids, ds.doc_texts):
            f.write(json.dumps({"_id": did, "title": "", "text": text}) + "\n")
    with open(folder / "queries.jsonl", "w", encoding="utf-8") as f:
        for qid, text in zip(ds.query_ids, ds.query_texts):
            f.write(json.dumps({"_id": qid, "text": text}) + "\n")
    with open(folder / "qrels" / "test.tsv", "w", encoding="utf-8") as f:
        f.write("query-id\tcorpus-id\tscore\n")
        for q, did, g in zip(ds.qrels.query.tolist(), ds.qrels.doc_id.tolist(), ds.qrels.grade.tolist()):
            f.write(f"{ds.query_ids[q]}\t{did}\t{g}\n")
    zip_folder(folder, dest_dir)
    print(
        f"wrote {folder} and {out} ({out.stat().st_size / 1e6:.1f} MB) in {time.perf_counter() - t:.1f} s", flush=True
    )
    return out


# ------------------------------------------------------------------------------------------ the browser


def wait_idle(page, timeout_ms: int = 120_000, pause: float = 0.5) -> None:
    """The script is not running, and still not running after `pause` s (a rerun can follow a rerun)."""
    page.wait_for_selector(IDLE, timeout=timeout_ms)
    time.sleep(pause)
    page.wait_for_selector(IDLE, timeout=timeout_ms)


def wait_overview(page, timeout_ms: int = 300_000) -> None:
    """The Overview drawn: its title, the run over, the bar chart painted."""
    page.wait_for_selector("[data-testid=stMain] h1:has-text('Overview')", timeout=timeout_ms)
    wait_idle(page, timeout_ms)
    page.locator("[data-testid=stVegaLiteChart]").first.locator("canvas, svg").first.wait_for(timeout=timeout_ms)
    page.wait_for_function(
        "() => !['none', 'empty'].includes(window.__lat.fingerprint())", timeout=timeout_ms, polling=100
    )
    time.sleep(1.0)  # let vega finish its first paint


def full_page_shot(page, path: Path) -> None:
    """A screenshot of the whole page: Streamlit scrolls inside its main container, so grow the viewport to fit it."""
    height = page.evaluate("""() => {
        const main = document.querySelector('[data-testid=stMain]') || document.body;
        let h = main.scrollHeight;
        for (let e = main; e; e = e.parentElement) h = Math.max(h, e.scrollHeight);
        return h;
    }""")
    page.set_viewport_size(
        {"width": VIEWPORT["width"], "height": max(VIEWPORT["height"], min(int(height) + 40, 16_000))}
    )
    time.sleep(1.5)
    page.screenshot(path=str(path), full_page=True)
    page.set_viewport_size(VIEWPORT)
    time.sleep(1.0)


def upload(page, zip_path: Path, timeout_s: float, overview_at_message: bool = False, wait_before: float = 0.0) -> dict:
    """Upload a BEIR zip on the Data page; the seconds from set_input_files to the success message, and its stages.
    `overview_at_message`: click Overview as soon as the message shows, as a person who wants the numbers does, and
    time (from set_input_files) the Overview's first chart (on a large corpus: the systems that need no SVD) and
    its run's end (every system). `wait_before`: seconds on the Data page before the upload."""
    page.get_by_role("link", name="Data").click()
    page.wait_for_selector("[data-testid=stMain] h1:has-text('Data')", timeout=60_000)
    wait_idle(page)
    time.sleep(wait_before)
    box = page.locator("[data-testid=stFileUploader]").filter(has_text="A BEIR dataset as a .zip")
    inp = box.locator("input[type=file]")
    # log what the status and progress bar say while loading, with page timestamps
    page.evaluate("""() => {
        const L = window.__lat; L.stages = []; let last = '';
        const look = () => {
            const bits = [...document.querySelectorAll('[data-testid=stMain] [data-testid=stExpander] summary, '
                                                     + '[data-testid=stMain] [data-testid=stProgress]')]
                .map((e) => e.textContent.trim()).filter(Boolean);
            const s = bits.join(' | ');
            if (s && s !== last) { L.stages.push([performance.now(), s]); last = s; }
        };
        L.stageObserver = new MutationObserver(look);
        L.stageObserver.observe(document.body, {subtree: true, childList: true, characterData: true});
        L.stageT0 = performance.now();
    }""")
    t0 = time.monotonic()
    page_t0 = page.evaluate("() => performance.now()")
    inp.set_input_files(str(zip_path))
    t_set = time.monotonic() - t0
    ok = page.locator("[data-testid=stMain] [data-testid=stAlert]").filter(has_text="Every page now uses it")
    bad = page.locator("[data-testid=stMain] [data-testid=stAlert]").filter(
        has_text=re.compile("not loaded|could not be read|Still using")
    )
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if ok.count():
            break
        if bad.count():
            raise SystemExit(f"upload refused: {bad.first.inner_text()}")
        time.sleep(0.1)
    else:
        raise SystemExit(f"no success message within {timeout_s:.0f} s")
    t_msg = time.monotonic() - t0
    message = ok.first.inner_text().strip()
    overview = {}
    if overview_at_message:
        page.get_by_role("link", name="Overview").click()
        page.wait_for_selector("[data-testid=stMain] h1:has-text('Overview')", timeout=int(timeout_s * 1000))
        page.locator("[data-testid=stMain] [data-testid=stVegaLiteChart]").first.locator("canvas, svg").first.wait_for(
            timeout=int(timeout_s * 1000)
        )
        overview["overview_first_chart"] = time.monotonic() - t0
        overview["first_look"] = (
            "Meanwhile, the systems that need no fit" in page.locator("[data-testid=stMain]").inner_text()
        )
    wait_idle(page, int(timeout_s * 1000))
    t_idle = time.monotonic() - t0
    stages = page.evaluate("() => { window.__lat.stageObserver.disconnect(); return window.__lat.stages; }")
    stages = [((ts - page_t0) / 1000, s) for ts, s in stages]
    reported = dict(re.findall(r"(read|parsed|indexed|first evaluation) in ([\d.]+) s", message))
    first_eval = re.search(r"first evaluation ([\d.]+) s", message)
    if first_eval:
        reported["first evaluation"] = first_eval.group(1)
    return {
        "set_input_files": t_set,
        "to_message": t_msg,
        "to_idle": t_idle,
        "message": message,
        "reported": reported,
        "stages": stages,
        **overview,
    }


def tick(page, slider, key: str, timeout_s: float) -> dict:
    """One key press on a focused slider; the page's timings of the rerun and the redraw, in ms from the key."""
    slider.focus()
    before = slider.get_attribute("aria-valuetext")
    page.evaluate("() => window.__lat.arm()")
    page.keyboard.press(key)
    page.wait_for_function(f"() => window.__lat.settled({SETTLE_MS})", timeout=int(timeout_s * 1000), polling=50)
    r = page.evaluate("() => window.__lat.result()")
    r["key"], r["from"], r["to"] = key, before, slider.get_attribute("aria-valuetext")
    return r


def _ms(x) -> str:
    return "-" if x is None else f"{x:,.0f}"


def run(args) -> int:
    from playwright.sync_api import sync_playwright  # noqa: PLC0415

    zip_path = None
    if args.synthetic:
        zip_path = synthetic_zip(args.synthetic)
    elif args.zip:
        zip_path = Path(args.zip)
        if zip_path.is_dir():
            zip_path = zip_folder(zip_path)
            print(f"zipped the folder into {zip_path}", flush=True)
    shots = Path(args.shots)
    shots.mkdir(parents=True, exist_ok=True)

    server = Server(Path(args.root).resolve() if args.root else ROOT)
    print(f"streamlit on {server.url} (pid {server.proc.pid}, log {server.log_path})", flush=True)
    rows, ticks_out = [], []
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
            try:
                page = browser.new_page(viewport=VIEWPORT)
                if args.messages:
                    page.add_init_script(MESSAGES_JS)
                page.add_init_script(INIT_JS)
                page.goto(server.url)
                page.get_by_role("link", name="Overview").click()  # the landing page is the Tour
                wait_overview(page)
                dataset = "invented"
                if zip_path is not None:
                    print(
                        f"uploading {zip_path} ({zip_path.stat().st_size / 1e6:.1f} MB) through the Data page ...",
                        flush=True,
                    )
                    up = upload(page, zip_path, args.upload_timeout, args.overview_at_message, args.wait_before_upload)
                    print(f"  set_input_files returned after {up['set_input_files']:.2f} s")
                    if args.overview_at_message:
                        print(
                            f"  set_input_files -> success message: {up['to_message']:.2f} s, Overview clicked then "
                            f"-> its first chart: {up['overview_first_chart']:.2f} s ("
                            f"{'the systems that need no SVD' if up['first_look'] else 'every system'}) -> its run "
                            f"over: {up['to_idle']:.2f} s"
                        )
                    else:
                        print(
                            f"  set_input_files -> success message: {up['to_message']:.1f} s "
                            f"(-> the Data page's rerun over: {up['to_idle']:.1f} s)"
                        )
                    print(f"  the message: {up['message']}")
                    print("  stages it reports (s): " + ", ".join(f"{k} {v}" for k, v in up["reported"].items()))
                    print("  what the status and progress bar said (s after set_input_files):")
                    for ts, s in up["stages"]:
                        print(f"    {ts:7.2f}  {s[:160]}")
                    if args.overview_at_message:
                        wait_overview(page, int(args.upload_timeout * 1000))
                    else:
                        full_page_shot(page, shots / f"data-{zip_path.stem}.png")
                        t = time.monotonic()
                        page.get_by_role("link", name="Overview").click()
                        wait_overview(page, int(args.upload_timeout * 1000))
                        print(
                            f"  click Overview -> overview drawn: {time.monotonic() - t - 1.0 - 0.5:.1f} s", flush=True
                        )
                    dataset = zip_path.stem
                exc = page.locator("[data-testid=stException]").count()
                caption = page.locator("[data-testid=stMain] [data-testid=stCaptionContainer]").first.inner_text()
                print(f"Overview: {caption}", flush=True)
                if exc:
                    print(f"WARNING: {exc} exception(s) shown on the Overview", flush=True)
                shot = shots / f"overview-{dataset}.png"
                full_page_shot(page, shot)
                print(f"screenshot {shot}", flush=True)

                for pattern, name in [(pt, nm) for pt in args.pattern.split(",") for nm in args.sliders.split(",")]:
                    label = SLIDERS[name]
                    slider = (
                        page.locator("[data-testid=stSidebar] [data-testid=stSlider]")
                        .filter(has_text=label)
                        .locator("input")
                    )
                    keys = {"alternate": ["ArrowRight", "ArrowLeft"], "down": ["ArrowLeft"]}.get(
                        pattern, ["ArrowRight"]
                    )
                    res = []
                    for i in range(args.n):
                        time.sleep(args.pause)
                        r = tick(page, slider, keys[i % len(keys)], args.tick_timeout)
                        res.append(r)
                        ticks_out.append({"dataset": dataset, "pattern": pattern, "slider": name, **r})
                        print(
                            f"  {pattern:9s} {name:5s} {r['key']:10s} {r['from']:>5s} -> {r['to']:>5s}: request sent {_ms(r['send'])} ms, "
                            f"rerun {_ms(r['running'])}..{_ms(r['rerun_end'])} ms, caption {_ms(r['caption'])} ms, "
                            f"chart {'unchanged' if r['redraw'] is None else _ms(r['redraw']) + ' ms'} "
                            f"({r['n_changes']} changes, {r['frames']} frames)"
                            + (
                                f"; {r['recv_n']} messages ({r['recv_bytes']:,} B) from {_ms(r['recv_first'])} ms, the last "
                                f"before the redraw at {_ms(r['recv_last_before_redraw'])} ms"
                                if args.messages
                                else ""
                            ),
                            flush=True,
                        )
                    redraws = [r["redraw"] for r in res if r["redraw"] is not None]
                    ends = [r["rerun_end"] for r in res if r["rerun_end"] is not None]
                    sends = [r["send"] for r in res if r["send"] is not None]
                    caps = [r["caption"] for r in res if r["caption"] is not None]
                    med = lambda xs: statistics.median(xs) if xs else None  # noqa: E731
                    rows.append(
                        (
                            dataset,
                            pattern,
                            label,
                            len(res),
                            len(redraws),
                            med(redraws),
                            max(redraws) if redraws else None,
                            med(ends),
                            med(sends),
                            med(caps),
                        )
                    )
                if page.locator("[data-testid=stException]").count():
                    print("WARNING: an exception is shown after the ticks", flush=True)
                full_page_shot(page, shots / f"overview-{dataset}-after.png")
            finally:
                browser.close()
    finally:
        server.stop()

    print()
    print(
        "Key press -> Overview bar chart redrawn (ms from the key press, page clock; browser and server share the machine)"
    )
    head = (
        "dataset",
        "ticks",
        "slider",
        "presses",
        "chart changed",
        "redraw median",
        "redraw max",
        "rerun end median",
        "request sent median",
        "caption median",
    )
    print("| " + " | ".join(head) + " |")
    print("|" + "|".join("---" for _ in head) + "|")
    for ds, pattern, label, n, nr, med, mx, end, snd, cap in rows:
        print(
            f"| {ds} | {pattern} | {label} | {n} | {nr} | {_ms(med)} | {_ms(mx)} | {_ms(end)} | {_ms(snd)} | {_ms(cap)} |"
        )
    if args.messages:
        print()
        print(
            "With --messages: the redraw split at the last WebSocket message received before it (medians, ms from the key)"
        )
        print(
            "| dataset | ticks | slider | last message before the redraw | redraw - that message (the browser's part) | messages | bytes |"
        )
        print("|---|---|---|---|---|---|---|")
        for ds, pattern, label, *_ in rows:
            mine = [t for t in ticks_out if (t["dataset"], t["pattern"], SLIDERS[t["slider"]]) == (ds, pattern, label)]
            drawn = [t for t in mine if t["redraw"] is not None and t.get("recv_last_before_redraw") is not None]
            last = [t["recv_last_before_redraw"] for t in drawn]
            part = [t["redraw"] - t["recv_last_before_redraw"] for t in drawn]
            med = lambda xs: statistics.median(xs) if xs else None  # noqa: E731
            print(
                f"| {ds} | {pattern} | {label} | {_ms(med(last))} | {_ms(med(part))} | {_ms(med([t['recv_n'] for t in mine]))} "
                f"| {_ms(med([t['recv_bytes'] for t in mine]))} |"
            )
    if args.json:
        Path(args.json).write_text(json.dumps({"rows": rows, "ticks": ticks_out}, indent=1))
    return 0


def first_visit(root: Path, timeout_s: float = 600) -> dict:
    """A fresh clone's first visit: a server started from `root` with an empty numba cache (a new NUMBA_CACHE_DIR),
    one page load: seconds until the page shows its first text (its landing page's title), and until the
    Overview's charts are drawn (one click on where the Tour is the landing page) and the script is idle. The screenshot goes to TMP."""
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix="numba-cache-") as cache:
        server = Server(root, {**os.environ, "NUMBA_CACHE_DIR": cache, "PYTHONPATH": str(root)})
        try:
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
                page = browser.new_page(viewport={"width": 1400, "height": 900})
                t = time.perf_counter()
                page.goto(server.url)
                page.wait_for_selector("h1", timeout=timeout_s * 1000)
                text_s = time.perf_counter() - t  # the landing page's title (the Tour's, or an older tree's Overview)
                if not page.locator("[data-testid=stMain] h1:has-text('Overview')").count():
                    page.get_by_role(
                        "link", name="Overview"
                    ).click()  # the Tour lands first: the Overview is one click on
                page.wait_for_selector("[data-testid=stVegaLiteChart]", timeout=timeout_s * 1000)
                page.wait_for_selector(IDLE, timeout=timeout_s * 1000)
                chart_s = time.perf_counter() - t
                page.screenshot(path=str(TMP / f"first-visit-{root.name}.png"), full_page=True)
                browser.close()
        finally:
            server.stop()
    return {"root": str(root), "first_text_s": round(text_s, 2), "charts_s": round(chart_s, 2)}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument(
        "--first-visit",
        nargs="*",
        metavar="TREE",
        help="only the first visit of a fresh clone (empty numba cache), for this repository and any other "
        "trees given (e.g. bench/out/tree-7a04e34 from speed.py --round2), alternated --n times",
    )
    src = p.add_mutually_exclusive_group()
    src.add_argument(
        "--zip", help="a BEIR .zip (or a BEIR folder, zipped under /tmp first) to upload through the Data page"
    )
    src.add_argument(
        "--synthetic",
        type=int,
        metavar="N_DOCS",
        help="write bench/synthetic.py's corpus of N_DOCS documents as a BEIR folder + zip under /tmp and upload it",
    )
    p.add_argument("--n", type=int, default=7, help="key presses per slider (default 7)")
    p.add_argument("--sliders", default="k1,alpha,rrf", help="comma-separated, from: " + ", ".join(SLIDERS))
    p.add_argument(
        "--pattern",
        default="alternate",
        help="comma-separated, run in order: alternate (ArrowRight/ArrowLeft: the values revisit two settings, "
        "whose results the app has cached after the first two presses), walk (ArrowRight every time: "
        "a new value each press) or down (ArrowLeft every time: d down from 6 stays within its SVD "
        "block); default alternate",
    )
    p.add_argument(
        "--root",
        help="run the app of another tree (e.g. bench/out/tree-COMMIT, written by bench/speed.py: "
        "the code before a change; warm its numba cache first: cd TREE && PYTHONPATH=. python -m retrieval warmup)",
    )
    p.add_argument(
        "--pause",
        type=float,
        default=0.0,
        help="seconds between the end of a tick and the next press "
        "(a person's pause: what the app computes ahead meanwhile)",
    )
    p.add_argument("--shots", default="/tmp/shots", help="folder for the full-page screenshots (default /tmp/shots)")
    p.add_argument(
        "--overview-at-message",
        action="store_true",
        help="with --zip/--synthetic: click Overview as soon as the upload's success message shows, and time "
        "the Overview's first chart and its run's end from set_input_files",
    )
    p.add_argument(
        "--wait-before-upload",
        type=float,
        default=0.0,
        help="seconds to wait on the Data page before uploading (the server's warm-up over, as on a server "
        "that has been up a while)",
    )
    p.add_argument(
        "--upload-timeout", type=float, default=900, help="seconds allowed for the upload and the first Overview"
    )
    p.add_argument("--tick-timeout", type=float, default=120, help="seconds allowed for one tick")
    p.add_argument("--json", help="also write every tick's timings to this file")
    p.add_argument(
        "--messages",
        action="store_true",
        help="also log every WebSocket message the browser receives (time, size): per tick, when the last one "
        "before the redraw came, so the redraw splits into the server's part and the browser's",
    )
    args = p.parse_args(argv)
    if not Path(CHROMIUM).exists():
        raise SystemExit(f"{CHROMIUM} is missing (apt-get install -y chromium)")
    for s in args.sliders.split(","):
        if s not in SLIDERS:
            raise SystemExit(f"unknown slider {s!r}: choose from {', '.join(SLIDERS)}")
    for pt in args.pattern.split(","):
        if pt not in ("alternate", "walk", "down"):
            raise SystemExit(f"unknown pattern {pt!r}: alternate, walk or down")
    signal.signal(signal.SIGTERM, _on_signal)
    signal.signal(signal.SIGINT, _on_signal)
    if args.first_visit is not None:
        trees = [Path(t).resolve() for t in args.first_visit] + [ROOT]
        for _ in range(args.n):
            for tree in trees:
                print(json.dumps(first_visit(tree, args.upload_timeout)), flush=True)
        return 0
    return run(args)


if __name__ == "__main__":
    raise SystemExit(main())
