"""The command line says what it takes and what it leaves out: --fusion-depth takes only the depths its help names
(and the text header shows the one used), `tune --help` and its error list the same --params forms, and `evaluate`
says how to add the dense retriever where the app shows it at once."""

from __future__ import annotations

import re

import pytest
from test_cli import beir, run_main

from retrieval.analyses import tuning
from retrieval.core.params import SPECS

DEPTHS = SPECS["fusion_depth"].choices


@pytest.fixture(scope="module")
def mini(tmp_path_factory):
    return beir(tmp_path_factory.mktemp("options") / "mini")


@pytest.mark.parametrize("command", ["evaluate", "compare", "tune"])
@pytest.mark.parametrize("depth", ["50", "0", "10000", "1e3", "ten"])
def test_a_fusion_depth_other_than_the_named_ones_is_one_line_naming_the_flag(capsys, command, depth):
    code, out, err = run_main(capsys, command, "--fusion-depth", depth)
    lines = err.strip().splitlines()
    assert code == 2 and out == "" and len(lines) == 1 and "Traceback" not in err, err
    assert "--fusion-depth" in lines[0] and depth in lines[0], lines


def test_the_error_lists_the_depths_the_help_names(capsys):
    code, _, err = run_main(capsys, "evaluate", "--fusion-depth", "50")
    assert code == 2 and "choose from " + ", ".join(map(str, DEPTHS)) in err, err
    with pytest.raises(SystemExit):
        run_main(capsys, "evaluate", "--help")
    help_text = " ".join(capsys.readouterr().out.split())
    assert "one of " + ", ".join(map(str, DEPTHS)) in help_text


@pytest.mark.parametrize("depth", DEPTHS)
def test_each_named_depth_is_taken_and_the_text_header_shows_it(capsys, mini, depth):
    code, out, err = run_main(capsys, "evaluate", "--data", str(mini), "--dims", "2", "--fusion-depth", str(depth))
    assert code == 0, err
    assert out.splitlines()[2] == f"k1=1.2 b=0.75 dims=2 rrf_k=60.0 alpha=0.5 fusion_depth={depth}"
    assert (
        out.splitlines()[1] == "text analysis: no stemmer, the article's 45 stop words; each question word counted once"
    )


def _help_forms(text: str) -> list[str]:
    """The --params forms tune's help lists (`FORM (SYSTEM) | FORM (SYSTEM) ...`)."""
    said = " ".join(text.split())
    listing = re.search(r"--params PARAMS what to sweep \(the system it scores\): (.*?) \(default k1,b\)", said)
    assert listing, said
    return listing.group(1).split(" | ")


def test_tune_help_and_its_error_list_the_same_params_forms(capsys):
    with pytest.raises(SystemExit) as e:
        run_main(capsys, "tune", "--help")
    assert e.value.code == 0
    in_help = _help_forms(capsys.readouterr().out)
    code, _, err = run_main(capsys, "tune", "--params", "k3")
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    in_error = err.strip().split("valid are ", 1)[1].split(" | ")
    assert in_help == in_error
    assert [f.split(" ")[0] for f in in_help] == list(tuning.PARAMS)  # every form the sweep takes, joint ones too
    assert "alpha,dims (weighted)" in in_help and "k1,b (BM25)" in in_help


def test_every_form_the_help_lists_is_taken(capsys):
    with pytest.raises(SystemExit):
        run_main(capsys, "tune", "--help")
    for form in _help_forms(capsys.readouterr().out):
        key = form.split(" ")[0]
        assert tuning._params_key(key) == key
        assert f"({tuning.SYSTEM_OF[key]})" in form


NOTE = re.compile(
    r"^note: dense, which the app shows on invented, is left out: add --embeddings e5-small", re.MULTILINE
)


def test_evaluate_on_the_invented_corpus_says_how_to_include_dense(capsys):
    code, out, err = run_main(capsys, "evaluate")
    assert code == 0, err
    lines = out.splitlines()
    assert NOTE.search(out), out
    note = next(i for i, line in enumerate(lines) if line.startswith("note: dense"))
    assert lines[note - 1].startswith("RRF ")  # right below the systems' table, where dense's row would be
    assert not re.search(r"^dense\s", out, re.MULTILINE)


def test_with_embeddings_dense_is_measured_and_the_note_is_gone(capsys):
    code, out, err = run_main(capsys, "evaluate", "--embeddings", "e5-small")
    assert code == 0, err
    assert re.search(r"^dense\s+(\d\.\d{6}\s+){3}\d\.\d{6}$", out, re.MULTILINE) and not NOTE.search(out), out


def test_no_note_where_the_app_would_need_to_encode_first(capsys, mini):
    code, out, err = run_main(capsys, "evaluate", "--data", str(mini), "--dims", "2")
    assert code == 0, err
    assert "note: dense" not in out


def test_the_json_report_stays_as_it_was(capsys):
    import json

    code, out, err = run_main(capsys, "evaluate", "--json")
    assert code == 0, err
    report = json.loads(out)
    assert "dense" not in report["systems"] and "e5-small" not in out
