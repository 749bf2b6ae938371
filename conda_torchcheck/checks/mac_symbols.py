"""TC457: "Symbol not found" — an undefined symbol that the dylib its two-level namespace ordinal names does not
export (torch files from two builds: a libc10.dylib of another torch version beside this libtorch_cpu)."""

from __future__ import annotations

from collections.abc import Iterator

from conda_torchcheck.checks import Check
from conda_torchcheck.checks import mac_common as common
from conda_torchcheck.checks.context import CheckContext
from conda_torchcheck.findings import Finding, Severity, finding
from conda_torchcheck.loader import macos
from conda_torchcheck.messages import msg


def run(ctx: CheckContext) -> Iterator[Finding]:
    load = macos.torch_load(ctx)
    if load is None:
        return
    grouped: dict[tuple[str, str], list[macos.SymbolMiss]] = {}
    for miss in macos.torch_symbol_misses(ctx):
        grouped.setdefault((str(miss.required_by), str(miss.expected_in)), []).append(miss)
    for (required_by, expected_in), misses in grouped.items():
        names = [m.name for m in misses]
        first = misses[0]
        library = first.expected_in.name
        fixes = []
        if common.ships_with_torch(ctx, library):
            fixes.append(common.reinstall_torch_fix(ctx, msg("TC457.fix.reinstall_torch")))
        yield finding(
            "TC457",
            Severity.ERROR,
            symbol=first.name,
            count=len(names),
            required_by=required_by,
            expected_in=expected_in,
            message=first.message,
            evidence={
                "symbols": names[:20],
                "count": len(names),
                "required_by": required_by,
                "expected_in": expected_in,
                "library": first.library,
                "chain": common.chain(load.graph, first.expected_in),
                "dyld_message": first.message,
            },
            fixes=fixes,
        )


CHECK = Check.declared(__name__, run)
