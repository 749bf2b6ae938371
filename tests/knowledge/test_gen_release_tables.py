"""The install-matrix parser on a small page in the same shape (written for this test, not a copy)."""

from __future__ import annotations

from pathlib import Path

from conda_torchcheck._toml import load_toml_text
from tools import gen_release_tables as gen

PAGE = """---
title: test
---

## Commands for Versions >= 1.0.0

### v9.1.0

#### Conda

##### OSX

```
# conda
conda install pytorch==9.1.0 torchvision==0.91.0 torchaudio==9.1.0 -c pytorch
```

#####  Linux and Windows

```
# CUDA 11.6
conda install pytorch==9.1.0 torchvision==0.91.0 torchaudio==9.1.0 cudatoolkit=11.6 -c pytorch -c conda-forge
# CUDA 11.7
conda install pytorch==9.1.0 torchvision==0.91.0 torchaudio==9.1.0 pytorch-cuda=11.7 -c pytorch -c nvidia
# CPU Only
conda install pytorch==9.1.0 torchvision==0.91.0 torchaudio==9.1.0 cpuonly -c pytorch
```

#### Wheel

##### Linux and Windows

```
# ROCM 5.2 (Linux only)
pip install torch==9.1.0+rocm5.2 torchvision==0.91.0+rocm5.2 torchaudio==9.1.0 --extra-index-url https://download.pytorch.org/whl/rocm5.2
# CUDA 11.7
pip install torch==9.1.0 torchvision==0.91.1 torchaudio==9.1.0
# CPU only
pip install torch==9.1.0+cpu torchvision==0.91.0+cpu torchaudio==9.1.0 --extra-index-url https://download.pytorch.org/whl/cpu
```

### v9.2.0

#### Wheel

##### Linux and Windows

```
# CUDA 13.0
pip install torch==9.2.0 torchvision==0.92.0 torchaudio==9.2.0 --index-url https://download.pytorch.org/whl/cu130
```

## Commands for Versions < 1.0.0

### Via conda

replace "0.4.1" in the following commands with the desired version
(i.e., "0.2.0").

`conda install pytorch=0.4.1 cuda90 -c pytorch`

`conda install pytorch=0.4.1 -c pytorch`
"""


def test_parse_and_write(tmp_path: Path) -> None:
    dest = tmp_path / "out.toml"
    gen.write_pytorch_channel(PAGE, "test page", dest)
    data = load_toml_text(dest.read_text(encoding="utf-8"))
    a = data["builds"]["9.1.0"]
    assert a["source"] == "PREV" and a["conda_channel"] == "pytorch" and a["cpuonly"] is True
    assert a["conda_cuda"]["11.6"] == {
        "kind": "cudatoolkit",
        "channels": ["pytorch", "conda-forge"],
        "os": ["linux-64", "win-64"],
    }
    assert a["conda_cuda"]["11.7"]["kind"] == "pytorch-cuda"
    assert a["torchvision"] == "0.91.0" and a["pip_torchvision"] == ["0.91.0", "0.91.1"]
    assert a["pip_tags"] == ["rocm5.2", "cu117", "cpu"]
    assert a["pip_local_shown"] == ["rocm5.2", "cpu"] and a["pypi_default_cuda"] == "cu117"
    b = data["builds"]["9.2.0"]
    assert b["conda_channel"] == "" and b["pip_tags"] == ["cu130"] and b["pip_index_style"] == ["index-url"]
    legacy = data["legacy"]
    assert legacy["conda_versions"] == ["0.2.0", "0.4.1"] and legacy["conda_cuda_metapackages"] == ["cuda90"]
    assert "Source [PREV]: test page" in dest.read_text(encoding="utf-8")


def test_recipe_selector_reader() -> None:
    assert gen._skips("win", "win-64", "None")
    assert not gen._skips("win", "linux-64", "12.0")
    assert gen._skips('cuda_compiler_version == "11.8" and aarch64', "linux-aarch64", "11.8")
    assert not gen._skips('cuda_compiler_version == "11.8" and aarch64', "linux-64", "11.8")
    assert not gen._skips("py != 310", "linux-64", "None")  # drops some builds, not the variant


def test_the_generator_is_not_in_the_package():
    """tools/ is for maintainers: the wheel ships conda_torchcheck/ only, and the generator is not in it."""
    from pathlib import Path

    from conda_torchcheck._toml import load_toml_text as parse

    root = Path(__file__).resolve().parents[2]
    assert not (root / "conda_torchcheck" / "knowledge" / "_build").exists()
    assert not list((root / "conda_torchcheck").rglob("gen_release_tables.py"))
    project = parse((root / "pyproject.toml").read_text(encoding="utf-8"))
    assert project["tool"]["hatch"]["build"]["targets"]["wheel"]["packages"] == ["conda_torchcheck"]
