"""TC100: torch is not installed in this environment, and the install command that fits it.

`import torch` fails there with ModuleNotFoundError, so "no problems" would be false. The command fits the env:
conda-forge's pytorch for a conda or pixi env (the pytorch channel is frozen at 2.5.1), pip with the right index
for a venv or a system Python. A Python no torch can be installed into (32-bit, or newer than the newest torch
supports) is a warning. CUDA or CPU follows the NVIDIA driver when this machine's driver can be read
(Linux, the env checked live); otherwise the CPU command, and the CUDA indexes to choose from by driver.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from conda_torchcheck.checks import Check
from conda_torchcheck.checks import commands as cmd
from conda_torchcheck.checks.context import CheckContext
from conda_torchcheck.findings import Finding, Fix, Severity, finding
from conda_torchcheck.inventory.layouts import externally_managed
from conda_torchcheck.inventory.model import SiteDir
from conda_torchcheck.knowledge import TorchRelease, parse_version, torch_releases
from conda_torchcheck.knowledge.cuda import family_minimum, toolkit_driver
from conda_torchcheck.knowledge.version import cuda_tag_version, release_key
from conda_torchcheck.messages import msg

#: 32-bit interpreters (PE x86, ELF i386/armv7): torch publishes no wheels for them
BITS32_ARCHES = frozenset({"x86", "i386", "i686", "armv7l", "armv7", "arm"})


def _latest_release(python: tuple[int, int] | None) -> tuple[str, TorchRelease, bool]:
    """(minor, row, python_supported): the newest known torch release, or the newest that supports ``python``
    when the newest does not (for a Python older than its minimum)."""
    ordered = torch_releases()
    newest = ordered[-1]
    if python is None:
        return newest.minor, newest, True
    for release in reversed(ordered):
        low, high = (release_key(v) for v in release.python)
        if low <= python <= high:
            return release.minor, release, True
    return newest.minor, newest, False


def _cuda_tag_for_driver(tags: list[str], driver: str, os_name: str) -> str | None:
    """The newest cuXY index of ``tags`` this driver runs: first by the toolkit's own driver (full support),
    else by the CUDA family's minimum (minor-version compatibility)."""
    have = parse_version(driver)
    if have is None:
        return None

    version_of = cuda_tag_version
    by_newest = sorted(tags, key=lambda t: release_key(version_of(t)), reverse=True)
    for tag in by_newest:
        need = toolkit_driver(version_of(tag), os_name)
        if need and have >= parse_version(need):
            return tag
    for tag in by_newest:
        need = family_minimum(version_of(tag).split(".")[0], os_name)
        if need and have >= parse_version(need):
            return tag
    return None


def _driver(ctx: CheckContext) -> tuple[str | None, str]:
    """This machine's NVIDIA driver, only where it is the env's machine (live Linux); and what the evidence
    says about it (the version, none found and where it looked, or why it was not read)."""
    from conda_torchcheck.inventory.host import RUNNING_OS

    if not ctx.host.live or ctx.env.os != "linux" or RUNNING_OS != "linux":
        return None, "not read (only this machine's, for a Linux env checked live)"
    from conda_torchcheck.checks.cuda_driver import read_driver

    facts = ctx.memo("cuda_driver", read_driver)
    if facts.version is None:
        return None, "none found (looked in " + ", ".join(facts.looked) + ")"
    return facts.version, facts.version


def run(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.torch.installed:
        return
    env = ctx.env
    python = env.python.major_minor
    minor, row, supported = _latest_release(python)
    driver, driver_text = _driver(ctx)
    pip_tags = [t for t in row.pip_cuda if t.startswith("cu")]
    cuda_tag = _cuda_tag_for_driver(pip_tags, driver, env.os) if driver and env.os in ("linux", "windows") else None
    cuda_pin = None
    if cuda_tag is None and driver and env.os in ("linux", "windows") and not row.pip_cuda_known:
        # the newest row names only some of its CUDA builds: the newest release known to have one this driver runs
        cuda_pin, cuda_tag = _older_cuda_build(minor, python, driver, env.os)
    py_text = ".".join(map(str, python)) if python else None
    evidence = {
        "python": py_text,
        "newest_known_torch": minor,
        "nvidia_driver": driver_text,
        **({"cuda_build": cuda_tag} if cuda_tag else {}),
        **({"cuda_build_torch": cuda_pin} if cuda_pin else {}),
    }
    if env.python.arch in BITS32_ARCHES:
        # no torch release has wheels for a 32-bit Python: pip sees none (or PyPI's 0.1.2 placeholders)
        yield finding(
            "TC100",
            Severity.WARNING,
            variant="python_32bit",
            evidence={**evidence, "python_arch": env.python.arch},
            fixes=[Fix("system", msg("TC100.fix_python_64bit"))],
            python=py_text or "?",
            arch=env.python.arch,
        )
        return
    fixes = list(_fixes(ctx, minor, row, supported, cuda_tag, pip_tags, driver, cuda_pin))
    variant = "python_unsupported" if not supported else "missing"
    unread = _torch_this_python_ignores(env, ctx.host) if supported else None
    if unread is not None:
        site, why = unread
        variant = "site_off" if site.kind == "env" else "other_python"
        evidence = {**evidence, "torch_found_in": site.path, "not_on_sys_path": why}
        if variant == "site_off" and env.path_file is not None:
            fixes = [Fix("file", msg("TC100.fix_import_site", pth=cmd.native_path(env, env.path_file.path)))]
    if env.layout == "embedded" and variant != "site_off" and env.dist("pip") is None:
        # python.org's embeddable package ships without pip (ComfyUI's build adds it): get-pip.py first
        py = cmd.quote(cmd.python_path(env))
        get_pip = ("curl -L -o get-pip.py https://bootstrap.pypa.io/get-pip.py", f"{py} get-pip.py")
        fixes.insert(0, Fix("pip", msg("TC100.fix_get_pip"), commands=get_pip))
    long_path = _long_install_path(env)
    if long_path is not None:
        fixes.insert(0, _long_paths_fix(*long_path))
        evidence = {**evidence, "install_folder": long_path[0], "longest_torch_path": long_path[1]}
    if env.manager == "uv" and env.layout == "system" and externally_managed(env.prefix, env.os, python):
        fixes = [_uv_python_venv(env, fix) for fix in fixes]
    # a Python the newest torch does not support cannot get torch at all: a problem, not only a fact
    yield finding(
        "TC100",
        Severity.WARNING if not supported else Severity.INFO,
        variant=variant,
        evidence=evidence,
        fixes=fixes,
        prefix=str(env.prefix),
        python=py_text or "?",
        python_exe=cmd.python_path(env),
        found=cmd.native_path(env, unread[0].path) if unread else "",
        reason=unread[1] if unread else "",
        minor=minor,
        low=row.python[0],
        high=row.python[1],
    )


def _torch_this_python_ignores(env, host=None) -> tuple[SiteDir, str] | None:
    """A folder holding torch that this Python does not read, and why: an embedded Python's ._pth leaves out the
    user site and PYTHONPATH (a ``pip install`` run with another Python's pip put torch there) and, without
    ``import site``, its own Lib\\site-packages; a venv without system site packages leaves out the user site."""
    from conda_torchcheck.checks.shadowing import torch_package_in

    for site in env.site_dirs:
        if site.active or not site.note or site.kind not in ("env", "user", "pythonpath"):
            continue
        if torch_package_in(env, site.path) is not None:
            return site, site.note
    if env.layout == "embedded" and host is not None:
        return _torch_of_a_python_on_path(env, host)
    return None


def _torch_of_a_python_on_path(env, host) -> tuple[SiteDir, str] | None:
    """The site-packages of another Python on PATH (its folder or its Scripts folder, where its pip.exe is)
    that holds torch: where a bare ``pip install torch`` typed beside an embedded Python puts it."""
    from conda_torchcheck.checks.shadowing import torch_package_in
    from conda_torchcheck.inventory.fs import find_child, find_path

    for entry in host.path_list("PATH", ";"):
        folder = Path(entry)
        home = folder.parent if folder.name.lower() == "scripts" else folder
        if home == env.prefix or find_child(home, "python.exe") is None:
            continue
        site = find_path(home, "Lib", "site-packages")
        if site is not None and torch_package_in(env, site) is not None:
            exe = cmd.native_path(env, home / "python.exe")
            return SiteDir(site, "other", False), f"the site-packages of {exe}, the Python first on PATH"
    return None


#: the longest file path in torch's Windows wheels, relative to site-packages: torch 2.15.0's
#: torch-2.15.0.dist-info/licenses/third_party/cudnn_frontend/.../LICENSE.Apache-2.0 (126 characters; torch 2.4.0's
#: longest, a torch/include/ATen/ops header, is 117), read from the wheels tests/realdata.py pins
TORCH_LONGEST_PATH = 126
#: Windows' MAX_PATH, 260 characters with the terminating NUL, unless long paths are enabled (Microsoft Learn,
#: "Maximum Path Length Limitation": the LongPathsEnabled value and the application's manifest, which
#: python.exe has since 3.6)
MAX_PATH = 260
LONG_PATHS_COMMAND = (
    r"reg add HKLM\SYSTEM\CurrentControlSet\Control\FileSystem /v LongPathsEnabled /t REG_DWORD /d 1 /f"
)


def _long_install_path(env) -> tuple[str, int] | None:
    """(the folder pip installs torch into, the longest path it writes) on Windows when that path does not fit
    in MAX_PATH: a Microsoft Store Python's user site under its package's LocalCache is long enough by itself
    that pip fails with "[Errno 2] No such file or directory" and its Long Path hint midway through torch."""
    if not env.is_windows:
        return None
    # a Store Python installs into its user site (the install folder is read-only)
    kinds = ("user",) if env.layout == "store" else ("env",)
    for kind in kinds:
        site = next((s for s in env.site_dirs if s.kind == kind), None)
        if site is None:
            continue
        folder = cmd.native_path(env, site.path)
        longest = len(folder) + 1 + TORCH_LONGEST_PATH
        return (folder, longest) if longest >= MAX_PATH else None
    return None


def _long_paths_fix(folder: str, longest: int) -> Fix:
    return Fix(
        "system",
        msg("TC100.fix_long_paths", folder=folder, longest=longest, limit=MAX_PATH - 1),
        commands=(LONG_PATHS_COMMAND,),
        needs_admin=True,
    )


def _uv_python_venv(env, fix: Fix) -> Fix:
    """A uv-managed Python is marked EXTERNALLY-MANAGED (pip and uv refuse to install into it): the same
    install, into a venv made from it."""
    venv = ".venv"
    py = cmd.quote(cmd.python_path(env))
    commands = [f"uv venv --python {py} {venv}"]
    for command in fix.commands:
        args = command.split(" -m pip ", 1)[1] if " -m pip " in command else None
        commands.append(f"uv pip {args} --python {venv}" if args else command)
    return Fix(fix.kind, msg("TC100.fix_uv_python_venv", then=fix.summary), commands=tuple(commands))


def _older_cuda_build(
    newest: str, python: tuple[int, int] | None, driver: str, os_name: str
) -> tuple[str | None, str | None]:
    """(``"X.Y.*"``, tag): the CUDA build this driver runs of the newest release before ``newest`` whose every
    CUDA build the tables list, when it supports ``python``; (None, None) otherwise."""
    complete = [r for r in torch_releases() if r.minor != newest and r.pip_cuda_known and r.pip_cuda]
    if not complete or (python is not None and not complete[-1].supports_python(python)):
        return None, None
    tag = _cuda_tag_for_driver([t for t in complete[-1].pip_cuda if t.startswith("cu")], driver, os_name)
    return (f"{complete[-1].minor}.*", tag) if tag else (None, None)


def _fixes(ctx, minor, row, supported, cuda_tag, pip_tags, driver, cuda_pin=None) -> Iterator[Fix]:
    env = ctx.env
    pin = None if minor == _latest_release(None)[0] else f"{minor}.*"
    if env.layout in ("conda", "pixi"):
        yield from _conda_fixes(ctx, pin, None if driver is None else _cuda_family_ok(driver))
        return
    torch_spec = f"torch=={pin}" if pin else "torch"
    if env.os == "darwin":
        if env.python.arch == "x86_64":
            # torch 2.2.2 was the last release with macOS x86_64 wheels
            yield Fix("pip", msg("TC100.fix_mac_x86"), commands=(cmd.pip(env, 'install "torch==2.2.2"'),))
            return
        yield Fix("pip", msg("TC100.fix_pip_mac"), commands=(cmd.pip(env, f"install {cmd.spec(torch_spec)}"),))
        return
    cpu = cmd.pip(env, f"install {cmd.spec(torch_spec)} --index-url {cmd.pip_index_url('cpu')}")
    if cuda_tag is not None:
        cuda_spec = f"torch=={cuda_pin}" if cuda_pin else torch_spec
        cuda = cmd.pip(env, f"install {cmd.spec(cuda_spec)} --index-url {cmd.pip_index_url(cuda_tag)}")
        yield Fix("pip", msg("TC100.fix_pip_cuda", tag=cuda_tag, driver=driver), commands=(cuda,))
        yield Fix("pip", msg("TC100.fix_pip_cpu_also"), commands=(cpu,))
        return
    if driver is not None:
        yield Fix("pip", msg("TC100.fix_pip_cpu_old_driver", driver=driver), commands=(cpu,))
        return
    yield Fix("pip", msg("TC100.fix_pip_cpu"), commands=(cpu,))
    if pip_tags:
        pick = pip_tags[-1]
        example = cmd.pip(env, f"install {cmd.spec(torch_spec)} --index-url {cmd.pip_index_url(pick)}")
        yield Fix("pip", msg("TC100.fix_pip_cuda_choose", tags=", ".join(pip_tags)), commands=(example,))


def _cuda_family_ok(driver: str) -> bool:
    """Whether the driver runs conda-forge's CUDA 12 builds (``__cuda >= 12``: minor-version compatibility)."""
    need = family_minimum("12", "linux")
    have = parse_version(driver)
    return have is not None and have >= parse_version(need)


def _conda_fixes(ctx, pin: str | None, cuda: bool | None) -> Iterator[Fix]:
    """conda-forge's pytorch; ``cuda``: the driver runs its CUDA builds (None: the driver could not be read)."""
    env = ctx.env
    version = f"={pin}" if pin else ""
    if env.os == "darwin":
        variants = {"mac": f"pytorch{version}"}
    else:
        # CPU first: it runs on every machine; the CUDA build needs a driver this tool could not read
        variants = {"cpu": f"pytorch{version or '=*'}=cpu*", "cuda": f"pytorch{version or '=*'}=cuda*"}
        if cuda is not None:
            variants = {k: v for k, v in variants.items() if (k == "cuda") == cuda}
    for i, (variant, spec) in enumerate(variants.items()):
        key = f"TC100.fix_conda_{variant}" + ("_unknown_driver" if cuda is None and variant == "cuda" else "")
        if env.layout == "pixi":
            package = {"cuda": "pytorch-gpu", "cpu": "pytorch-cpu", "mac": "pytorch"}[variant]
            commands: tuple[str, ...] = (f'pixi add "{package}=={pin}"' if pin else f"pixi add {package}",)
        elif env.is_base:
            py = env.python.major_minor
            python_spec = f"python={py[0]}.{py[1]}" if py else "python"
            create = f"conda create -n torch -c conda-forge {python_spec} {cmd.spec(spec)}"
            commands = (create, "conda activate torch")
            key = "TC100.fix_conda_new_env" if i == 0 else key
        else:
            commands = (cmd.conda_install(env, [spec]),)
        yield Fix("conda", msg(key), commands=commands)


CHECK = Check.declared(__name__, run)
