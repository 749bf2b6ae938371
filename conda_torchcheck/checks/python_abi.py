"""TC111: torch was built for another Python than the env's interpreter.

Python loads an extension module only if its file name ends with one of the running interpreter's
EXTENSION_SUFFIXES. A ``_C.cpython-311-x86_64-linux-gnu.so`` is invisible to Python 3.12: ``torch._C`` then
resolves to the ``torch/_C`` stub folder and torch raises ``ImportError: Failed to load PyTorch C
extensions``. Also reported: torch left in ``lib/python3.11/site-packages`` after the env's Python was
upgraded (``conda install python=3.12`` does not move pip's packages), so Python 3.12 does not see it.

On Windows the same mismatch first fails torch_python.dll's import of ``python3XY.dll`` (TC301).

Also (variant ``capi``): the interpreter's patch release is older than a C-API function torch's binaries call.
PySlice_Unpack and PySlice_AdjustIndices arrived in Python 3.6.1 (and 3.5.4): CPython's headers from then on turn
PySlice_GetIndicesEx into calls of them, so a torch built with those headers fails under Python 3.6.0 with
``undefined symbol: PySlice_Unpack`` (``Symbol not found: _PySlice_Unpack`` on macOS). Only the env's own binaries
show it: their undefined symbols (ELF, Mach-O) or python3X.dll imports (PE: Windows, where only this variant
runs) are read when the interpreter's release lacks one of these.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

from conda_torchcheck.checks import Check
from conda_torchcheck.checks import commands as cmd
from conda_torchcheck.checks.context import CheckContext
from conda_torchcheck.findings import Finding, Fix, Severity, finding
from conda_torchcheck.inventory import fs
from conda_torchcheck.inventory.model import Environment
from conda_torchcheck.knowledge import known_torch_minors, torch_release
from conda_torchcheck.lazy_re import LazyPattern
from conda_torchcheck.messages import msg

_BUILT_FOR = LazyPattern(r"\.(?:cpython-|cp)(\d)(\d+)(t?)m?[-.]")
_STRANDED_SITE = LazyPattern(r"^python(\d)\.(\d+)(t?)$")

#: C-API function -> (major, minor) -> the first patch release of that minor that has it (CPython docs:
#: "Added in version 3.6.1"; bpo-27867 backported both to 3.5.4). Minors before 3.5 lack them altogether.
CAPI_SINCE: dict[str, dict[tuple[int, int], tuple[int, int, int]]] = {
    "PySlice_Unpack": {(3, 5): (3, 5, 4), (3, 6): (3, 6, 1)},
    "PySlice_AdjustIndices": {(3, 5): (3, 5, 4), (3, 6): (3, 6, 1)},
}
_PATCH = LazyPattern(r"^(\d+)\.(\d+)\.(\d+)")


def extension_suffixes(env: Environment) -> tuple[str, ...]:
    """The interpreter's importlib.machinery.EXTENSION_SUFFIXES, derived from the inventory."""
    mm = env.python.major_minor
    if mm is None:
        return ()
    t = "t" if env.python.free_threaded else ""
    abi3 = () if t else (".abi3.so",)
    if env.os == "windows":
        plat = {"x86_64": "win_amd64", "x86": "win32", "arm64": "win_arm64"}.get(env.python.arch or "", "win_amd64")
        return (f".cp{mm[0]}{mm[1]}{t}-{plat}.pyd", ".pyd")
    # Python 3.4-3.7's SOABI carries the pymalloc flag: cpython-36m (PEP 3149; dropped in 3.8)
    flags = t or ("m" if (3, 4) <= mm < (3, 8) else "")
    if env.os == "darwin":
        return (f".cpython-{mm[0]}{mm[1]}{flags}-darwin.so", *abi3, ".so")
    arch = env.python.arch or "x86_64"
    return (f".cpython-{mm[0]}{mm[1]}{flags}-{arch}-linux-gnu.so", *abi3, ".so")


def _compiled_c_modules(package_dir: Path) -> list[str]:
    try:
        return sorted(n for n in os.listdir(package_dir) if n.startswith("_C.") and n.endswith((".so", ".pyd")))
    except OSError:
        return []


def _python_of(name: str) -> str | None:
    m = _BUILT_FOR.search(name)
    return f"{m.group(1)}.{m.group(2)}{m.group(3)}" if m else None


def _supporting_minor(mm: tuple[int, int]) -> str | None:
    for minor in known_torch_minors():
        release = torch_release(minor + ".0")
        if release is not None and release.supports_python(mm):
            return minor
    return None


def _lacking(version: str | None) -> dict[str, str]:
    """C-API function -> the release that brought it, for those this interpreter's release lacks."""
    m = _PATCH.match(version or "")
    if m is None:
        return {}
    running = (int(m.group(1)), int(m.group(2)), int(m.group(3)))
    out = {}
    for name, since in CAPI_SINCE.items():
        first = since.get(running[:2])
        if first is not None and running < first:
            out[name] = ".".join(map(str, first))
    return out


def _torch_binaries(package_dir: Path) -> list[Path]:
    """torch's compiled _C module and libtorch_python, the binaries that call the Python C API."""
    found = [package_dir / n for n in _compiled_c_modules(package_dir)]
    lib = package_dir / "lib"
    names = ("libtorch_python.so", "libtorch_python.dylib", "torch_python.dll")
    found += [lib / n for n in names if fs.is_file(lib / n)]
    return found


_PYTHON_DLL = LazyPattern(r"^python3\d*\.dll$", re.IGNORECASE)


def _undefined_names(path: Path) -> set[str]:
    """The undefined symbols of an ELF or Mach-O file (C names, without Mach-O's leading underscore)."""
    try:
        with fs.open_binary(path) as fh:
            magic = fh.read(4)
    except OSError:
        return set()
    if magic[:2] == b"MZ":  # Windows: the functions imported from python3X.dll
        from conda_torchcheck.binaries import pe

        info = pe.read_pe(path, symbols=lambda dll: bool(_PYTHON_DLL.match(dll)), version=False)
        if not isinstance(info, pe.PEInfo):
            return set()
        return {
            sym.name
            for dll in info.imports
            if _PYTHON_DLL.match(dll.name)
            for sym in dll.symbols or ()
            if sym.name is not None
        }
    if magic == b"\x7fELF":
        from conda_torchcheck.binaries import elf

        info = elf.read_elf(path)
        symbols = elf.read_symbols(info) if isinstance(info, elf.ElfFile) else None
        if not isinstance(symbols, elf.Symbols):
            return set()
        return {ref[0].decode("utf-8", "replace") for ref in symbols.refs}
    from conda_torchcheck.binaries import macho

    info = macho.read_macho(path)
    if not isinstance(info, macho.MachOFile):
        return set()
    names: set[str] = set()
    for sl in info.slices:
        undefined = macho.read_undefined(path, sl)
        if isinstance(undefined, tuple):
            names.update(n[1:] if n.startswith("_") else n for n, _, _ in undefined)
    return names


def _capi_finding(ctx: CheckContext) -> Finding | None:
    env, t = ctx.env, ctx.torch
    lacking = _lacking(env.python.version)
    if not lacking or t.package_dir is None:
        return None
    for path in _torch_binaries(t.package_dir):
        names = _undefined_names(path)
        calls = [n for n in lacking if n in names]  # CAPI_SINCE's order: PySlice_Unpack, the name reports show
        if not calls:
            continue
        since = max(lacking[n] for n in calls)
        mm = env.python.major_minor or (3, 0)
        text = msg("TC111.fix.capi", since=since, minor=f"{mm[0]}.{mm[1]}")
        if env.layout in ("conda", "pixi"):
            spec = f"python>={since},<{mm[0]}.{mm[1] + 1}"
            fix = Fix("conda", text, commands=(cmd.conda_install(env, [spec]),))
        else:
            fix = Fix("system", text)  # a venv's Python is its base interpreter: upgrade that, recreate the venv
        return finding(
            "TC111",
            Severity.ERROR,
            variant="capi",
            torch=t.version or "?",
            symbol=calls[0],
            python=env.python.version,
            since=since,
            evidence={
                "binary": str(path),
                "calls": calls,
                "interpreter": f"Python {env.python.version} ({env.python.version_source})",
                "first release with them": since,
            },
            fixes=[fix],
        )
    return None


def _fixes(ctx: CheckContext) -> list[Fix]:
    env, t = ctx.env, ctx.torch
    mm = env.python.major_minor
    version = cmd.base_version(t.version)
    release = torch_release(t.version) if t.version else None
    if t.source == "conda" and t.conda_record is not None:
        return [
            Fix(
                "conda",
                msg("TC111.fix.conda"),
                commands=(cmd.conda_install(env, ["pytorch"], extra=["--force-reinstall"]),),
            )
        ]
    if release is not None and mm is not None and release.supports_python(mm) and version:
        spec = f"torch=={version}"
    else:
        first = _supporting_minor(mm) if mm else None
        spec = f"torch>={first}" if first else "torch"
    local = t.dist.local_version if t.dist is not None else None
    index = f" --index-url {cmd.pip_index_url(local)}" if local else ""  # keep the variant (cpu, cu126 ...)
    command = cmd.pip(env, f"install --force-reinstall {cmd.spec(spec)}{index}", dist=t.dist)
    return [Fix("pip", msg("TC111.fix.pip", spec=spec), commands=(command,))]


def run(ctx: CheckContext) -> Iterator[Finding]:
    env, t = ctx.env, ctx.torch
    mm = env.python.major_minor
    if mm is None:
        return
    running = f"{mm[0]}.{mm[1]}{'t' if env.python.free_threaded else ''}"
    if env.os == "windows":
        # another minor's torch first fails torch_python.dll's import of python3XY.dll there (TC301); an older
        # patch release of the right minor lacks functions of python3X.dll (the loader reports a DLL not found)
        capi = _capi_finding(ctx)
        if capi is not None:
            yield capi
        return
    if t.package_dir is not None:
        modules = _compiled_c_modules(t.package_dir)
        suffixes = extension_suffixes(env)
        # the file name must be exactly "_C" + one suffix: "_C.cpython-311-....so" does not count as "_C" + ".so"
        if modules and suffixes and not any(n == "_C" + sfx for n in modules for sfx in suffixes):
            built_for = sorted({p for p in map(_python_of, modules) if p}) or ["?"]
            yield finding(
                "TC111",
                Severity.ERROR,
                variant="extension",
                torch=t.version or "?",
                built_for=", ".join(built_for),
                python=running,
                evidence={
                    "torch": str(t.package_dir),
                    "compiled modules": modules,
                    "this interpreter loads": list(suffixes),
                    "interpreter": f"Python {env.python.version} ({env.python.version_source})",
                },
                fixes=_fixes(ctx),
            )
            return
        capi = _capi_finding(ctx)
        if capi is not None:
            yield capi
        return
    if env.os == "windows":
        return  # Lib\site-packages is shared by every Python version of the install
    # not on the import path: left behind in another Python's site-packages after an upgrade?
    for lib in ("lib", "lib64"):
        try:
            names = os.listdir(env.prefix / lib)
        except OSError:
            continue
        for name in sorted(names):
            m = _STRANDED_SITE.match(name)
            if not m or (int(m.group(1)), int(m.group(2))) == mm:
                continue
            stranded = env.prefix / lib / name / "site-packages" / "torch"
            if fs.exists(stranded / "__init__.py"):
                py = f"{m.group(1)}.{m.group(2)}{m.group(3)}"
                dist = next(iter(sorted(stranded.parent.glob("torch-*.dist-info"))), None)
                yield finding(
                    "TC111",
                    Severity.ERROR,
                    variant="stranded",
                    built_for=py,
                    python=running,
                    path=str(stranded),
                    evidence={
                        "torch left in": str(stranded),
                        "installed by": (dist.name if dist else "?"),
                        "this interpreter reads": str(env.env_site) if env.env_site else "?",
                    },
                    fixes=[
                        Fix(
                            "pip",
                            msg("TC111.fix.stranded", python=running),
                            commands=(cmd.pip(env, "install torch"),),
                        )
                    ],
                )
                return


CHECK = Check.declared(__name__, run)
