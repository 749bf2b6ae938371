"""TC100: torch is not installed in this environment, and the install command that fits it.

`import torch` fails there with ModuleNotFoundError, so "no problems" would be false. The command fits the env:
conda-forge's pytorch for a conda or pixi env (the pytorch channel is frozen at 2.5.1), pip with the right index
for a venv or a system Python. A Python no torch can be installed into (32-bit, or newer than the newest torch
supports) is a warning. CUDA or CPU follows the NVIDIA driver when this machine's driver can be read
(Linux, the env checked live); otherwise the CPU command, and the CUDA indexes to choose from by driver.
"""

from __future__ import annotations

from collections.abc import Iterator

from conda_torchcheck.checks import Check
from conda_torchcheck.checks import commands as cmd
from conda_torchcheck.checks.context import CheckContext
from conda_torchcheck.findings import Finding, Fix, Severity, finding
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
    # a Python the newest torch does not support cannot get torch at all: a problem, not only a fact
    yield finding(
        "TC100",
        Severity.WARNING if not supported else Severity.INFO,
        variant=variant,
        evidence=evidence,
        fixes=fixes,
        prefix=str(env.prefix),
        python=py_text or "?",
        minor=minor,
        low=row.python[0],
        high=row.python[1],
    )


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
