"""TC501/TC502/TC503: the NVIDIA driver and GPU of the machine against a CUDA build of torch.

A torch CUDA build carries its own CUDA runtime; from the machine it needs a driver of the same CUDA major
family (minor-version compatibility: 12.x needs >= 525.60.13 on Linux, 13.x >= 580.65.06) and a GPU whose
compute capability the build has kernels for. The driver is read, in order, from NVML (nvidia-ml-py, when it
is installed alongside this tool), ``/proc/driver/nvidia/version``, ``/sys/module/nvidia/version`` and the
file name of ``libcuda.so.<version>``. The machine the tool runs on is read, or, for an env examined from
elsewhere, the root of the machine it runs on given as ``--system-root`` (a mounted image, a copy of its /proc).
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
from conda_torchcheck.knowledge import minor_of, parse_version, torch_release
from conda_torchcheck.knowledge.cuda import (
    arch_build,
    arch_suggestion,
    family_minimum,
    family_minimums,
    gpu_capabilities,
)
from conda_torchcheck.lazy_re import LazyPattern
from conda_torchcheck.messages import msg
from conda_torchcheck.records import Record

#: the file-system root the driver is read from (tests point it at a fake tree)
ROOT = Path("/")
#: an NVIDIA driver release in a version string (550.54.14, 535.104)
DRIVER_VERSION = LazyPattern(r"(?<![\d.])(\d{3,4}\.\d{1,3}(?:\.\d{1,3})?)(?![\d.])")


class Gpu(Record):
    __slots__ = ("name", "capability", "source")

    def __init__(self, name: str, capability: str | None, source: str) -> None:
        self.name = name
        #: "9.0"
        self.capability = capability
        self.source = source


class DriverFacts(Record):
    __slots__ = ("version", "source", "gpus", "looked")

    def __init__(
        self, version: str | None, source: str | None, gpus: tuple[Gpu, ...] = (), looked: tuple[str, ...] = ()
    ) -> None:
        self.version = version
        self.source = source
        self.gpus = gpus
        self.looked = looked


def read_driver(root: Path | None = None, *, use_nvml: bool = True) -> DriverFacts:
    root = ROOT if root is None else root
    looked: list[str] = []
    if use_nvml and root == Path("/"):
        facts = _from_nvml()
        looked.append("NVML")
        if facts is not None:
            return facts
    gpus = _gpus_from_proc(root)
    for rel in ("proc/driver/nvidia/version", "sys/module/nvidia/version"):
        path = root / rel
        looked.append("/" + rel)
        try:
            text = fs.read_text(path, fs.SMALL_LIMIT)
        except OSError:
            continue
        m = DRIVER_VERSION.search(text.split("\n", 1)[0] if rel.startswith("proc") else text)
        if m:
            return DriverFacts(m.group(1), "/" + rel, gpus, tuple(looked))
    for libdir in ("usr/lib/x86_64-linux-gnu", "usr/lib64", "usr/lib/aarch64-linux-gnu", "usr/lib", "lib64"):
        d = root / libdir
        looked.append(f"/{libdir}/libcuda.so.*")
        try:
            names = os.listdir(d)
        except OSError:
            continue
        for name in sorted(names):
            m = re.fullmatch(r"libcuda\.so\.(\d{3,4}\.\d+(?:\.\d+)?)", name)
            if m:
                return DriverFacts(m.group(1), f"/{libdir}/{name}", gpus, tuple(looked))
    # WSL 2: the Windows driver's libcuda, mapped in without a version in its name (and no /proc entry)
    from conda_torchcheck.inventory.wsl import bridge_libcuda

    bridge = bridge_libcuda(root)
    looked.append("/usr/lib/wsl/lib/libcuda.so.1")
    if bridge is not None:
        return DriverFacts(None, "/" + str(bridge.relative_to(root)), gpus, tuple(looked))
    return DriverFacts(None, None, gpus, tuple(looked))


def _from_nvml() -> DriverFacts | None:
    try:
        import pynvml  # nvidia-ml-py, when installed next to this tool
    except ImportError:
        return None
    try:
        pynvml.nvmlInit()
    except Exception:
        return None
    try:
        version = pynvml.nvmlSystemGetDriverVersion()
        version = version.decode() if isinstance(version, bytes) else str(version)
        gpus = []
        for i in range(pynvml.nvmlDeviceGetCount()):
            handle = pynvml.nvmlDeviceGetHandleByIndex(i)
            name = pynvml.nvmlDeviceGetName(handle)
            name = name.decode() if isinstance(name, bytes) else str(name)
            try:
                major, minor = pynvml.nvmlDeviceGetCudaComputeCapability(handle)
                cc = f"{major}.{minor}"
            except Exception:
                cc = capability_of(name)
            gpus.append(Gpu(name, cc, "NVML"))
        return DriverFacts(version, "NVML", tuple(gpus), ("NVML",))
    except Exception:
        return None
    finally:
        try:
            pynvml.nvmlShutdown()
        except Exception:
            pass


def _gpus_from_proc(root: Path) -> tuple[Gpu, ...]:
    base = root / "proc" / "driver" / "nvidia" / "gpus"
    try:
        entries = sorted(os.listdir(base))
    except OSError:
        return ()
    gpus = []
    for entry in entries:
        try:
            text = fs.read_text(base / entry / "information", fs.SMALL_LIMIT)
        except OSError:
            continue
        m = re.search(r"^Model:\s*(.+)$", text, re.M)
        if m:
            name = m.group(1).strip()
            gpus.append(Gpu(name, capability_of(name), f"/proc/driver/nvidia/gpus/{entry}/information"))
    return tuple(gpus)


def capability_of(name: str) -> str | None:
    """Compute capability from a model name (knowledge/cuda_arch.toml ``gpus``, longest match first)."""
    table = gpu_capabilities()
    upper = name.upper()
    for model in sorted(table, key=len, reverse=True):
        if re.search(r"(?<![A-Z0-9])" + re.escape(model.upper()) + r"(?![0-9])", upper):
            return table[model]
    return None


def machine_root(ctx: CheckContext) -> Path | None:
    """The root of the Linux machine the env runs on: ``--system-root`` when given, this machine's / when the env
    is this machine's (live), else None (nothing about that machine can be read)."""
    if ctx.host.system_root is not None:
        return ctx.host.system_root
    return ROOT if ctx.host.live else None


def run(ctx: CheckContext) -> Iterator[Finding]:
    torch = ctx.torch
    root = machine_root(ctx)
    if torch.variant != "cuda" or not torch.cuda_version or root is None:
        return
    facts = ctx.memo("cuda_driver", lambda: read_driver(root))
    family = torch.cuda_version.split(".")[0]
    if facts.version is None and not facts.gpus and facts.source is None:
        from conda_torchcheck.inventory.wsl import wsl_version

        if wsl_version(root) is not None:
            return  # WSL: TC505 says what is missing there (a Linux driver is not the answer)
        yield finding(
            "TC502",
            Severity.INFO,
            cuda=torch.cuda_version,
            looked=", ".join(facts.looked),
            evidence={"torch_cuda": torch.cuda_version, "looked_at": list(facts.looked)},
            fixes=_cpu_fix(ctx),
        )
        return
    if facts.version is not None:
        minimum = family_minimum(family, "linux")
        have, need = parse_version(facts.version), parse_version(minimum)
        if have is not None and need is not None and have < need:
            fixes = [Fix("system", msg("TC501.fix.driver", minimum=minimum), needs_admin=True)]
            older = _older_build(ctx, have)
            if older is not None:
                fixes.append(older)
            yield finding(
                "TC501",
                Severity.ERROR,
                driver=facts.version,
                cuda=torch.cuda_version,
                minimum=minimum,
                family=family,
                source=facts.source,
                evidence={
                    "driver": facts.version,
                    "read_from": facts.source,
                    "torch_cuda": torch.cuda_version,
                    "family_minimum": minimum,
                    "gpus": [g.name for g in facts.gpus],
                },
                fixes=fixes,
            )
    yield from _architectures(ctx, facts)


def _cpu_fix(ctx: CheckContext) -> list[Fix]:
    torch = ctx.torch
    if torch.dist is None or torch.source != "pip":
        return []
    version = cmd.base_version(torch.version)
    target = f'"torch=={version}"' if version else "torch"
    command = cmd.pip(
        ctx.env, f"install --force-reinstall {target} --index-url {cmd.pip_index_url('cpu')}", dist=torch.dist
    )
    return [Fix("pip", msg("TC502.fix.cpu"), commands=(command,))]


def _older_build(ctx: CheckContext, driver, column: str = "linux") -> Fix | None:
    """A pip build of this torch release for a CUDA family the driver does support (``column``: the OS column of
    the minimum table; Windows' TC313 uses "windows")."""
    torch = ctx.torch
    release = torch_release(torch.version)
    if release is None or torch.dist is None:
        return None
    supported = {fam for fam, row in family_minimums().items() if (v := parse_version(row.on(column))) and driver >= v}
    candidates = [tag for tag in release.pip_cuda if tag.startswith("cu") and tag[2:-1] in supported]
    if not candidates:
        return None
    tag = candidates[-1]
    version = cmd.base_version(torch.version)
    command = cmd.pip(
        ctx.env, f'install --force-reinstall "torch=={version}" --index-url {cmd.pip_index_url(tag)}', dist=torch.dist
    )
    return Fix("pip", msg("TC501.fix.older_build", older=f"{tag[2:-1]}.{tag[-1]}"), commands=(command,))


def build_archs(torch_version: str | None, cuda_version: str, arch: str | None) -> tuple[list[str], str | None] | None:
    build = arch_build(minor_of(torch_version), "cu" + cuda_version.replace(".", ""), aarch64=arch == "aarch64")
    if build is None:
        return None
    return list(build.archs), build.ptx


def _architectures(ctx: CheckContext, facts: DriverFacts) -> Iterator[Finding]:
    torch = ctx.torch
    if torch.source == "conda" or not facts.gpus:
        return
    build = build_archs(torch.version, torch.cuda_version or "", ctx.env.python.arch)
    if build is None:
        return
    archs, ptx = build
    for gpu in facts.gpus:
        if gpu.capability is None:
            continue
        verdict = supports(archs, ptx, gpu.capability)
        if verdict == "yes":
            continue
        cc = gpu.capability.replace(".", "")
        major = gpu.capability.split(".")[0]
        suggestion = arch_suggestion(major) or "a build whose architecture list includes sm_" + cc
        yield finding(
            "TC503",
            Severity.WARNING if verdict == "ptx" else Severity.ERROR,
            variant="ptx" if verdict == "ptx" else None,
            gpu=gpu.name,
            cc=cc,
            capability=gpu.capability,
            torch=torch.version,
            cuda=torch.cuda_version,
            arches=" ".join("sm_" + a.replace(".", "") for a in archs) + (f" (+PTX {ptx})" if ptx else ""),
            source="RELEASE.md support matrix",
            evidence={
                "gpu": gpu.name,
                "capability": gpu.capability,
                "read_from": gpu.source,
                "build_architectures": archs,
                "ptx": ptx,
            },
            fixes=[Fix("pip" if torch.dist is not None else "conda", msg("TC503.fix", suggestion=suggestion))],
        )


def supports(archs: list[str], ptx: str | None, capability: str) -> str:
    """'yes' (a cubin for this GPU or an older minor of its major), 'ptx' (JIT from older PTX) or 'no'."""
    cap = parse_version(capability)
    if cap is None:
        return "yes"
    for a in archs:
        v = parse_version(a)
        if v is not None and v.major == cap.major and v <= cap:
            return "yes"
    p = parse_version(ptx) if ptx else None
    if p is not None and p <= cap:
        return "ptx"
    return "no"


CHECK = Check.declared(__name__, run)
