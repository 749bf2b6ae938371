"""Fix commands written for *this* env: its prefix or name, its own python, the right channel or index URL.

Commands are shell text a user pastes. Paths are double-quoted (works in bash, zsh, cmd.exe). A Windows env
examined from WSL (``/mnt/c/...``) gets Windows paths, because that is where the commands will run.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterable

from conda_torchcheck.inventory.model import CondaRecord, Distribution, Environment
from conda_torchcheck.lazy_re import LazyPattern

PIP_INDEX = "https://download.pytorch.org/whl/{tag}"
#: conda options whose value is the next word (never a package spec)
CONDA_VALUED_OPTIONS = frozenset({"-p", "--prefix", "-n", "--name", "-c", "--channel"})
_WSL_DRIVE = LazyPattern(r"^/mnt/([a-zA-Z])(/.*)?$")


def native_path(env: Environment, path: object) -> str:
    """``path`` as the env's own OS writes it: ``C:\\x`` for a Windows env seen as ``/mnt/c/x`` from WSL. A
    Windows env copied elsewhere (``/data/env``) keeps the path it was examined at."""
    text = str(path)
    if not env.is_windows:
        return text
    m = _WSL_DRIVE.match(text)
    if m:
        return f"{m.group(1).upper()}:{m.group(2) or '/'}".replace("/", "\\")
    return text


def join_native(env: Environment, base: str, *parts: str) -> str:
    sep = "\\" if env.is_windows and "/" not in base else "/"
    return sep.join([base.rstrip("/\\"), *parts])


def prefix_text(env: Environment) -> str:
    return native_path(env, env.prefix)


def quote(text: str) -> str:
    return f'"{text}"'


def python_path(env: Environment) -> str:
    """The env's own interpreter: ``<prefix>/bin/python``, ``<prefix>\\python.exe`` or ``<prefix>\\Scripts\\...``;
    for a Microsoft Store Python its app-execution alias (the install folder under WindowsApps cannot be run by
    path: Windows answers "Access is denied"), which cmd.exe expands."""
    if env.layout == "store" and env.python.major_minor:
        mm = env.python.major_minor
        return f"%LOCALAPPDATA%\\Microsoft\\WindowsApps\\python{mm[0]}.{mm[1]}.exe"
    if env.is_windows:
        if env.python.executable is not None:
            return native_path(env, env.python.executable)
        parts = ("Scripts", "python.exe") if env.layout == "venv" else ("python.exe",)
        return join_native(env, prefix_text(env), *parts)
    return join_native(env, prefix_text(env), "bin", "python")


@functools.lru_cache(maxsize=32)
def _known_by_name(name: str, prefix: str) -> bool:
    """Whether ``conda -n NAME`` on this machine reaches ``prefix`` (same lookup conda does, without conda)."""
    from conda_torchcheck.errors import TargetError
    from conda_torchcheck.inventory.locate import resolve_name

    try:
        found = resolve_name(name)
    except TargetError:
        return False
    try:
        return os.path.samefile(found, prefix)
    except OSError:
        return os.path.normcase(os.path.abspath(found)) == os.path.normcase(prefix)


def conda_target(env: Environment) -> str:
    """``-n NAME`` when conda on this machine finds the env by that name, else ``-p "<prefix>"``."""
    if (
        env.name
        and env.layout == "conda"
        and re.fullmatch(r"[\w.+-]+", env.name)
        and _known_by_name(env.name, str(env.prefix))
    ):
        return f"-n {env.name}"
    return f"-p {quote(prefix_text(env))}"


def spec(text: str) -> str:
    """Quote a conda/pip spec when the shell would otherwise expand or redirect it (``*``, ``<``, ``>``)."""
    return quote(text) if re.search(r"[*<>|=!\s]", text) and not re.fullmatch(r"[\w.-]+==?[\w.+-]+", text) else text


def conda_install(
    env: Environment, specs: Iterable[str], *, channel: str | None = "conda-forge", extra: Iterable[str] = ()
) -> str:
    parts = ["conda", "install", conda_target(env)]
    if channel:
        parts += ["-c", channel]
    parts += list(extra)
    parts += [spec(s) for s in specs]
    return " ".join(parts)


def exact_conda_spec(rec: CondaRecord) -> str:
    """``conda-forge::pytorch=2.5.1=cuda126_…``: exactly the build a record describes (for a reinstall)."""
    channel = rec.channel if rec.channel not in ("unknown", "") and "://" not in rec.channel else None
    text = f"{rec.name}={rec.version}={rec.build}"
    return f"{channel}::{text}" if channel else text


def conda_remove(env: Environment, names: Iterable[str], *, force: bool = False) -> str:
    parts = ["conda", "remove", conda_target(env)]
    if force:
        parts.append("--force")  # remove only these records; leave the packages that depend on them
    return " ".join(parts + list(names))


def conda_env_var(env: Environment, assignment: str) -> str:
    return f"conda env config vars set {conda_target(env)} {assignment}"


def uses_uv(dist: Distribution | None, env: Environment | None = None) -> bool:
    """uv installs here: the dist was installed by uv, or the env is a uv venv (which has no pip of its own:
    ``uv venv`` seeds none)."""
    if env is not None and env.layout == "venv" and env.manager == "uv":
        return True
    return dist is not None and (dist.installer or "").strip().lower() == "uv"


def pip(env: Environment, args: str, *, dist: Distribution | None = None) -> str:
    """``"<python>" -m pip <args>`` (or ``uv pip <args> --python "<python>"`` for a uv venv or a uv-installed
    dist). An embedded Python's fix is its own python.exe's pip: a bare ``pip`` there is another Python's."""
    if env.manager == "colab":
        # a notebook cell: %pip installs into the kernel's own Python (IPython's documentation)
        return f"%pip {args}"
    py = quote(python_path(env))
    if uses_uv(dist, env):
        # uv never prompts before uninstalling and has no -y
        args = args.replace("uninstall -y ", "uninstall ")
        return f"uv pip {args} --python {py}"
    return f"{py} -m pip {args}"


def pip_index_url(tag: str) -> str:
    """``https://download.pytorch.org/whl/cu126`` for ``cu126``; ``.../whl/cpu`` for ``cpu``."""
    return PIP_INDEX.format(tag=tag)


def base_version(version: str | None) -> str | None:
    return version.split("+", 1)[0] if version else None


#: NVIDIA's own torch builds: NGC containers (``2.6.0a0+ecf3bae40a.nv25.02``) and JetPack wheels for Jetson
#: (``2.5.0a0+872d972e41.nv24.08``): a pre-release of the upstream version, the commit, ``nvYY.MM`` (the
#: container release; NVIDIA's PyTorch Release Notes and the Jetson "Installing PyTorch" guide)
_NVIDIA_BUILD = LazyPattern(r"^\d+\.\d+\.\d+a0\+[0-9a-f]+\.nv\d{2}\.\d{2}")

#: the source repositories of the family members a user builds against NVIDIA's torch
_FAMILY_SOURCES = {
    "torchvision": "https://github.com/pytorch/vision.git",
    "torchaudio": "https://github.com/pytorch/audio.git",
}


def nvidia_build(version: str | None) -> bool:
    """torch is NVIDIA's own build (NGC container, JetPack): PyPI has no such version, and pip must not replace
    it (the container's or JetPack's CUDA stack is what it was built for)."""
    return bool(version and _NVIDIA_BUILD.match(version))


def build_against_torch(env: Environment, name: str, version: str) -> str | None:
    """Build ``name`` ``version`` (``0.21`` or ``0.21.0``) from source against the torch installed here,
    without letting pip touch torch: how NVIDIA's Jetson guide and NGC users get a matching torchvision."""
    source = _FAMILY_SOURCES.get(name)
    if source is None:
        return None
    tag = f"v{version}.0" if version.count(".") == 1 else f"v{version}"
    return pip(env, f'install --no-build-isolation --no-deps "git+{source}@{tag}"')


def operands(words: Iterable[str], valued: frozenset[str]) -> list[str]:
    """The words of a command line that are neither options nor the values of the options in ``valued``: the
    package specs of ``conda install ...`` or ``pip install ...`` (read back by the plan and the guard's advice)."""
    out: list[str] = []
    skip = False
    for word in words:
        if skip:
            skip = False
            continue
        if word.startswith("-"):
            skip = word in valued
            continue
        out.append(word)
    return out
