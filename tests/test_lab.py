"""`retrieval-lab`: -h/--help prints the lab's own short help (what it starts, where to point the browser, where
the data lives, the environment settings), never Streamlit's; every other argument reaches `streamlit run`."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

import pytest
from streamlit.web import cli as streamlit_cli

from conftest import ROOT
from retrieval import lab
from retrieval.corpus import dataset
from retrieval.engine import engine
from retrieval.retrievers import dense
from retrieval.store import workspace
from ui.workspace import USER_HEADER_ENV


@pytest.fixture
def streamlit_run(monkeypatch):
    """What `streamlit run` was given (the server never starts)."""
    given = []
    monkeypatch.setattr(streamlit_cli, "main", lambda args, prog_name: given.append((args, prog_name)))
    return given


@pytest.mark.parametrize("args", [["--help"], ["-h"], ["--server.port", "8600", "--help"]])
def test_help_is_the_lab_s_own_and_starts_nothing(capsys, streamlit_run, args):
    lab.main(args)
    out = capsys.readouterr().out
    assert streamlit_run == []  # Streamlit's own help (thousands of lines) is not asked for
    assert out == lab.help_text() and out.startswith("usage: retrieval-lab")
    assert 10 < len(out.splitlines()) < 50
    assert "http://127.0.0.1:8501" in out and "headless" in out and "127.0.0.1 only" in out
    assert str(ROOT / "app.py") in out


def test_help_names_every_setting_where_the_data_lives_now_and_the_defaults(monkeypatch, tmp_path):
    monkeypatch.setenv(workspace.HOME_ENV, str(tmp_path / "home"))
    monkeypatch.delenv(workspace.URL_ENV, raising=False)
    monkeypatch.setenv(dense.CACHE_ENV, str(tmp_path / "vectors"))
    text = lab.help_text()
    for name in (
        workspace.HOME_ENV,
        workspace.URL_ENV,
        dense.CACHE_ENV,
        workspace.MAX_BYTES_ENV,
        dataset.MAX_BYTES_ENV,
        engine.MAX_CHARS_ENV,
        USER_HEADER_ENV,
    ):
        assert f"  {name}  " in text, name
    assert f"workspace      sqlite:///{tmp_path / 'home' / workspace.FILE_NAME}" in text
    assert f"dense vectors  {tmp_path / 'vectors'}" in text
    words = " ".join(text.split())
    assert (
        workspace.DEFAULT_HOME in words
        and "default 4 GiB" in words
        and "default 256 MiB a file, 512 MiB in all" in words
    )
    assert f"default {engine.APP_MAX_CHARS:,} characters" in words
    assert all(len(line) <= 80 for line in text.splitlines() if str(tmp_path) not in line and str(ROOT) not in line)


def test_help_hides_a_database_password_and_escapes_control_characters(monkeypatch):
    monkeypatch.setenv(workspace.URL_ENV, "postgresql+psycopg://ann:s3cret@db.example/lab")
    text = lab.help_text()
    assert "s3cret" not in text and "postgresql+psycopg://ann:***@db.example/lab" in text
    monkeypatch.setenv(workspace.URL_ENV, "")
    monkeypatch.setenv(workspace.HOME_ENV, "/tmp/x\x1b[31mred")
    monkeypatch.setenv(dense.CACHE_ENV, "/tmp/y\x1b[31mred")
    text = lab.help_text()
    assert "\x1b" not in text and "/tmp/x%1B%5B31mred/" in text and "/tmp/y\\x1b[31mred" in text


def test_the_address_follows_the_config():
    assert lab.address({}) == "http://localhost:8501"
    assert lab.address({"address": "127.0.0.1", "port": 8600}) == "http://127.0.0.1:8600"
    assert lab.address({"address": "0.0.0.0"}) == "http://localhost:8501"  # every interface: Streamlit's Local URL
    assert lab.address({"address": "::1", "port": 8600}) == "http://[::1]:8600"
    assert lab.address({"address": "lab.example"}) == "http://lab.example:8501"
    assert lab.server_settings(ROOT / "app.py")["headless"] is True


@pytest.mark.parametrize("args", [[], ["--server.port", "8600"], ["--", "--help"]])
def test_other_arguments_still_reach_streamlit_run(streamlit_run, args):
    lab.main(args)
    assert streamlit_run == [(["run", str(ROOT / "app.py"), *args], "retrieval-lab")]


@pytest.mark.slow
def test_the_console_script_s_help_from_its_own_arguments():
    out = subprocess.run(
        [sys.executable, "-c", "from retrieval.lab import main; main()", "--help"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert out.returncode == 0 and out.stderr == "", out.stderr
    assert out.stdout.startswith("usage: retrieval-lab") and "http://127.0.0.1:8501" in out.stdout


@pytest.mark.slow
def test_the_app_prints_the_address_the_readme_and_the_help_give(tmp_path):
    """`streamlit run app.py` with the app's own config.toml (only the port moved, to a free one) prints, as it
    starts, the very address `lab.address` gives: the one the README's first lines and `--help` name."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = lab.server_settings(ROOT / "app.py")
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"), "--server.port", str(port)],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT), workspace.HOME_ENV: str(tmp_path / "home")},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        lines = []
        for line in proc.stdout:
            lines.append(line)
            if "URL:" in line:
                break
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    printed = [line.split("URL:", 1)[1].strip() for line in lines if "URL:" in line]
    assert printed == [lab.address({**server, "port": port})], "".join(lines)
    assert lab.address(server) == "http://127.0.0.1:8501"
