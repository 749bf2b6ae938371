"""Ranking causes, ruling them out on an env, confirming them with findings, naming the root cause."""

from __future__ import annotations

import pytest

from conda_torchcheck.checks.context import CheckContext
from conda_torchcheck.explain import explain
from conda_torchcheck.explain.diagnose import (
    CONFIRMED,
    NOT_FOUND,
    RULED_OUT,
    UNVERIFIABLE,
    diagnose,
    prefix_named_by,
    rank_causes,
    same_place,
)
from conda_torchcheck.explain.recognise import recognise
from conda_torchcheck.findings import Finding, Severity
from conda_torchcheck.inventory import load_environment
from conda_torchcheck.messages import msg
from tests.loader import windows_layouts as wl  # at import time: realdata's cache path must see the real HOME

WIN126 = 'OSError: [WinError 126] 找不到指定的模块。 Error loading "C:\\e\\Lib\\site-packages\\torch\\lib\\{dll}" or one of its dependencies.'  # noqa: E501


def causes_for(text: str) -> list[str]:
    [m] = recognise(text)
    return [c.id for c in rank_causes(m)]


def fake(id: str, variant: str | None = None, severity: Severity = Severity.ERROR, **evidence) -> Finding:
    base = f"{id}.{variant}" if variant else id
    return Finding(id, severity, msg(f"{base}.title"), msg(f"{base}.explanation"), evidence=evidence)


def ctx_for(builder) -> CheckContext:
    env, host = load_environment(builder.prefix, use_live_host=False)
    return CheckContext(env, host)


# --- ranking -----------------------------------------------------------------------------------------------


def test_fbgemm_puts_libomp140_first():
    causes = causes_for(WIN126.format(dll="fbgemm.dll"))
    assert causes[0] == "libomp140-missing"
    assert "vc-runtime-missing" in causes


def test_shm_dll_does_not_offer_the_fbgemm_cause():
    causes = causes_for(WIN126.format(dll="shm.dll"))
    assert causes[0] == "vc-runtime-missing"
    assert "libomp140-missing" not in causes  # contradicted by the DLL name
    # the path is not a user site: the 2.3.0 MKL cause stays possible (a missing mkl wheel) but is not promoted
    assert causes.index("user-site-mkl") > causes.index("vc-runtime-missing")


def test_user_site_path_makes_the_230_mkl_cause_specific():
    text = WIN126.replace(
        "C:\\e\\Lib\\site-packages", "C:\\Users\\me\\AppData\\Roaming\\Python\\Python311\\site-packages"
    )
    [m] = recognise(text.format(dll="shm.dll"))
    ranked = rank_causes(m)
    assert ranked[0].id == "user-site-mkl" and ranked[0].specific


def test_without_dll_name_every_generic_cause_is_listed_once():
    causes = causes_for("OSError: [WinError 126] The specified module could not be found.")
    # the bare ctypes form is torch 1.5.0's preload: a CUDA build without a driver, then the VC++ runtime
    assert causes[:2] == ["cuda-build-without-nvidia-driver", "vc-runtime-missing"]
    assert len(causes) == len(set(causes))
    assert "libomp140-missing" in causes and "cudnn-zlibwapi" not in causes


def test_vc_redist_warning_moves_the_runtime_cause_first():
    text = (
        "Microsoft Visual C++ Redistributable is not installed, this may lead to the DLL load failure.\n"
        + WIN126.format(dll="fbgemm.dll")
    )
    ms = recognise(text)
    [m] = [m for m in ms if m.pattern_id == "winerror-126"]
    ranked = rank_causes(m, [x.pattern_id for x in ms])
    assert ranked[0].id == "vc-runtime-missing" and ranked[0].specific


def test_symbol_decides_linux_causes():
    ijit = "ImportError: /x/lib/python3.10/site-packages/torch/lib/libtorch_cpu.so: undefined symbol: iJIT_NotifyEvent"
    assert causes_for(ijit)[0] == "mkl-ijit"
    nccl = "ImportError: /x/site-packages/torch/lib/libtorch_cuda.so: undefined symbol: ncclCommRegister"
    causes = causes_for(nccl)
    assert causes[0] == "nccl-mismatch" and "mkl-ijit" not in causes
    ext = "ImportError: /x/site-packages/torchvision/_C.so: undefined symbol: _ZN3c104cuda9SetDeviceEi"
    # torchvision's own extension: the torchvision/torch pairing first, any extension's cause next
    assert causes_for(ext)[:2] == ["torchvision-torch-mismatch", "extension-for-other-torch"]


def test_libstdcxx_location_decides():
    system = (
        "/lib/x86_64-linux-gnu/libstdc++.so.6: version `GLIBCXX_3.4.30' not found (required by "
        "/home/u/miniconda3/envs/x/lib/python3.11/site-packages/torch/lib/libtorch_python.so)"
    )
    assert causes_for(system)[0] == "system-libstdcxx-wins"
    env = (
        "/home/u/miniconda3/envs/x/bin/../lib/libstdc++.so.6: version `GLIBCXX_3.4.32' not found (required by /a/b.so)"
    )
    causes = causes_for(env)
    assert causes[0] == "env-libstdcxx-too-old" and "system-libstdcxx-wins" not in causes
    other = "/opt/tool/lib/libstdc++.so.6: version `GLIBCXX_3.4.32' not found (required by /a/b.so)"
    assert causes_for(other) == ["ld-library-path-shadowing"]


# --- without an env ------------------------------------------------------------------------------------------


def test_without_env_everything_is_possible_with_commands_for_a_placeholder_prefix():
    result = explain(WIN126.format(dll="shm.dll"))
    [d] = result.diagnoses
    assert d.root_cause is None and not d.env_checked
    assert {c.status for c in d.causes} == {"possible"}
    vc = next(c for c in d.causes if c.id == "vc-runtime-missing")
    assert vc.commands == ('conda install -p "<prefix>" -c conda-forge vc14_runtime',)
    doc = result.to_dict("zh_CN")
    assert doc["target"] is None
    assert "找不到" in doc["recognised"][0]["title"] or "无法加载" in doc["recognised"][0]["title"]


# --- on an env -----------------------------------------------------------------------------------------------


def test_windows_error_on_linux_env_is_ruled_out(make_env):
    b = make_env(os="linux", layout="conda")
    b.conda_pytorch("2.5.1", "cpu_mkl_py311_h0000000_100")
    result = explain(WIN126.format(dll="shm.dll"), ctx_for(b))
    [d] = result.diagnoses
    assert all(c.status in (RULED_OUT, NOT_FOUND, UNVERIFIABLE) for c in d.causes)
    assert next(c for c in d.causes if c.id == "vc-runtime-missing").status == RULED_OUT
    notes = [n.key for n in d.notes]
    assert "explain.note.other_os" in notes
    assert "explain.note.other_prefix" in notes  # C:\e is not this env


def test_torch_version_rules_out_version_specific_causes(make_env):
    b = make_env(os="windows", layout="venv")
    b.pip_torch("2.5.1+cpu")
    text = WIN126.replace(
        "C:\\e\\Lib\\site-packages", "C:\\Users\\me\\AppData\\Roaming\\Python\\Python311\\site-packages"
    )
    [d] = explain(text.format(dll="shm.dll"), ctx_for(b)).diagnoses
    mkl = next(c for c in d.causes if c.id == "user-site-mkl")
    assert mkl.status == RULED_OUT
    assert "2.5.1" in mkl.ruled_out.render("en") and "==2.3.0" in mkl.ruled_out.render("en")
    nvtx = next(c for c in d.causes if c.id == "nvtoolsext-missing")
    assert nvtx.status == RULED_OUT  # a CPU build


def test_confirming_finding_names_the_root_cause(make_env):
    b = make_env(os="windows", layout="venv")
    b.pip_torch("2.5.1+cpu")
    ctx = ctx_for(b)
    matches = recognise(WIN126.format(dll="shm.dll"))
    findings = [
        fake("TC301", "vc_runtime", dlls="msvcp140.dll", windows_blames="shm.dll", missing="msvcp140.dll"),
        fake("TC310", severity=Severity.INFO, dlls="msvcp140.dll"),
    ]
    [d], ran, _ = diagnose(matches, ctx, findings=findings)
    root = d.root_cause
    assert root is not None and root.id == "vc-runtime-missing" and root.status == CONFIRMED
    assert root.exact  # the finding blames the same DLL as the error
    assert [f.id for f in root.confirmed_by] == ["TC301"]
    # TC301 confirms "another DLL is missing" too, but the more likely cause is the root
    assert next(c for c in d.causes if c.id == "dependency-missing").status == CONFIRMED
    assert "Root cause" in d.verdict.render("en") and "根本原因" in d.verdict.render("zh_CN")


def test_a_finding_about_the_same_dll_beats_rank(make_env):
    b = make_env(os="windows", layout="venv")
    b.pip_torch("2.4.0+cpu")
    matches = recognise(WIN126.format(dll="fbgemm.dll"))
    findings = [
        fake("TC301", "vc_runtime", dlls="vcruntime140_1.dll", windows_blames="c10.dll"),
        fake("TC301", "libomp140", importer="fbgemm.dll", windows_blames="fbgemm.dll"),
    ]
    [d], _, _ = diagnose(matches, ctx_for(b), findings=findings)
    assert d.root_cause.id == "libomp140-missing"


def test_info_and_import_test_findings_never_confirm(make_env):
    b = make_env(os="windows", layout="venv")
    b.pip_torch("2.5.1+cpu")
    findings = [
        fake("TC301", "vc_runtime", severity=Severity.INFO, dlls="msvcp140.dll"),
        fake("TC701", error="x", error_type="OSError", python="p", recognised="r", conclusion="c"),
    ]
    [d], _, _ = diagnose(recognise(WIN126.format(dll="shm.dll")), ctx_for(b), findings=findings)
    assert d.root_cause is None
    assert "does not show" in d.verdict.render("en")


def test_unverifiable_cause_is_said_so(make_env):
    b = make_env(os="windows", layout="venv")
    b.pip_torch("2.9.0+cpu")
    text = 'OSError: [WinError 1114] 动态链接库(DLL)初始化例程失败。 Error loading "C:\\x\\torch\\lib\\c10.dll" or one of its dependencies.'  # noqa: E501
    [d] = explain(text, ctx_for(b)).diagnoses
    statuses = {c.id: c.status for c in d.causes}
    # TC311 looks for packages of this env that bring their own copy of a DLL torch imports: none here
    assert statuses["dll-preloaded-by-other-package"] == NOT_FOUND
    assert statuses["old-msvcp140"] == NOT_FOUND
    assert "cuda-dll-init-failed" not in statuses  # c10.dll is not a CUDA DLL


def test_real_check_confirms_mkl_ijit(make_env):
    """End to end with a real check: pytorch-channel pytorch + mkl 2024.1 → TC105 names the root cause."""
    b = make_env(os="linux", layout="conda")
    b.conda_pytorch("2.2.2", "py3.11_cuda12.1_cudnn8.9.2_0", channel="pytorch", depends=("mkl >=2018",))
    b.conda_record("mkl", "2024.1.0", "h0000000_691", channel="defaults")
    text = f"ImportError: {b.site_packages}/torch/lib/libtorch_cpu.so: undefined symbol: iJIT_NotifyEvent"
    result = explain(text, ctx_for(b), target_reason="prefix")
    [d] = result.diagnoses
    assert d.root_cause is not None and d.root_cause.id == "mkl-ijit"
    assert [f.id for f in d.root_cause.confirmed_by] == ["TC105"]
    assert result.checks_run and "TC105" in result.checks_run
    assert not d.notes  # the path in the error is this env
    assert result.has_errors


def test_prefix_named_by_paths():
    [m] = recognise(WIN126.format(dll="shm.dll"))
    assert prefix_named_by(m) == "C:\\e"
    [m] = recognise("/home/u/envs/a/lib/python3.12/site-packages/torch/lib/libtorch_cpu.so: undefined symbol: x")
    assert prefix_named_by(m) == "/home/u/envs/a"
    assert same_place("C:\\Users\\Me\\env", "/mnt/c/users/me/env/")
    assert not same_place("C:\\a", "C:\\b")


# --- real wheels, real loader model ---------------------------------------------------------------------------


def _real_windows_env(tmp_path, version: str, runtime: str | None):
    builder = wl.windows_env(tmp_path)
    wl.install_torch(builder, version)
    if runtime:
        wl.install_runtime(builder.prefix, runtime)
    windows_dir = wl.fake_windows(tmp_path / "Windows")
    return builder, wl.context(builder.prefix, system_root=windows_dir, path="")


def _error_for(builder, dll: str) -> str:
    site = str(builder.site_packages).replace("/", "\\")
    return f'OSError: [WinError 126] 找不到指定的模块。 Error loading "{site}\\torch\\lib\\{dll}" or one of its dependencies.'  # noqa: E501


def _assert_root(ctx, builder, blamed: str, root: str, variant: str) -> None:
    [d] = explain(_error_for(builder, blamed), ctx).diagnoses
    assert d.root_cause is not None, [(c.id, c.status) for c in d.causes]
    assert d.root_cause.id == root
    assert d.root_cause.exact  # TC301 blames the same DLL as the error
    assert d.root_cause.confirmed_by[0].title.key == variant


@pytest.mark.realdata
def test_real_230_wheel_runtime_then_mkl(tmp_path):
    """torch 2.3.0 from PyPI in a conda env, the Windows loader model and TC301 name the root cause."""
    builder, ctx = _real_windows_env(tmp_path, "2.3.0", None)
    _assert_root(ctx, builder, "asmjit.dll", "vc-runtime-missing", "TC301.vc_runtime.title")
    # with the VC runtime in place, the same wheel fails on MKL (no mkl wheel installed), through shm.dll
    wl.install_runtime(builder.prefix, "msvc-runtime-14.44")
    ctx = wl.context(builder.prefix, system_root=tmp_path / "Windows", path="")
    _assert_root(ctx, builder, "shm.dll", "user-site-mkl", "TC301.mkl.title")


@pytest.mark.realdata
def test_real_240_wheel_libomp140(tmp_path):
    builder, ctx = _real_windows_env(tmp_path, "2.4.0", "msvc-runtime-14.44")
    _assert_root(ctx, builder, "fbgemm.dll", "libomp140-missing", "TC301.libomp140.title")


def test_env_without_torch_says_the_error_is_not_from_it(make_env):
    b = make_env(os="linux", layout="conda")
    text = "ImportError: libcudnn.so.9: cannot open shared object file: No such file or directory"
    [d] = explain(text, ctx_for(b)).diagnoses
    assert "explain.note.no_torch" in [n.key for n in d.notes]
    assert d.root_cause is None


def test_missing_typing_extensions_is_confirmed_by_tc209(make_env):
    from conda_torchcheck.cli.main import main

    b = make_env(layout="venv")
    b.pip_torch("2.13.0+cpu", requires=("typing-extensions>=4.10.0", "sympy>=1.13.3"))
    import io
    import json
    from contextlib import redirect_stdout

    out = io.StringIO()
    with redirect_stdout(out):
        main(["explain", "ModuleNotFoundError: No module named 'typing_extensions'", "-p", str(b.prefix), "--json"])
    doc = json.loads(out.getvalue())
    text = json.dumps(doc)
    assert "declared-dependency-missing" in text
    assert "TC209" in text
