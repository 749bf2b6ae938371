"""TC305: two libiomp5md.dll copies that can both be loaded into one process (OMP: Error #15)."""

from __future__ import annotations

import pytest

from conda_torchcheck.checks import win_openmp
from conda_torchcheck.findings import Severity
from tests.loader import windows_layouts as wl

pytestmark = pytest.mark.realdata


def run(ctx):
    return list(win_openmp.CHECK.run(ctx))


@pytest.fixture
def torch230(tmp_path):
    return wl.torch_env(tmp_path, "2.3.0")


def test_pip_torch_next_to_conda_intel_openmp(torch230, tmp_path):
    data = wl.openmp_dll().read_bytes()
    torch230.conda_record("intel-openmp", "2024.2.1", "h57928b3_1083", files={"Library/bin/libiomp5md.dll": data})
    win = wl.fake_windows(tmp_path / "Windows")
    (f,) = run(wl.context(torch230.prefix, system_root=win, path=""))
    assert (f.id, f.severity) == ("TC305", Severity.WARNING)
    rows = {row["file"]: row for row in f.evidence["copies"]}
    torch_copy = str(torch230.site_packages / "torch" / "lib" / "libiomp5md.dll")
    conda_copy = str(torch230.prefix / "Library" / "bin" / "libiomp5md.dll")
    assert set(rows) == {torch_copy, conda_copy}
    assert rows[conda_copy]["owner"].startswith("conda: intel-openmp 2024.2.1")
    assert rows[conda_copy]["identical_to_torch_copy"] is True  # same bytes, still two modules
    assert rows[torch_copy]["owner"].startswith("pip: torch 2.3.0")
    commands = [c for fix in f.fixes for c in fix.commands]
    assert f'conda install -p "{torch230.prefix}" -c conda-forge pytorch' in commands
    assert "set KMP_DUPLICATE_LIB_OK=TRUE" in commands


def test_pip_intel_openmp_copy_is_not_a_second_runtime(torch230, tmp_path):
    data = wl.openmp_dll().read_bytes()
    torch230.dist("intel-openmp", "2021.4.0", files={"../../Library/bin/libiomp5md.dll": data})
    win = wl.fake_windows(tmp_path / "Windows")
    assert run(wl.context(torch230.prefix, system_root=win, path="")) == []


def test_package_folder_copy_is_loaded_by_full_path(torch230, tmp_path):
    folder = torch230.site_packages / "ctranslate2"
    folder.mkdir()
    wl.link_or_copy(wl.openmp_dll(), folder / "libiomp5md.dll")
    win = wl.fake_windows(tmp_path / "Windows")
    (f,) = run(wl.context(torch230.prefix, system_root=win, path=""))
    assert any(row["loaded"] == "package folder ctranslate2" for row in f.evidence["copies"])


def test_single_copy_is_fine(torch230, tmp_path):
    win = wl.fake_windows(tmp_path / "Windows")
    assert run(wl.context(torch230.prefix, system_root=win, path="")) == []


def test_copy_deeper_in_a_package_is_found_from_its_record(torch230, tmp_path):
    torch230.dist("ompbound", "1.0", files={"ompbound/_core.pyd": b"MZ", "ompbound/bin/libiomp5md.dll": b""})
    wl.replace_file(torch230.site_packages / "ompbound" / "bin" / "libiomp5md.dll", wl.openmp_dll().read_bytes())
    win = wl.fake_windows(tmp_path / "Windows")
    (f,) = run(wl.context(torch230.prefix, system_root=win, path=""))
    deep = str(torch230.site_packages / "ompbound" / "bin" / "libiomp5md.dll")
    assert {row["file"]: row["loaded"] for row in f.evidence["copies"]}[deep] == "package folder ompbound"
