"""TC622 (pip requirements no index of the file serves: a local version PyPI refuses, a name PyPI's list lacks) and
TC623 (an sdist whose build imports torch, which pip's isolated build lacks)."""

from __future__ import annotations

from conda_torchcheck.knowledge.pypi_names import name_list
from tests.envspec.test_rules import CF, env, found

BASE = ["python=3.11", "pytorch=2.5.1", "pip"]


def test_a_local_version_from_another_project_needs_its_page():
    # blind-k k035: dgl==1.1.0+cu113 with no -f https://data.dgl.ai/wheels/cu113/repo.html
    f = found(env(CF, BASE, ["numpy==1.26.4", "dgl==1.1.0+cu113"]))["TC622.local_version"]
    assert f.severity.value == "error" and f.evidence["entry"] == {"line": 11, "entry": "dgl==1.1.0+cu113"}


OTHER_SOURCES = (
    "-f https://data.dgl.ai/wheels/cu113/repo.html",
    "--extra-index-url https://example.org/simple",
    "--index-url https://download.pytorch.org/whl/cu118",  # the torch index serves xformers, torchao ... too
    "-r requirements.txt",
    "--no-index",
)


def test_a_page_or_another_index_may_carry_it():
    for option in OTHER_SOURCES:
        assert not any(k.startswith("TC622") for k in found(env(CF, BASE, [option, "dgl==1.1.0+cu113"])))
    # a PyPI mirror is PyPI
    mirror = "-i https://pypi.tuna.tsinghua.edu.cn/simple"
    assert "TC622.local_version" in found(env(CF, BASE, [mirror, "dgl==1.1.0+cu113"]))


def test_tc607_speaks_for_the_torch_family_and_pyg_extensions():
    keys = found(env(CF, ["python=3.11", "pip"], ["torch==2.3.0+cu121", "torch-scatter==2.1.2+pt23cu121"]))
    assert "TC607.missing" in keys and not any(k.startswith("TC622") for k in keys)


def test_a_name_pypi_does_not_list_is_a_warning_that_names_the_decider():
    # blind-l l034 (detectron2), blind-m m008 (tinycudann), m003 (spaCy's en-core-web-sm)
    for name in ("detectron2==0.6", "tinycudann==1.7", "en-core-web-sm==3.7.1", "pkg-resources==0.0.0"):
        f = found(env(CF, BASE, [name]))["TC622.not_listed"]
        package = name.split("==")[0]
        assert f.severity.value == "warning" and f.evidence["decide"] == f"pip index versions {package}"
    for served in ("numpy==1.26.4", "Flash_Attn==2.5.8", "install==1.3.5", "git+https://github.com/x/y.git"):
        assert not any(k.startswith("TC622") for k in found(env(CF, BASE, [served])))


def test_the_shipped_list_is_whole_and_answers_for_the_projects_it_has():
    names = name_list()
    assert names is not None and names.names > 800_000 and names.listed
    assert all(names.may_serve(n) for n in ("torch", "torchvision", "Torch_Scatter", "nvidia-cudnn-cu12", "pip"))


def test_flash_attn_from_pypi_cannot_build_under_isolation():
    # blind-k k028 / k033: flash-attn==2.8.0.post2 beside a pip torch; pip's isolated build has no torch
    f = found(env(CF, ["python=3.11", "pip"], ["torch==2.7.1", "flash-attn==2.8.0.post2"]))["TC623"]
    assert f.severity.value == "error" and f.evidence["entry"]["entry"] == "flash-attn==2.8.0.post2"
    assert "--no-build-isolation" in str(f.fixes[0].to_dict()["summary"])
    wheel = "flash-attn @ https://github.com/Dao-AILab/flash-attention/releases/download/v2.8.3/flash_attn-2.8.3-cp311-cp311-linux_x86_64.whl"
    for fine in ([wheel], ["-f https://example.org/wheels", "flash-attn==2.8.3"]):
        assert "TC623" not in found(env(CF, ["python=3.11", "pip"], ["torch==2.7.1", *fine]))
    torch_index = ["--extra-index-url https://download.pytorch.org/whl/cu126", "torch==2.7.1", "flash-attn==2.8.3"]
    assert "TC623" in found(env(CF, ["python=3.11", "pip"], torch_index))


def test_lines_pip_cannot_act_on_whatever_the_index():
    # blind-n n007/n008/n031 (git+git://github.com/deepmind/dm_control.git), n029 (flask-sqlalchemy==3.1.1s)
    pip = ["-f https://example.org/wheels", "git+git://github.com/deepmind/dm_control.git", "flask-sqlalchemy==3.1.1s"]
    keys = found(env(CF, BASE, pip))
    fix = keys["TC622.git_protocol"].fixes[0].to_dict()["summary"]
    assert "git+https://github.com/deepmind/dm_control.git" in str(fix)
    assert "Expected" in keys["TC622.invalid_requirement"].evidence["reason"]
    fine = ["git+https://github.com/deepmind/dm_control.git", "elasticsearch-dsl>=7,<8", "git+git://example.org/x.git"]
    assert not any(k.startswith("TC622") for k in found(env(CF, BASE, ["-f https://example.org/w", *fine])))
    # conda's `=` in a pip list is TC618's
    keys = found(env(CF, BASE, ["auraloss=0.4.0"]))
    assert "TC618.pip_single_equals" in keys and "TC622.invalid_requirement" not in keys


def test_an_open_extension_beside_an_old_torch_page_takes_pypis_source_release():
    # blind-x x001: torch-scatter unpinned beside pytorch-geometric.com's torch-1.6.0+cu102 page: PyPI's 2.1.2 (an
    # sdist) is newer than any wheel on that page, and pip takes the highest version
    text = env(
        ["pytorch", "conda-forge"],
        ["python=3.8", "pytorch=1.6.0", "pip"],
        ["-f https://pytorch-geometric.com/whl/torch-1.6.0+cu102.html", "torch-scatter", "torch-sparse==0.6.8"],
    )
    f = found(text)["TC607.extension_sdist_wins"]
    assert f.severity.value == "warning"
    assert "torch-scatter" in f.title.render() and "torch-sparse" not in f.title.render()
    # a current page carries the extensions' current releases (their +ptXY local versions sort above PyPI's)
    assert "TC607.extension_sdist_wins" not in found(text.replace("torch-1.6.0+cu102", "torch-2.4.0+cu121"))
