"""The report: one model that every renderer (text, JSON, Markdown) reads."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from conda_torchcheck import __version__
from conda_torchcheck.findings import Finding, Severity
from conda_torchcheck.inventory.model import Environment, HostFacts
from conda_torchcheck.inventory.torch import TORCH_FAMILY_CONDA, TorchInfo
from conda_torchcheck.schema import SCHEMA_VERSION

TORCH_FAMILY_PIP = ("torch", "torchvision", "torchaudio", "triton", "intel-openmp", "mkl")


@dataclass
class Report:
    """One env's check: the env, the host, torch, the findings and what goes with them."""

    env: Environment
    host: HostFacts
    torch: TorchInfo
    findings: list[Finding]
    #: result of the opt-in import test, when it was run
    import_test: dict[str, Any] | None = None
    checks_run: list[str] = field(default_factory=list)
    #: what the loader models found that a bug report shows (environment_facts below)
    facts: dict[str, str] = field(default_factory=dict)
    #: the one fix plan of this report (conda_torchcheck.plan), when it was made
    plan: Any = None

    @property
    def counts(self) -> dict[str, int]:
        counts = {"errors": 0, "warnings": 0, "info": 0}
        for f in self.findings:
            counts[{"error": "errors", "warning": "warnings", "info": "info"}[f.severity.value]] += 1
        return counts

    def _torch_dict(self) -> dict[str, Any]:
        doc = self.torch.to_dict()
        if not self.torch.installed:
            from conda_torchcheck.inventory.torch import unreadable_torch_record

            damaged = unreadable_torch_record(self.env)
            if damaged is not None:  # not "none": whether torch is there cannot be told from a damaged record
                doc["source"] = "unreadable-record"
                doc["record"] = str(damaged)
        return doc

    @property
    def has_errors(self) -> bool:
        return any(f.severity is Severity.ERROR for f in self.findings)

    def torch_family(self) -> dict[str, list[dict[str, str]]]:
        conda = [
            {"name": r.name, "version": r.version, "build": r.build, "channel": r.channel}
            for r in self.env.conda_records
            if r.name in TORCH_FAMILY_CONDA
            or r.name.startswith(
                ("cuda-version", "mkl", "intel-openmp", "llvm-openmp", "vc14_runtime", "vs2015_runtime", "libstdcxx")
            )
        ]
        pip = [
            {"name": d.raw_name, "version": d.version, "installer": d.installer or "", "site": d.site_kind}
            for d in self.env.distributions
            if d.name in TORCH_FAMILY_PIP or d.name.startswith("nvidia-")
        ]
        return {"conda": conda, "pip": pip}

    def to_dict(self, lang: str | None = None) -> dict[str, Any]:
        env = self.env
        doc: dict[str, Any] = {
            "schema": SCHEMA_VERSION,
            "tool": {"name": "conda-torchcheck", "version": __version__},
            "kind": "report",
            "target": {
                "prefix": str(env.prefix),
                "name": env.name,
                "os": env.os,
                "platform": env.platform,
                "platform_guess": env.platform_guess,
                "layout": env.layout,
                "manager": env.manager,
                "path_file": str(env.path_file.path) if env.path_file is not None else None,
                "is_base": env.is_base,
                "is_active": env.is_active,
                "base_prefix": str(env.base_prefix) if env.base_prefix else None,
                "python": {
                    "version": env.python.version,
                    "arch": env.python.arch,
                    "free_threaded": env.python.free_threaded,
                    "executable": str(env.python.executable) if env.python.executable else None,
                },
            },
            "host": {
                "live": self.host.live,
                "system_root": str(self.host.system_root) if self.host.system_root else None,
                "system_root_source": self.host.system_root_source,
            },
            "inventory": {
                "conda_records": len(env.conda_records),
                "distributions": len(env.distributions),
                "site_dirs": [
                    {"path": str(s.path), "kind": s.kind, "active": s.active, **({"note": s.note} if s.note else {})}
                    for s in env.site_dirs
                ],
                "torch_family": self.torch_family(),
            },
            "torch": self._torch_dict(),
            "findings": [f.to_dict(lang) for f in self.findings],
            "summary": self.counts,
        }
        if self.import_test is not None:
            doc["import_test"] = self.import_test
        if self.facts:
            doc["facts"] = dict(self.facts)
        if self.plan is not None:
            doc["plan"] = self.plan.to_dict()
        return doc


def check_environment(
    env: Environment, host: HostFacts, options: Any = None, only: Any = (), skip: Any = (), *, facts: bool = False
) -> Report:
    """Run the checks on ``env`` and make the report (``check`` of one env, and of each env of ``--all-envs``);
    ``facts``: also model what the loaders bind for the environment table (Markdown), not only read it."""
    from conda_torchcheck.causes import follow_consequences
    from conda_torchcheck.checks import run_checks
    from conda_torchcheck.checks.context import CheckContext

    ctx = CheckContext(env, host, options)
    torch_dir = str(ctx.torch.package_dir) if ctx.torch.package_dir else None
    findings = follow_consequences(run_checks(ctx, only, skip), torch_dir)
    return Report(
        env=env,
        host=host,
        torch=ctx.torch,
        findings=findings,
        import_test=ctx.import_test,
        facts=environment_facts(ctx, compute=facts),
    )


def environment_facts(ctx: Any, *, compute: bool = True) -> dict[str, str]:
    """What the loader models and the driver probe found that a bug report should show (best effort, no raise).

    With ``compute=False`` only what the checks already computed is read (no loader run just for the table).

    ``vc_runtime``: the msvcp140.dll the Windows model binds (the copy that wins, with its version);
    ``libstdcxx``: the libstdc++.so.6 the Linux model maps, with the newest GLIBCXX it defines;
    ``cuda_driver``: the driver version, only when a check already probed it (never probed here).
    """
    facts: dict[str, str] = {}
    try:
        from conda_torchcheck.loader.contract import for_os

        loader = for_os(ctx.env.os) if ctx.env is not None else None
        if loader is not None:
            facts.update(loader.report_facts(ctx, compute=compute))
        driver = ctx.computed("cuda_driver")
        if driver is not None and getattr(driver, "version", None):
            gpus = ", ".join(g.name for g in getattr(driver, "gpus", ()))
            facts["cuda_driver"] = f"{driver.version}" + (f" ({gpus})" if gpus else "")
    except Exception:  # the table says "not determined" rather than breaking a bug report
        pass
    return facts


# --- findings ---------------------------------------------------------------------------------------------------
