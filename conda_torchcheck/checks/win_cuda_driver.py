"""TC313: the NVIDIA driver of the Windows machine against a CUDA build of torch.

On Windows the driver is System32\\nvcuda.dll; its FileVersion encodes the driver version (31.0.15.5222 is
552.22, knowledge/windows_cuda.toml [NVCUDA]). The minimum per CUDA family is the table Linux's TC501 uses
(knowledge/cuda_driver.toml, its ``windows`` column). Read from the running Windows' System32 when live and from
``--system-root`` otherwise: one code path, the same verdicts. Without a System32 to look at, nothing is said.
"""

from __future__ import annotations

from collections.abc import Iterator

from conda_torchcheck.checks import Check, cuda_driver
from conda_torchcheck.checks.context import CheckContext
from conda_torchcheck.checks.win_common import windows_graph
from conda_torchcheck.findings import Finding, Fix, Severity, finding
from conda_torchcheck.knowledge import parse_version
from conda_torchcheck.knowledge.cuda import family_minimum
from conda_torchcheck.messages import msg


def driver_from_file_version(text: str | None) -> str | None:
    """'31.0.15.5222' -> '552.22': the last five digits of the third and fourth fields (the fourth is 4 digits)."""
    from conda_torchcheck.loader.windows import version_tuple

    parts = version_tuple(text)
    if not parts or len(parts) < 4:
        return None
    digits = f"{parts[2]}{parts[3]:04d}"[-5:]
    if len(digits) < 5:
        return None
    return f"{int(digits[:3])}.{digits[3:]}"


def windows_minimum(family: str) -> str | None:
    """The driver minimum for a CUDA family on Windows: the TC501 table (knowledge/cuda_driver.toml)."""
    return family_minimum(family, "windows")


def run(ctx: CheckContext) -> Iterator[Finding]:
    from conda_torchcheck.loader.windows import system_file_version

    torch = ctx.torch
    if torch.variant != "cuda" or not torch.cuda_version:
        return
    graph = windows_graph(ctx)
    if graph is None or graph.process is None or not graph.process.system_known:
        return  # System32 not examined: TC310 says what depends on it
    family = torch.cuda_version.split(".")[0]
    minimum = windows_minimum(family)
    path, file_version = system_file_version(graph, "nvcuda.dll")
    system_dir = str(graph.process.system_dir)
    if path is None:
        # torch 1.x's caffe2_nvrtc.dll imports nvcuda.dll itself: there the import fails; newer builds load it
        # lazily and only torch.cuda is unavailable (the simulated load says which)
        blocked = next(
            (o for o in graph.outcomes if o.failing is not None and o.failing[1].lower() == "nvcuda.dll"), None
        )
        yield finding(
            "TC313",
            Severity.ERROR if blocked is not None else Severity.WARNING,
            variant="none_blocks" if blocked is not None else "none",
            cuda=torch.cuda_version,
            torch=torch.version or "?",
            system=system_dir,
            importer=blocked.failing[0].name if blocked is not None and blocked.failing else "",
            evidence={
                "looked_for": f"{system_dir}\\nvcuda.dll",
                "torch_cuda": torch.cuda_version,
                "imported_by": str(blocked.failing[0]) if blocked is not None and blocked.failing else None,
            },
            fixes=[Fix("system", msg("TC313.fix.install"), commands=("https://www.nvidia.com/Download/index.aspx",))],
        )
        return
    driver = driver_from_file_version(file_version)
    have, need = parse_version(driver), parse_version(minimum)
    if have is None or need is None or have >= need:
        return
    fixes = [
        Fix(
            "system",
            msg("TC501.fix.driver", minimum=minimum),
            commands=("https://www.nvidia.com/Download/index.aspx",),
            needs_admin=True,
        )
    ]
    older = cuda_driver._older_build(ctx, have, column="windows")
    if older is not None:
        fixes.append(older)
    yield finding(
        "TC313",
        Severity.ERROR,
        driver=driver,
        file_version=file_version,
        path=str(path),
        cuda=torch.cuda_version,
        torch=torch.version or "?",
        minimum=minimum,
        family=family,
        evidence={
            "nvcuda.dll": str(path),
            "file_version": file_version,
            "driver": driver,
            "torch_cuda": torch.cuda_version,
            "family_minimum": f"{minimum} (knowledge/cuda_driver.toml, the table TC501 uses)",
        },
        fixes=fixes,
    )


CHECK = Check.declared(__name__, run)
