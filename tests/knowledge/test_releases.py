"""knowledge.releases and the release tables: every row sourced, every producible version backed by the sources,
and the facts issue 13's review found wrong (spot checks)."""

from __future__ import annotations

import re

import pytest

from conda_torchcheck.knowledge import known_torch_minors, load, torch_release
from conda_torchcheck.knowledge import releases as r

SOURCES = {"PREV", "FS", "PYG", "REL", "VIS", "AUD", "COG", "ROW", "QS", "ANN", "ANA", "KRC", "PYPI"}


# -- every row has a source ---------------------------------------------------------------------------------


def _keys(text: str) -> set[str]:
    return set(re.findall(r"[A-Z]+", text))


def test_torch_releases_rows_have_a_known_source() -> None:
    for minor, row in load("torch_releases")["releases"].items():
        assert row.get("source"), minor
        assert _keys(row["source"]) <= SOURCES, (minor, row["source"])


@pytest.mark.parametrize(
    ("table", "section"), [("pytorch_channel_builds", "builds"), ("conda_forge_builds", "versions")]
)
def test_generated_rows_have_a_source(table: str, section: str) -> None:
    rows = load(table)[section]
    assert rows
    for version, row in rows.items():
        assert row.get("source") in SOURCES, (table, version)


def test_pyg_rows_have_a_source() -> None:
    data = load("pyg_wheels")
    assert all(row["source"] == "PYG" for row in data["wheels"].values())
    assert data["older"]["source"] == data["conda"]["source"] == "PYG"


def test_generated_tables_name_their_inputs() -> None:
    from pathlib import Path

    here = Path(r.__file__).parent
    head = (here / "pytorch_channel_builds.toml").read_text(encoding="utf-8")[:2000]
    assert "previous-versions.md" in head and "@788e28a" in head
    assert re.search(
        r"pytorch-cpu-feedstock history up to [0-9a-f]{40}", (here / "conda_forge_builds.toml").read_text()
    )
    assert re.search(r"pytorch_geometric history up to [0-9a-f]{40}", (here / "pyg_wheels.toml").read_text())


# -- coverage -----------------------------------------------------------------------------------------------


def test_releases_reach_back_to_0_4() -> None:
    minors = known_torch_minors()
    assert minors[0] == "0.4"
    for m in ["1.0", "1.1", "1.2", "1.3", "1.4", "1.5", "1.6", "1.7", "1.8", "1.9", "1.10", "1.11", "2.14"]:
        assert m in minors
        assert torch_release(m + ".0") is not None


def test_install_matrix_sections_are_all_parsed() -> None:
    builds = load("pytorch_channel_builds")["builds"]
    # every patch release the page has a section for (it has none for 1.3.x)
    expected = {
        "1.0.0", "1.0.1", "1.1.0", "1.2.0", "1.4.0", "1.5.0", "1.5.1", "1.6.0", "1.7.0", "1.7.1", "1.8.0", "1.8.1",
        "1.8.2", "1.9.0", "1.9.1", "1.10.0", "1.10.1", "1.11.0", "1.12.0", "1.12.1", "1.13.0", "1.13.1", "2.0.0",
        "2.0.1", "2.1.0", "2.1.1", "2.1.2", "2.2.0", "2.2.1", "2.2.2", "2.3.0", "2.3.1", "2.4.0", "2.4.1", "2.5.0",
        "2.5.1", "2.6.0", "2.7.0", "2.7.1", "2.8.0", "2.9.0", "2.9.1", "2.10.0", "2.11.0",
    }  # fmt: skip
    assert set(builds) == expected
    for v, row in builds.items():
        assert row["pip_tags"], v
        assert row.get("torchvision"), v


# -- every version the tables can produce exists in the sourced data ----------------------------------------


def test_minor_table_agrees_with_install_matrix() -> None:
    """torch_releases.toml's per-minor lists are what the install matrix lists, for every minor it covers."""
    for minor, row in load("torch_releases")["releases"].items():
        b = r.pytorch_channel_builds(minor)
        if b is None:
            continue
        assert set(row.get("pytorch_cuda", [])) == set(b["pytorch_cuda"]), minor
        assert set(row.get("cudatoolkit", [])) == set(b["cudatoolkit"]), minor
        cu = {t for t in r.pip_index_tags(minor) if t.startswith("cu")}
        assert set(row.get("pip_cuda", [])) == cu, minor
        rocm = {t for t in r.pip_index_tags(minor) if t.startswith("rocm")}
        assert set(row.get("pip_rocm", [])) <= rocm, minor


def test_every_companion_the_tables_produce_is_sourced() -> None:
    builds = load("pytorch_channel_builds")["builds"]
    sourced_tv = {x for row in builds.values() for x in [row["torchvision"], *row.get("pip_torchvision", [])]}
    sourced_ta = {x for row in builds.values() for x in [row.get("torchaudio", ""), *row.get("pip_torchaudio", [])]}
    from tests.knowledge.test_refresh_releases import RECORDING, refresh

    on_pypi = {p: v for f in refresh.read_pypi(replay=RECORDING).values() for p, v in f.torchvision_patch.items()}
    for minor, row in load("torch_releases")["releases"].items():
        for patch, items in row.get("torchvision_patch", {}).items():
            for item in items:
                # 1.2.0 ↔ 0.4.1 comes from the torchvision README, [PYPI] rows' from the PyPI recording, the rest
                # from the install matrix
                assert item in sourced_tv or (patch, item) == ("1.2.0", "0.4.1") or on_pypi.get(patch) == item, (
                    minor,
                    patch,
                    item,
                )
        for patch, items in row.get("torchaudio_patch", {}).items():
            for item in items:
                assert item in sourced_ta, (minor, patch, item)
    for v in builds:
        c = r.companions(v)
        for name in ("torchvision", "torchaudio"):
            for item in c[name]:
                assert r.exists(name, item), (v, name, item)


def test_pytorch_cuda_rows_are_published_versions() -> None:
    published = set(r.pytorch_cuda_versions())
    assert published == {"11.6", "11.7", "11.8", "12.1", "12.4"}
    from conda_torchcheck.knowledge import conda_channels

    assert set(conda_channels.pytorch_channel().pytorch_cuda) == published
    for minor, row in load("torch_releases")["releases"].items():
        assert set(row.get("pytorch_cuda", [])) <= published, minor


def test_pip_tags_are_well_formed() -> None:
    for v, row in load("pytorch_channel_builds")["builds"].items():
        for tag in row["pip_tags"]:
            assert re.fullmatch(r"cu\d{2,3}|rocm\d+(\.\d+){1,2}|cpu", tag), (v, tag)


def test_pip_local_tags_are_index_tags() -> None:
    for minor in known_torch_minors():
        local = set(r.pip_local_tags(minor))
        assert local <= set(r.pip_index_tags(minor)), minor


def test_conda_forge_variants() -> None:
    versions = r.conda_forge_versions()
    assert versions[0] == "1.0.0" and "2.13.0" in versions
    for v in versions:
        for plat, variants in r.conda_forge_builds(v).items():
            assert plat in {"linux-64", "linux-aarch64", "linux-ppc64le", "osx-64", "osx-arm64", "win-64"}
            for x in variants:
                assert x == "cpu" or re.fullmatch(r"\d+\.\d+", x), (v, plat, x)
    # win-64 uploads start with 2.5.1 [FS]
    assert "win-64" not in r.conda_forge_builds("2.4.1")
    assert "12.6" in r.conda_forge_builds("2.5.1")["win-64"]


def test_pyg_wheel_pages() -> None:
    pages = r.pyg_wheel_pages()
    assert pages["2.4.0"] == ("cpu", "cu118", "cu121", "cu124")
    assert "2.5.0" in pages and "cu126" not in pages["2.5.0"]
    assert "1.4.0" in r.pyg_torch_versions() and "1.3.0" not in r.pyg_torch_versions()
    assert r.pyg_conda_newest() == "2.4"
    assert r.exists("torch", "2.4.1", channel="pyg") is True
    assert r.exists("torch", "1.3.1", channel="pyg") is False


# -- spot checks of known facts (issue 13) -------------------------------------------------------------------


def test_1_13_had_pytorch_cuda_11_6_and_11_7_only() -> None:
    assert r.pytorch_channel_builds("1.13")["pytorch_cuda"] == ("11.6", "11.7")
    assert r.pytorch_channel_builds("1.13.1")["cuda"]["11.7"]["channels"] == ["pytorch", "nvidia"]
    assert r.exists("pytorch", "1.13.1", channel="pytorch", cuda="11.8") is False
    assert r.exists("pytorch", "1.13.0", channel="pytorch", cuda="11.6") is True


def test_pytorch_cuda_11_1_never_existed() -> None:
    assert r.exists("pytorch-cuda", "11.1") is False
    assert r.exists("pytorch-cuda", "12.4") is True


def test_1_11_had_cudatoolkit_10_2_and_11_3_not_11_1() -> None:
    b = r.pytorch_channel_builds("1.11.0")
    assert b["cudatoolkit"] == ("10.2", "11.3")
    assert b["cuda"]["11.3"]["channels"] == ["pytorch"]
    assert r.exists("pytorch", "1.11.0", channel="pytorch", cuda="11.1") is False
    assert r.cudatoolkit_versions("1.11") == ("10.2", "11.3")


def test_cudatoolkit_from_conda_forge_is_recorded() -> None:
    # 1.12's cudatoolkit 11.6 and 1.9/1.10's 11.3 need -c conda-forge; 1.8.2 LTS 11.1 needs nvidia / conda-forge
    assert r.pytorch_channel_builds("1.12.1")["cuda"]["11.6"]["channels"] == ["pytorch", "conda-forge"]
    assert r.pytorch_channel_builds("1.10.0")["cuda"]["11.3"]["channels"] == ["pytorch", "conda-forge"]
    lts = r.pytorch_channel_builds("1.8.2")
    assert lts["channel"] == "pytorch-lts"
    assert lts["cuda"]["11.1"]["channels_by_os"] == {
        "linux-64": ["pytorch-lts", "nvidia"],
        "win-64": ["pytorch-lts", "conda-forge"],
    }


def test_rocm5_2_wheels_were_torch_1_13() -> None:
    assert "rocm5.2" in r.pip_index_tags("1.13")
    assert "rocm5.2" not in r.pip_index_tags("1.12") and "rocm5.1.1" in r.pip_index_tags("1.12")
    assert r.exists("torch", "2.5.1+rocm5.2", channel="pip") is False
    assert r.exists("torch", "1.13.1+rocm5.2", channel="pip") is True
    assert r.exists("torch", "2.5.1+rocm6.2", channel="pip") is True


def test_torchvision_0_13_pairs_with_torch_1_12() -> None:
    assert r.torch_for_torchvision("0.13.1") == ("1.12",)
    assert r.companions("1.12.1") == {"torchvision": ("0.13.1",), "torchaudio": ("0.12.1",)}
    assert r.companions("1.11.0")["torchvision"] == ("0.12.0",)
    assert torch_release("1.11.0").torchvision == "0.12"


def test_pytorch_below_0_4_was_on_the_pytorch_channel() -> None:
    assert r.pytorch_channel_has("0.2.0") is True
    assert r.exists("pytorch", "0.2.0", channel="pytorch") is True
    assert "0.4.1" in r.pytorch_channel_versions()
    assert r.pytorch_channel_builds("0.4.1")["cuda_metapackages"] == ("cuda75", "cuda80", "cuda90", "cuda92")
    # not listed is not "never there": the page names examples, not a list
    assert r.pytorch_channel_has("0.3.1") is None


def test_old_releases_were_on_the_pytorch_channel() -> None:
    for v in ["1.0.0", "1.0.1", "1.1.0", "1.2.0", "1.4.0", "1.5.1", "1.6.0", "1.7.1", "1.8.1", "1.9.1", "1.10.1"]:
        assert r.pytorch_channel_has(v) is True, v
    assert r.pytorch_channel_builds("1.1.0")["cpu_package"] == "pytorch-cpu"
    assert r.pytorch_channel_builds("1.0.0")["cuda_metapackages"] == ("cuda100", "cuda80", "cuda90")
    assert r.pytorch_channel_builds("1.7.1")["cudatoolkit"] == ("9.2", "10.1", "10.2", "11.0")
    # releases the page skips are unknown, not absent
    assert r.pytorch_channel_has("1.3.1") is None and r.pytorch_channel_has("1.10.2") is None


def test_channel_frozen_after_2_5_1() -> None:
    assert r.pytorch_channel_last() == "2.5.1"
    assert r.pytorch_channel_has("2.5.1") is True
    assert r.pytorch_channel_has("2.6.0") is False and r.pytorch_channel_has("2.12") is False
    assert r.pytorch_channel_builds("2.6.0")["channel"] == ""


def test_companions_at_patch_level() -> None:
    assert r.companions("2.0.0") == {"torchvision": ("0.15.0", "0.15.1"), "torchaudio": ("2.0.0", "2.0.1")}
    assert r.companions("1.10.1") == {"torchvision": ("0.11.2",), "torchaudio": ("0.10.1",)}
    assert r.companions("1.7.1") == {"torchvision": ("0.8.2",), "torchaudio": ("0.7.2",)}
    assert r.companions("1.5.0") == {"torchvision": ("0.6.0",), "torchaudio": ()}
    assert r.companions("1.3.1") == {"torchvision": ("0.4",), "torchaudio": ("0.3",)}  # [VIS] [KRC] minors only
    assert r.companions("2.13.0")["torchvision"] == ("0.28",)  # hand row past the sources
    assert r.companions("9.9.0") == {}


def test_pip_local_and_default() -> None:
    assert r.pip_local_tags("1.11.0") == ("rocm4.5.2", "cu113", "cu102", "cpu")
    assert r.pypi_default_cuda("1.7.1") == "cu102" and "cu102" not in r.pip_local_tags("1.7.1")
    assert r.pypi_default_cuda("2.0.1") == "cu117"
    assert "cu121" in r.pip_local_tags("2.4.0")
    assert r.exists("torch", "1.11.0+cu113", channel="pip") is True
    assert r.exists("torch", "1.11.0+cu111", channel="pip") is False


def test_conda_forge_cuda_convention() -> None:
    assert r.conda_forge_cuda_convention("11.8") == {
        "packages": ("cudatoolkit", "cuda-version"),
        "cudatoolkit_ok": True,
        "source": "FS",
    }
    assert r.conda_forge_cuda_convention("12.6")["cudatoolkit_ok"] is False
    assert r.exists("pytorch", "2.1.2", channel="conda-forge", cuda="11.8") is True
    assert r.exists("pytorch", "2.13.0", channel="conda-forge", cuda="12.4") is False
    assert r.exists("pytorch", "1.5.0", channel="conda-forge") is False


def test_nightly_names() -> None:
    assert r.is_nightly("2.6.0.dev20241112") and r.nightly_release("2.6.0.dev20241112") == "2.6.0"
    assert not r.is_nightly("2.6.0") and r.nightly_release("2.5.1") is None
    assert not r.is_nightly("2.6.0.dev1")


def test_python_extra_2_7() -> None:
    assert torch_release("1.4.0").supports_python((2, 7))
    assert torch_release("1.4.0").supports_python((3, 8))
    assert not torch_release("1.5.0").supports_python((2, 7))
    assert not torch_release("1.2.0").supports_python((3, 4))


def test_unknown_versions_are_not_claimed_absent() -> None:
    assert r.pytorch_channel_builds("7.0.0") is None
    assert r.pip_index_tags("7.0") == () and r.pip_local_tags("7.0") == ()
    assert r.exists("torch", "7.0.0+cu130", channel="pip") is None
    assert r.exists("pytorch", "7.0.0", channel="conda-forge") is None


def test_nightly_channel_facts() -> None:
    n = r.nightly()
    assert n["conda_channel"] == "pytorch-nightly" and n["conda_cuda_channels"] == ["pytorch-nightly", "nvidia"]
    assert n["pip_index"].format(tag="cu124") == "https://download.pytorch.org/whl/nightly/cu124"
    assert _keys(n["source"]) <= SOURCES
    assert r.exists("pytorch", "2.6.0.dev20241112", channel="pytorch") is None


def test_osx_subdirs() -> None:
    assert r.pytorch_channel_builds("2.2.2")["osx_subdirs"] == ("osx-64",)
    assert r.pytorch_channel_builds("2.3.0")["osx_subdirs"] == ("osx-arm64",)
    assert r.pytorch_channel_builds("1.8.2")["osx_subdirs"] == ()


def test_pyg_local_versions_and_pages() -> None:
    assert r.pyg_local_tag("2.4.1", "cu121") == "pt24cu121" and r.pyg_local_tag("2.11.0", "cpu") == "pt211cpu"
    assert r.parse_pyg_local("+pt24cpu") == ("2.4", "cpu")
    assert r.parse_pyg_local("pt211cu128") == ("2.11", "cu128")
    assert r.parse_pyg_local("pt112cu116") == ("1.12", "cu116")
    assert r.parse_pyg_local("cu121") is None and r.parse_pyg_local("pt2cu121") is None
    assert r.parse_pyg_find_links("https://data.pyg.org/whl/torch-2.4.0+cu121.html") == ("2.4.0", "cu121")
    assert r.parse_pyg_find_links("https://download.pytorch.org/whl/cu121") is None
    assert r.pyg_wheel_page_exists("2.4.1", "cu121") is True
    assert r.pyg_wheel_page_exists("2.4.0", "cu126") is False
    assert r.pyg_wheel_page_exists("1.9.0", "cu111") is None  # listed as an older version, tags not spelled out
    assert r.pyg_wheel_page_exists("1.3.0", "cpu") is False
    assert r.pyg_wheel_page_exists("7.0.0", "cpu") is None
