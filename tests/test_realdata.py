"""Where the real test data is cached: TORCHCHECK_TESTDATA, then XDG_CACHE_HOME, then HOME; a cache already
under the password database's home is kept when HOME points somewhere fresh (CI), so nothing is fetched twice."""

from __future__ import annotations

from tests.realdata import cache_folder

NAME = "conda-torchcheck-testdata"


def test_testdata_variable_comes_first(tmp_path):
    env = {"TORCHCHECK_TESTDATA": str(tmp_path / "td"), "XDG_CACHE_HOME": str(tmp_path / "xdg"), "HOME": "/h"}
    assert cache_folder(env, str(tmp_path)) == tmp_path / "td"


def test_xdg_cache_home_then_home(tmp_path):
    assert cache_folder({"XDG_CACHE_HOME": str(tmp_path / "xdg"), "HOME": "/h"}, "/p") == tmp_path / "xdg" / NAME
    assert cache_folder({"HOME": str(tmp_path / "h")}, str(tmp_path / "p")) == tmp_path / "h" / ".cache" / NAME


def test_a_fresh_home_keeps_the_cache_already_downloaded_under_the_real_home(tmp_path):
    real = tmp_path / "root"
    (real / ".cache" / NAME).mkdir(parents=True)
    fresh = tmp_path / "ci-home"
    assert cache_folder({"HOME": str(fresh)}, str(real)) == real / ".cache" / NAME
    # once HOME has a cache of its own, that one is used
    (fresh / ".cache" / NAME).mkdir(parents=True)
    assert cache_folder({"HOME": str(fresh)}, str(real)) == fresh / ".cache" / NAME


def test_a_second_extraction_of_a_wheel_links_the_members_the_first_has(tmp_path, monkeypatch):
    import zipfile

    from tests import realdata

    whl = tmp_path / "demo-1.0-py3-none-any.whl"
    with zipfile.ZipFile(whl, "w") as zf:
        zf.writestr("demo/lib/big.dll", b"x" * 4096)
        zf.writestr("demo/__init__.py", b"")
        zf.writestr("demo-1.0.dist-info/METADATA", b"Name: demo\n")
    monkeypatch.setattr(realdata, "CACHE", tmp_path / "cache")
    monkeypatch.setattr(realdata, "wheel", lambda key: (realdata.CACHE.mkdir(exist_ok=True), whl)[1])
    first = realdata.extract("demo", ("demo/lib/*.dll",))
    second = realdata.extract("demo", ("demo/lib/*.dll", "demo-*.dist-info/*"))
    assert first != second
    a, b = first / "demo/lib/big.dll", second / "demo/lib/big.dll"
    assert b.read_bytes() == b"x" * 4096 and a.stat().st_ino == b.stat().st_ino
    assert (second / "demo-1.0.dist-info/METADATA").is_file() and not (first / "demo-1.0.dist-info").exists()
