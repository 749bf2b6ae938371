"""TC101: torch-family conda packages built by different builders (pytorch channel, conda-forge, defaults),
or nvidia-channel CUDA packages under a conda-forge / defaults pytorch."""

from __future__ import annotations

from collections.abc import Iterator

from conda_torchcheck.checks import Check
from conda_torchcheck.checks import commands as cmd
from conda_torchcheck.checks.context import CheckContext
from conda_torchcheck.checks.facts import builder, channel_label, record_variant
from conda_torchcheck.findings import Finding, Fix, Severity, finding
from conda_torchcheck.inventory.model import CondaRecord
from conda_torchcheck.knowledge import conda_channels
from conda_torchcheck.messages import msg

#: nvidia-channel records listed in the evidence (the rest is counted)
EVIDENCE_LIMIT = 12


def _conda_forge_family_fix(ctx: CheckContext, names: list[str]) -> Fix:
    env = ctx.env
    # channel-qualified specs: a plain `-c conda-forge` may keep same-version records from the other channel
    specs = ["conda-forge::pytorch", *[f"conda-forge::{n}" for n in names if n not in ("pytorch", "libtorch")]]
    torch = env.record("pytorch")
    if torch is not None and record_variant(torch).variant == "cuda":
        specs[0] = "conda-forge::pytorch=*=cuda*"
    return Fix("conda", msg("TC101.fix_conda_forge"), commands=(cmd.conda_install(env, specs),))


def _pytorch_channel_companions_fix(ctx: CheckContext, anchor: CondaRecord, mixed: list[CondaRecord]) -> list[Fix]:
    """The other way round, for a pytorch-channel torch: its companions from the pytorch channel, at the versions
    the install matrix pairs with it. Offered after the conda-forge fix, for a plan that keeps this torch (another
    step installs the pytorch-cuda it was built for); none where the matrix has no pytorch-channel row for this
    release, or a mixed package is not a companion the channel built for it."""
    from conda_torchcheck.knowledge.releases import install_matrix_row

    if builder(anchor.channel) != "pytorch" or anchor.name != "pytorch":
        return []
    row = install_matrix_row(anchor.version)
    if row is None or row.get("conda_channel") != "pytorch":
        return []
    specs = []
    for rec in mixed:
        version = row.get(rec.name) if rec.name in ("torchvision", "torchaudio") else None
        if not version:
            return []
        specs.append(f"pytorch::{rec.name}={version}")
    extra = ["-c", "nvidia"] if record_variant(anchor).variant == "cuda" else []
    command = cmd.conda_install(ctx.env, specs, channel="pytorch", extra=extra)
    return [Fix("conda", msg("TC101.fix_pytorch_channel"), commands=(command,))]


def run(ctx: CheckContext) -> Iterator[Finding]:
    env = ctx.env
    anchor = env.record("pytorch") or env.record("libtorch")
    if anchor is None:
        return
    anchor_builder = builder(anchor.channel)
    family = conda_channels.family()["linked_to_libtorch"]
    mixed = [
        rec
        for name in family
        if (rec := env.record(name)) is not None and rec is not anchor and builder(rec.channel) != anchor_builder
    ]
    if mixed:
        yield finding(
            "TC101",
            Severity.WARNING,
            variant="family",
            packages=", ".join(r.name for r in mixed),
            anchor=anchor.name,
            anchor_channel=channel_label(anchor),
            evidence={
                anchor.name: f"{anchor.version} {anchor.build} ({channel_label(anchor)})",
                **{r.name: f"{r.version} {r.build} ({channel_label(r)})" for r in mixed},
            },
            fixes=[
                _conda_forge_family_fix(ctx, [anchor.name, *[r.name for r in mixed]]),
                *_pytorch_channel_companions_fix(ctx, anchor, mixed),
            ],
        )
    # conda-forge's CUDA builds depend on conda-forge's own CUDA packages (same names as nvidia's, built and
    # pinned differently through cuda-version); a CPU build does not load them, so only a CUDA build counts
    if anchor_builder == "conda-forge" and record_variant(anchor).variant == "cuda":
        nvidia = [rec for rec in env.conda_records if builder(rec.channel) == "nvidia"]
        if nvidia:
            shown = {r.name: f"{r.version} {r.build} ({channel_label(r)})" for r in nvidia[:EVIDENCE_LIMIT]}
            if len(nvidia) > EVIDENCE_LIMIT:
                shown["…"] = f"{len(nvidia) - EVIDENCE_LIMIT} more"
            names = [r.name for r in nvidia]
            yield finding(
                "TC101",
                Severity.WARNING,
                variant="nvidia",
                count=len(nvidia),
                anchor=anchor.name,
                anchor_channel=channel_label(anchor),
                evidence={
                    anchor.name: f"{anchor.version} {anchor.build} ({channel_label(anchor)})",
                    "nvidia channel": shown,
                },
                fixes=[
                    Fix(
                        "conda",
                        msg("TC101.fix_nvidia"),
                        commands=(cmd.conda_install(env, [f"conda-forge::{n}" for n in names]),),
                    )
                ],
            )


CHECK = Check.declared(__name__, run)
