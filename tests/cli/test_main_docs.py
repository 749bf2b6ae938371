"""`docs ID` prints a finding's page from the installed package; no page lives only online."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conda_torchcheck.cli.main import main
from conda_torchcheck.findings import DOCS_DIR, docs_page

ROOT = Path(__file__).resolve().parents[2]


def test_prints_the_page(capsys):
    assert main(["docs", "TC301"]) == 0
    out = capsys.readouterr().out
    assert out == (DOCS_DIR / "TC301.md").read_text(encoding="utf-8")
    assert out.startswith("# TC301")


def test_lower_case_id_and_path(capsys):
    assert main(["docs", "tc104", "--path"]) == 0
    assert Path(capsys.readouterr().out.strip()) == DOCS_DIR / "TC104.md"


def test_index_without_an_id(capsys):
    assert main(["docs"]) == 0
    assert capsys.readouterr().out.startswith("# Finding ids")


def test_json(capsys):
    assert main(["docs", "TC104", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["id"] == "TC104" and Path(doc["path"]).is_file() and doc["text"].startswith("# TC104")


@pytest.mark.parametrize("bad", ["TC999", "../README", "TC30"])
def test_unknown_id_is_an_input_error(capsys, bad):
    assert main(["docs", bad]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"conda-torchcheck: error: no documentation page for '{bad}'") and "TC301" in err


def test_docs_page_rejects_paths():
    assert docs_page("../../README") is None and docs_page("TC301") == DOCS_DIR / "TC301.md"


def test_list_checks_points_at_the_pages(capsys):
    assert main(["list-checks"]) == 0
    assert "conda-torchcheck docs <ID>" in capsys.readouterr().out
    assert main(["list-checks", "--json"]) == 0
    ids = [i for c in json.loads(capsys.readouterr().out)["checks"] for i in c["ids"]]
    assert ids and all(Path(i["docs"]["path"]).is_file() for i in ids)


# URLs the project could have made up: a repository of its own, a docs site. Only pages that exist are linked.
INVENTED = re.compile(
    r"https?://(?:github\.com/conda-incubator/conda-torchcheck|[\w.-]*torchcheck[\w.-]*\.(?:io|org|dev))"
)


def test_no_invented_urls_anywhere():
    files = [ROOT / "README.md", *ROOT.glob("docs/*.md"), *ROOT.glob("conda_torchcheck/**/*.md")]
    files += [*ROOT.glob("conda_torchcheck/**/*.py"), *ROOT.glob("conda_torchcheck/**/*.toml"), ROOT / "pyproject.toml"]
    files += [*ROOT.glob("recipe/*"), *ROOT.glob("*.yaml")]
    hits = [f"{p.relative_to(ROOT)}: {m.group(0)}" for p in files for m in INVENTED.finditer(p.read_text("utf-8"))]
    assert not hits, hits
