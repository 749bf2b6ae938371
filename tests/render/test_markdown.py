"""Markdown for bug reports, parsed back: verdict line, environment table, balanced <details>, closed fences."""

from __future__ import annotations

import re

import pytest

from conda_torchcheck.explain import explain
from conda_torchcheck.findings import Finding, Fix, Severity
from conda_torchcheck.inventory import load_environment
from conda_torchcheck.inventory.torch import find_torch
from conda_torchcheck.messages import msg
from conda_torchcheck.render.markdown import md_cell, md_code, md_text, render_explanation_markdown, render_markdown
from conda_torchcheck.report import Report
from tests.loader import windows_layouts as wl  # at import time: realdata's cache path must see the real HOME

# --- a small parser for what GitHub would see ----------------------------------------------------------------


def split_row(line: str) -> list[str]:
    cells = re.split(r"(?<!\\)\|", line.strip())
    assert cells[0] == "" and cells[-1] == "", f"row must start and end with a pipe: {line}"
    return [c.strip() for c in cells[1:-1]]


def parse_table(lines: list[str]) -> list[list[str]]:
    start = next(i for i, line in enumerate(lines) if line.startswith("|"))
    rows = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        rows.append(split_row(line))
    assert re.fullmatch(r"(-{3,}\|?)+", "|".join(rows[1]).replace(" ", "")), "second row is the delimiter row"
    assert all(len(r) == len(rows[0]) for r in rows), "every row has as many cells as the header"
    return [rows[0], *rows[2:]]


def check_fences_and_details(text: str) -> None:
    open_fence: str | None = None
    depth = 0
    lines = text.splitlines()
    for i, line in enumerate(lines):
        stripped = line.strip()
        m = re.match(r"^(`{3,})(.*)$", stripped)
        if open_fence is not None:
            if m and len(m.group(1)) >= len(open_fence) and not m.group(2).strip():
                open_fence = None
            continue
        if m:
            open_fence = m.group(1)
            continue
        if stripped.startswith("<details"):
            depth += 1
            assert lines[i + 1].startswith("<summary>") and lines[i + 1].endswith("</summary>")
            assert lines[i + 2] == "", "a blank line after <summary> so GitHub renders the Markdown inside"
        elif stripped == "</details>":
            assert lines[i - 1] == "", "a blank line before </details>"
            depth -= 1
            assert depth >= 0, "</details> without <details>"
    assert open_fence is None, "a code fence is left open"
    assert depth == 0, "unbalanced <details>"


def unescape_cell(cell: str) -> str:
    cell = cell.replace(r"\|", "|")
    m = re.fullmatch(r"(`+) ?(.*?) ?\1", cell)
    return m.group(2) if m else cell


# --- fixtures -------------------------------------------------------------------------------------------------


def report_for(builder, findings, **kwargs) -> Report:
    env, host = load_environment(builder.prefix, use_live_host=False)
    return Report(env=env, host=host, torch=find_torch(env), findings=findings, **kwargs)


def nasty_finding() -> Finding:
    """Text with everything Markdown and HTML could misread: pipes, backticks, tags, stars, fences."""
    return Finding(
        "TC701",
        Severity.ERROR,
        msg("TC701.title", error="a | b `c` <script> cudnn*, cublas*"),
        msg(
            "TC701.explanation",
            python="C:\\env\\python.exe",
            error_type="OSError",
            recognised="<env>\\Library\\bin",
            conclusion="~orch and ~orch",
        ),
        evidence={"output": ["```", "line | with pipe"], "nested": {"searched": ["C:\\a", "C:\\b"]}},
        fixes=[Fix("conda", msg("TC701.fix"), commands=('conda install -p "C:\\env" vc14_runtime',), needs_admin=True)],
    )


def test_report_structure(make_env):
    b = make_env(os="windows", layout="conda")
    b.pip_torch("2.4.0+cu121", cuda="12.1")
    b.conda_record("vc14_runtime", "14.38.33135", "h0000000_20")
    info = Finding(
        "TC703",
        Severity.INFO,
        msg("TC703.title", version="2.4.0", cuda_summary="x"),
        msg("TC703.explanation", python="p", location="l"),
    )
    text = render_markdown(report_for(b, [nasty_finding(), info]), lang="en")
    lines = text.splitlines()
    # one-line verdict first
    assert lines[0].startswith("❌ **conda-torchcheck:**") and "1 error(s)" in lines[0]
    assert lines[1] == ""
    table = parse_table(lines)
    assert table[0] == ["Item", "Value"]
    rows = {r[0]: r[1] for r in table[1:]}
    assert list(rows) == [
        "Environment",
        "OS",
        "Python",
        "torch",
        "CUDA",
        "VC++ runtime (the copy that wins)",
        "Import test",
        "Checked with",
    ]
    assert unescape_cell(rows["Environment"].split(" (")[0]) == str(b.prefix)
    assert "Windows (win-64)" in rows["OS"]
    assert "3.11.9 (x86\\_64)" in rows["Python"] or "3.11.9 (x86_64)" in rows["Python"]
    assert "2.4.0+cu121" in rows["torch"] and "pip" in rows["torch"]
    assert "12.1" in rows["CUDA"] and "not determined" in rows["CUDA"]  # nobody measured the driver
    assert "vc14_runtime 14.38.33135" in rows["VC++ runtime (the copy that wins)"]
    assert rows["Import test"].startswith("not run")
    check_fences_and_details(text)
    assert text.count("<details>") == 3  # two findings + the package list
    # the summary line is HTML: escaped, with `code` turned into <code>
    summary = next(line for line in lines if line.startswith("<summary>❌"))
    assert "&lt;script&gt;" in summary and "<script>" not in summary and "<code>c</code>" in summary
    # free text: tags and stars escaped, code spans kept
    assert "&lt;env&gt;\\Library\\bin" in text
    assert "\\~orch" in text
    # evidence holding ``` gets a longer fence; commands are a shell block; admin rights flagged
    assert "````text" in text
    assert '```shell\nconda install -p "C:\\env" vc14_runtime\n```' in text
    assert "needs administrator rights" in text
    assert "https://github.com/" not in text and "`conda-torchcheck docs TC701`" in text  # no page lives online


def test_report_without_findings_and_linux_rows(make_env):
    b = make_env(os="linux", layout="conda")
    b.conda_pytorch("2.5.1", "cpu_mkl_py311_h0000000_100")
    b.conda_record("libstdcxx", "14.2.0", "h0000000_1")
    text = render_markdown(report_for(b, []), lang="en")
    lines = text.splitlines()
    assert lines[0].startswith("✅")
    rows = {r[0]: r[1] for r in parse_table(lines)[1:]}
    assert "libstdcxx 14.2.0" in rows["libstdc++ (the copy that wins)"]
    assert "VC++ runtime (the copy that wins)" not in rows
    assert "none (not a CUDA build)" in rows["CUDA"]
    assert "No findings." in text
    check_fences_and_details(text)


def test_report_reads_facts_from_the_loader_helpers_when_present(make_env):
    b = make_env(os="windows", layout="venv")
    b.pip_torch("2.9.0+cu128", cuda="12.8")
    report = report_for(b, [])
    report.facts = {"vc_runtime": "msvcp140.dll 14.36.32532 from C:\\Windows\\System32", "cuda_driver": "576.02"}
    rows = {r[0]: r[1] for r in parse_table(render_markdown(report).splitlines())[1:]}
    assert "14.36.32532" in rows["VC++ runtime (the copy that wins)"]
    assert "driver: 576.02" in rows["CUDA"]


def test_report_with_import_test(make_env):
    b = make_env(os="linux", layout="venv")
    b.pip_torch("2.5.1")
    result = {
        "outcome": "failed",
        "ran_at": "2026-09-30T10:00:00+00:00",
        "error_type": "ImportError",
        "report": {"traceback": "Traceback (most recent call last):\n  ...\nImportError: libcudnn.so.9: x"},
    }
    text = render_markdown(report_for(b, [], import_test=result), lang="en")
    rows = {r[0]: r[1] for r in parse_table(text.splitlines())[1:]}
    assert rows["Import test"] == "run at 2026-09-30T10:00:00+00:00: import failed (ImportError)"
    assert "<summary>Import test output</summary>" in text
    check_fences_and_details(text)


def test_report_in_chinese(make_env):
    b = make_env(os="windows", layout="conda")
    b.pip_torch("2.5.1+cpu")
    text = render_markdown(report_for(b, [nasty_finding()]), lang="zh_CN")
    table = parse_table(text.splitlines())
    assert table[0] == ["项目", "值"]
    assert "操作系统" in [r[0] for r in table[1:]]
    assert "错误" in text.splitlines()[0]
    check_fences_and_details(text)


def test_explanation_markdown_without_env():
    text = render_explanation_markdown(
        explain(
            'OSError: [WinError 126] 找不到指定的模块。 Error loading "C:\\e\\Lib\\site-packages\\torch\\lib\\fbgemm.dll" '  # noqa: E501
            "or one of its dependencies.\nRuntimeError: operator torchvision::nms does not exist"
        ),
        lang="en",
    )
    lines = text.splitlines()
    assert lines[0].startswith("**conda-torchcheck explain:**") and "2 error(s)" in lines[0]
    assert "| Item |" not in text  # no env, no table
    assert [line for line in lines if line.startswith("### ")] == [
        "### 1. WinError 126: Windows could not load fbgemm.dll or one of its dependencies",
        "### 2. torchvision's compiled operators are missing (torchvision::nms)",
    ]
    check_fences_and_details(text)
    assert "<summary>1. A torch DLL needs libomp140.x86_64.dll" in text


def test_explanation_markdown_with_env(make_env):
    from conda_torchcheck.checks.context import CheckContext

    b = make_env(os="linux", layout="conda")
    b.conda_pytorch("2.2.2", "py3.11_cuda12.1_cudnn8.9.2_0", channel="pytorch", depends=("mkl >=2018",))
    b.conda_record("mkl", "2024.1.0", "h0000000_691", channel="defaults")
    env, host = load_environment(b.prefix, use_live_host=False)
    expl = explain(
        f"{b.site_packages}/torch/lib/libtorch_cpu.so: undefined symbol: iJIT_NotifyEvent", CheckContext(env, host)
    )
    text = render_explanation_markdown(expl, lang="zh_CN")
    assert text.splitlines()[0].startswith("**conda-torchcheck explain:** ❌ 找到根本原因")
    rows = {r[0]: r[1] for r in parse_table(text.splitlines())[1:]}
    assert "2.2.2" in rows["torch"]
    assert "<details open>" in text  # the confirmed cause is unfolded
    check_fences_and_details(text)


@pytest.mark.parametrize(
    ("raw", "cell"),
    [
        ("a|b", r"a\|b"),
        ("x `y` z", r"x \`y\` z"),
        ("<prefix>", "&lt;prefix&gt;"),
        ("two\nlines", "two lines"),
        ("C:\\Users\\me", "C:\\Users\\me"),
    ],
)
def test_cell_escaping(raw, cell):
    assert md_cell(raw) == cell


def test_code_spans_survive_backticks():
    assert md_code("a`b") == "``a`b``"
    assert md_code("`x`") == "`` `x` ``"
    assert md_text("run `pip list | grep torch*` for torch* files") == "run `pip list | grep torch*` for torch\\* files"


@pytest.mark.realdata
def test_vc_runtime_row_comes_from_the_windows_loader_model(tmp_path, capsys):
    """A real torch wheel and a real VC++ runtime: the table shows the msvcp140.dll that wins, and its version."""
    from conda_torchcheck.cli.main import main

    builder = wl.windows_env(tmp_path)
    wl.install_torch(builder, "2.4.0")
    wl.install_runtime(builder.prefix, "msvc-runtime-14.44")
    windows_dir = wl.fake_windows(tmp_path / "Windows")
    main(["check", "-p", str(builder.prefix), "--system-root", str(windows_dir), "--format", "markdown"])
    text = capsys.readouterr().out
    rows = {r[0]: r[1] for r in parse_table(text.splitlines())[1:]}
    vc = rows["VC++ runtime (the copy that wins)"]
    assert "msvcp140.dll 14.44" in vc and "msvcp140.dll" in vc.rsplit(":", 1)[-1]
    check_fences_and_details(text)
    assert "libomp140" in text  # TC301 for torch 2.4.0 is among the findings


def test_explain_markdown_says_why_a_cause_is_less_likely_here():
    # a python.org path in the paste contradicts a conda-only cause: the bug report shows the reason, in order
    text = (
        '  File "C:\\Users\\a\\AppData\\Local\\Programs\\Python\\Python311\\Lib\\site-packages\\torch\\__init__.py"\n'
        "ImportError: DLL load failed while importing _C: The specified module could not be found."
    )
    expl = explain(text)
    [d] = expl.diagnoses
    doubted = next(c for c in d.causes if c.doubt is not None)
    out = render_explanation_markdown(expl, lang="en")
    assert f"**less likely here:** {md_text(doubted.doubt.render('en'))}" in out
    assert out.index(md_text(doubted.doubt.render("en"))) > out.index(md_text(d.causes[0].title.render("en")))
