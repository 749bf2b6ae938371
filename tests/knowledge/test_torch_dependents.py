"""knowledge.torch_dependents: the packages that bring torch, each row sourced from the package's own metadata."""

from __future__ import annotations

import dataclasses

from conda_torchcheck import knowledge
from conda_torchcheck.knowledge import torch_dependents as td


def test_every_row_is_frozen_and_sourced():
    rows = [*td.pip_dependents().values(), *td.conda_dependents().values()]
    assert len(td.pip_dependents()) > 200 and len(td.conda_dependents()) > 100
    for row in rows:
        assert dataclasses.is_dataclass(row) and row.__dataclass_params__.frozen
        assert row.source.startswith("https://") and row.requirement and row.version is not None, row
    for row in td.pip_dependents().values():
        assert row.source == f"https://pypi.org/pypi/{row.name}/{row.version}/json"
    for row in td.conda_dependents().values():
        assert len(row.commit) == 40 and row.commit in row.source and row.path in row.source, row


def test_pip_rows():
    st = td.pip_dependent("sentence-transformers")
    assert st is not None and st.manager == "pip" and st.requirement.startswith("torch") and st.via is None
    assert td.pip_dependent("Sentence_Transformers") is st  # PyPI's reading of the name
    # torch is an extra of these, or optional: no row
    for name in ("transformers", "diffusers", "torch-geometric", "einops", "faster-whisper"):
        assert td.pip_dependent(name) is None, name
    # through a package that requires torch: gpytorch needs linear-operator, which needs torch
    gp = td.pip_dependent("gpytorch")
    assert gp is not None and gp.via == "linear-operator" and td.pip_dependent("linear-operator") is not None
    # every torch line is kept with its marker (demucs: one per platform)
    demucs = td.pip_dependent("demucs")
    assert demucs is not None and "darwin" in demucs.marker and len(demucs.also) == 1
    assert td.pip_dependent(None) is None and td.pip_dependent("") is None


def test_conda_rows():
    st = td.conda_dependent("sentence-transformers")
    assert st is not None and st.manager == "conda" and st.requirement.startswith("pytorch")
    assert st.feedstock == "conda-forge/sentence-transformers-feedstock" and st.channel is None
    # conda names are compared as written: conda-forge's pytorch_scatter and the pyg channel's pytorch-scatter are
    # two packages (both rows)
    assert td.conda_dependent("pytorch_scatter").feedstock == "conda-forge/pytorch_scatter-feedstock"
    assert td.conda_dependent("pytorch-scatter").channel == "pyg"
    assert td.conda_dependent("ignite").channel == "pytorch"
    # a compiled extension with pytorch in host: pytorch's run_exports put it in run
    assert td.conda_dependent("torchtext").via == "pytorch's run_exports"
    # conda-forge's recipes without pytorch: torch is optional in pytorch_geometric, ultralytics comes through thop
    assert td.conda_dependent("pytorch_geometric") is None and td.conda_dependent("transformers") is None
    assert td.conda_dependent("ultralytics").via == "ultralytics-thop"


def test_the_hand_lists_it_replaced_are_covered_where_the_data_confirm():
    # env_files.toml's [conda_depends_on_pytorch] and [pip_depends_on_torch], less pytorch_geometric (its recipe
    # does not run-require pytorch) and basicsr (its PyPI release publishes no requires_dist)
    conda = "pytorch-lightning lightning torchmetrics kornia timm pyg torchtext torchdata xformers gpytorch botorch"
    conda += " captum monai pytorch-ignite ignite pytorch-scatter pytorch-sparse pytorch-cluster"
    pip = "pytorch-lightning lightning torchmetrics kornia timm sentence-transformers accelerate ultralytics"
    pip += " open-clip-torch peft xformers deepspeed torchdata torchtext gpytorch botorch captum monai pytorch-ignite"
    pip += " openai-whisper lpips torch-fidelity"
    assert [n for n in conda.split() if td.conda_dependent(n) is None] == []
    assert [n for n in pip.split() if td.pip_dependent(n) is None] == []
    assert "conda_depends_on_pytorch" not in knowledge.load("env_files")
    assert "pip_depends_on_torch" not in knowledge.load("env_files")


def test_the_table_is_parsed_once():
    td.pip_dependent("timm")
    td.conda_dependent("timm")
    misses = knowledge.load.cache_info().misses
    for _ in range(3):
        td.pip_dependent("timm")
        td.conda_dependent("kornia")
    assert knowledge.load.cache_info().misses == misses
