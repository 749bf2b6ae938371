"""TC455: whether torch can use MPS, the Apple GPU (arm64 torch with the MPS backend, macOS 12.3+; 13.0+ from
torch 2.5).

Info when it can. A warning when it cannot although the user may want it: the Mac's macOS is older than this
torch's MPS needs (variant ``old``), or the torch release predates MPS (< 1.12, variant ``no_backend``). Said
only when the modelled import succeeds (``no_backend`` reads the version alone); a torch without
MetalPerformanceShaders in its load commands (an x86_64 build, a custom build) gets nothing.
"""

from __future__ import annotations

from collections.abc import Iterator

from conda_torchcheck.checks import Check
from conda_torchcheck.checks.context import CheckContext
from conda_torchcheck.findings import Finding, Severity, finding
from conda_torchcheck.knowledge import parse_version
from conda_torchcheck.knowledge.macos import mps
from conda_torchcheck.loader import macos
from conda_torchcheck.messages import msg


def run(ctx: CheckContext) -> Iterator[Finding]:
    table = mps()
    torch = ctx.torch
    installed = parse_version((torch.version or "").split("+", 1)[0]) if torch.installed else None
    if ctx.env.os == "darwin" and installed is not None and installed < parse_version(table.min_torch):
        yield finding(
            "TC455",
            Severity.WARNING,
            variant="no_backend",
            version=torch.version,
            first=table.min_torch,
            evidence={"torch": torch.version, "mps_since": table.min_torch},
        )
        return
    load = macos.torch_load(ctx)
    if load is None or load.first_error is not None:
        return
    if load.search.arch not in table.arches:
        return
    has_mps = any(
        "MetalPerformanceShaders.framework" in dep.name
        for img in load.dyld.loaded
        if img.path.name.startswith("libtorch_cpu")
        for dep in img.module.dependencies
    )
    if not has_mps:
        return
    needed = table.needed_macos(ctx.torch.version)
    host, source = load.search.macos, load.search.macos_source
    evidence = {"arch": load.search.arch, "host_macos": host, "host_macos_from": source, "needs_macos": needed}
    version = ctx.torch.version or "?"
    host_v, needed_v = macos.version_tuple(host), macos.version_tuple(needed)
    if host_v is not None and needed_v is not None and host_v < needed_v:
        yield finding("TC455", Severity.WARNING, variant="old", version=version, host=host, needed=needed,
                      evidence=evidence)  # fmt: skip
        return
    host_text = msg("TC455.host.known", host=host, needed=needed) if host else msg("TC455.host.unknown", needed=needed)
    yield finding("TC455", Severity.INFO, version=version, host_text=host_text, evidence=evidence)


CHECK = Check.declared(__name__, run)
