"""Golden output, one file per renderer and scenario (issue 25): the exact text users read for the conda flows'
envs (a companion built for another torch, a CUDA 11.8 build beside pytorch-cuda 12.1, a damaged pytorch record),
the fleet table, the post-solve guard and after-install lines, and explain. A change to any of these words shows
up here as a diff to review; after reviewing it, rewrite the files with
``TORCHCHECK_UPDATE_GOLDEN=1 python -m pytest tests/render/test_golden.py``.

Paths are replaced by placeholders (``<prefix>``, ``<root>``, ``<home>``); the host is fixed (no variables of
this process, an empty system root: no driver), and the width is 100 columns."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import conda_torchcheck
from conda_torchcheck.cli.main import main
from tests.checks.tc_helpers import PY_DEP, cuda118_beside_pytorch_cuda_121, damaged_pytorch_record
from tests.envbuilder import EnvBuilder

GOLDEN = Path(__file__).parent / "golden"
UPDATE = os.environ.get("TORCHCHECK_UPDATE_GOLDEN") == "1"
#: keys whose values change from run to run
VOLATILE = ("seconds", "ran_at", "version")


def _companion_of_another_torch(b: EnvBuilder) -> None:
    b.conda_pytorch("2.5.1", "cpu_mkl_py311_h0000000_100", depends=PY_DEP)
    b.conda_python_package("torchvision", "0.15.2", "cpu_py311h0000000_0")


SCENARIOS = {
    "companion-of-another-torch": _companion_of_another_torch,
    "cuda118-beside-pytorch-cuda-121": cuda118_beside_pytorch_cuda_121,
    "damaged-pytorch-record": damaged_pytorch_record,
}
FORMATS = {"text": "txt", "markdown": "md", "json": "json"}


@pytest.fixture
def fixed(monkeypatch):
    """A temporary folder whose path has the same length on every run: text is wrapped at 100 columns before the
    paths are replaced, so pytest's own tmp_path (pytest-0 ... pytest-10, the test's name) would move the breaks."""
    import shutil
    import tempfile

    monkeypatch.setenv("COLUMNS", "100")
    monkeypatch.delenv("NO_COLOR", raising=False)
    tmp = Path(tempfile.mkdtemp(prefix="tcgold", dir="/tmp" if Path("/tmp").is_dir() else None))
    root = tmp / "root"
    root.mkdir()
    yield tmp, root
    shutil.rmtree(tmp, ignore_errors=True)


def _normalised(text: str, replacements: dict[str, str]) -> str:
    for path, name in sorted(replacements.items(), key=lambda kv: -len(kv[0])):
        text = text.replace(path, name)
    return text


def _stable_json(text: str) -> str:
    def scrub(value):
        if isinstance(value, dict):
            return {k: ("<volatile>" if k in VOLATILE and k != "version" else scrub(v)) for k, v in value.items()}
        if isinstance(value, list):
            return [scrub(v) for v in value]
        return value

    doc = scrub(json.loads(text))
    doc["tool"]["version"] = "<version>"
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def _compare(name: str, actual: str) -> None:
    path = GOLDEN / name
    if UPDATE or not path.exists():
        if not UPDATE:
            pytest.fail(f"{path} does not exist: run with TORCHCHECK_UPDATE_GOLDEN=1 to write it, then review it")
        path.write_text(actual, encoding="utf-8")
        return
    expected = path.read_text(encoding="utf-8")
    assert actual == expected, f"{name} changed: review the diff, then rewrite with TORCHCHECK_UPDATE_GOLDEN=1"


@pytest.mark.parametrize("fmt", list(FORMATS))
@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_report(fixed, capsys, scenario, fmt):
    tmp, root = fixed
    b = EnvBuilder(tmp / "env", layout="conda")
    SCENARIOS[scenario](b)
    main(["check", "-p", str(b.prefix), "--ignore-environment", "--system-root", str(root), "--format", fmt])
    package = str(Path(conda_torchcheck.__file__).resolve().parent)  # the docs pages' paths: where it is installed
    out = _normalised(capsys.readouterr().out, {str(b.prefix): "<prefix>", str(root): "<root>", package: "<package>"})
    _compare(f"{scenario}.{FORMATS[fmt]}", _stable_json(out) if fmt == "json" else out)


def test_fleet_text(tmp_path, monkeypatch, capsys):
    """--all-envs over a miniforge home: one line per env, the total, and the footer."""
    home = Path(os.environ["HOME"])
    monkeypatch.setenv("COLUMNS", "100")
    for var in ("CONDA_EXE", "CONDA_ROOT", "MAMBA_ROOT_PREFIX", "CONDA_ENVS_PATH", "CONDA_ENVS_DIRS", "CONDARC"):
        monkeypatch.delenv(var, raising=False)
    base = EnvBuilder(home / "miniforge3", layout="conda")
    (base.prefix / "condabin").mkdir()
    base.conda_record("conda", "25.1.1", "py311h38be061_0")
    for name, make in SCENARIOS.items():
        make(EnvBuilder(home / "miniforge3" / "envs" / name, layout="conda"))
    EnvBuilder(home / "miniforge3" / "envs" / "empty", layout="conda")
    main(["check", "--all-envs", "--ignore-environment"])
    _compare("fleet.txt", _normalised(capsys.readouterr().out, {str(home): "<home>"}))


PASTE = (
    "Traceback (most recent call last):\n"
    '  File "<string>", line 1, in <module>\n'
    '  File "C:\\Users\\me\\miniconda3\\envs\\t\\lib\\site-packages\\torch\\__init__.py", line 148, in <module>\n'
    "    raise err\n"
    "OSError: [WinError 126] The specified module could not be found. Error loading "
    '"C:\\Users\\me\\miniconda3\\envs\\t\\lib\\site-packages\\torch\\lib\\shm.dll" or one of its dependencies.\n'
)


@pytest.mark.parametrize("fmt", ["text", "markdown"])
def test_explain(fixed, capsys, monkeypatch, fmt):
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO(PASTE))
    main(["explain", "--no-env", "--format", fmt])
    _compare(f"explain-winerror126.{FORMATS[fmt]}", capsys.readouterr().out)


def test_post_solve_guard_lines():
    """The guard's lines for a create that asks for both selectors, with and without -y, and a refusal."""
    from conda_torchcheck.hooks import post_solve
    from conda_torchcheck.hooks.advice import Advice
    from conda_torchcheck.hooks.records import to_conda_record
    from tests.hooks.fakes import rec

    prefix = Path("/envs/mixed")
    link = [
        rec("python", "3.11.9", "h0000000_0_cpython"),
        rec("pytorch", "2.5.1", "py3.11_cuda12.4_cudnn9_0", "pytorch"),
        rec("pytorch-cuda", "12.4", "hc786d27_7", "pytorch"),
        rec("cpuonly", "2.0", "0", "pytorch"),
        rec("pytorch-mutex", "1.0", "cpu", "pytorch"),
    ]
    outcome = post_solve.evaluate(prefix, "linux-64", (), [], link)
    assert outcome is not None and to_conda_record(link[1], prefix).name == "pytorch"
    base = "conda create -p /envs/mixed --override-channels -c pytorch -c conda-forge"
    advice = [
        Advice((f"{base} pytorch=2.5.1 pytorch-cuda=12.4",), keeps="cuda"),
        Advice((f'{base} "conda-forge::pytorch=2.5.1=*cpu*"',), keeps="cpu"),
    ]
    blocks = {
        "warning, -y": post_solve.warning_lines(outcome, refused=False, advice=advice, yes=True),
        "warning, at the prompt": post_solve.warning_lines(outcome, refused=False, advice=advice),
        "warning, no advice": post_solve.warning_lines(outcome, refused=False),
        "refused": post_solve.warning_lines(outcome, refused=True, advice=advice[:1]),
    }
    text = "".join(f"## {name}\n" + "\n".join(lines) + "\n\n" for name, lines in blocks.items())
    _compare("post-solve-guard.txt", text)


def test_after_install_lines(fixed):
    from conda_torchcheck.checks import run_checks
    from conda_torchcheck.checks.context import CheckContext, CheckOptions
    from conda_torchcheck.hooks.post_command import summary_lines
    from conda_torchcheck.inventory import load_environment

    tmp, root = fixed
    blocks = {}
    for name in ("companion-of-another-torch", "cuda118-beside-pytorch-cuda-121"):
        b = EnvBuilder(tmp / name, layout="conda")
        SCENARIOS[name](b)
        env, host = load_environment(b.prefix, use_live_host=False)
        findings = run_checks(CheckContext(env, host, CheckOptions(verify_hashes=False)))
        lines = summary_lines(str(b.prefix), findings)
        blocks[name] = _normalised("\n".join(lines), {str(b.prefix): "<prefix>"})
    _compare("after-install.txt", "".join(f"## {name}\n{text}\n\n" for name, text in blocks.items()))


def test_env_file_warning_before_conda_env_create(tmp_path):
    """What `conda env create -f environment.yml` prints before the solve for a companion of another torch."""
    import io

    from conda_torchcheck.envspec import conda_integration

    spec = tmp_path / "environment.yml"
    spec.write_text("name: t\nchannels:\n  - conda-forge\ndependencies:\n  - pytorch=2.5.1\n  - torchvision=0.15.2\n")
    stream = io.StringIO()
    conda_integration.report(conda_integration.check_files([str(spec)]), stream)
    _compare("env-file-warning.txt", _normalised(stream.getvalue(), {str(spec): "<file>"}))
