"""TC106: torch installed in conda's base env. TC107: the checked env is not the active one (so this shell's
variables, which the report used, are not the ones the env runs with once activated)."""

from __future__ import annotations

from collections.abc import Iterator

from conda_torchcheck.checks import Check
from conda_torchcheck.checks import commands as cmd
from conda_torchcheck.checks.context import CheckContext
from conda_torchcheck.checks.facts import conda_state_vars
from conda_torchcheck.findings import Finding, Fix, Severity, finding
from conda_torchcheck.inventory.model import Environment
from conda_torchcheck.messages import msg


def _base(ctx: CheckContext) -> Iterator[Finding]:
    env = ctx.env
    t = ctx.torch
    if not env.is_base or not t.installed:
        return
    py = env.python.major_minor
    python_spec = f"python={py[0]}.{py[1]}" if py else "python"
    torch_spec = "pytorch=*=cuda*" if t.variant == "cuda" else "pytorch"
    create = f"conda create -n torch -c conda-forge {python_spec} {cmd.spec(torch_spec)}"
    if env.record("torchvision") is not None or env.dist("torchvision") is not None:
        create += " torchvision"
    fixes = [Fix("conda", msg("TC106.fix_new_env"), commands=(create, "conda activate torch"))]
    removal = []
    conda_names = [n for n in ("pytorch", "torchvision", "torchaudio", "libtorch") if env.record(n) is not None]
    if conda_names:
        removal.append(cmd.conda_remove(env, conda_names))
    pip_names = [n for n in ("torch", "torchvision", "torchaudio") if any(d.installer != "conda" for d in env.dists(n))]
    if pip_names and t.source != "conda":
        removal.append(cmd.pip(env, "uninstall -y " + " ".join(pip_names), dist=t.dist))
    if removal:
        fixes.append(
            Fix(t.source if t.source in ("conda", "pip") else "conda", msg("TC106.fix_remove"), commands=tuple(removal))
        )
    yield finding(
        "TC106",
        Severity.WARNING,
        version=t.version or "?",
        source=t.source,
        evidence={"prefix": env.prefix, "torch": f"{t.version} ({t.source}, {t.variant})"},
        fixes=fixes,
    )


def activation_changes(env: Environment) -> list[str]:
    """What activating the env changes beyond PATH: activate.d scripts and ``conda env config vars``."""
    found: list[str] = []
    scripts = env.prefix / "etc" / "conda" / "activate.d"
    try:
        found += sorted(
            str(p) for p in scripts.iterdir() if p.suffix.lower() in (".sh", ".bat", ".ps1", ".fish", ".csh", ".xsh")
        )
    except OSError:
        pass
    vars_ = conda_state_vars(env)
    found += [f"{k}={v}" for k, v in sorted(vars_.items())]
    return found


def _inactive(ctx: CheckContext) -> Iterator[Finding]:
    env = ctx.env
    host = ctx.host
    if not host.live or env.is_active is not False:
        return
    active = host.get("VIRTUAL_ENV") or host.get("CONDA_PREFIX")
    changes = activation_changes(env) if env.layout in ("conda", "pixi") else []
    if not active and not changes:
        # nothing is activated and activating this env would only prepend its own folders to PATH:
        # the report is what the env's python sees when run directly
        return
    activate = f"conda activate {cmd.conda_target(env).split(' ', 1)[1]}" if env.layout in ("conda", "pixi") else None
    if env.layout == "venv":
        script = cmd.join_native(
            env, cmd.prefix_text(env), *(("Scripts", "activate") if env.is_windows else ("bin", "activate"))
        )
        activate = f'"{script}"' if env.is_windows else f'source "{script}"'
    fixes = [Fix("env", msg("TC107.fix"), commands=(activate,))] if activate else []
    yield finding(
        "TC107",
        Severity.INFO,
        variant="other" if active else "none",
        active=str(active or "-"),
        evidence={
            "checked": env.prefix,
            "active": active or "-",
            **({"activation sets": changes} if changes else {}),
        },
        fixes=fixes,
    )


def torch_here_not_there(ctx: CheckContext) -> Finding | None:
    """TC107.has_torch, for ``explain``: the error says Python found no torch, yet this env has one, so the
    Python that raised it was another interpreter (not the env's own python, or the env not activated).

    Not a check of its own: only an error text says that some Python found no torch.
    """
    env, torch = ctx.env, ctx.torch
    if not torch.installed:
        return None
    return finding(
        "TC107",
        Severity.WARNING,
        variant="has_torch",
        prefix=str(env.prefix),
        torch=torch.version or "?",
        evidence={"checked": env.prefix, "torch": torch.version, "torch package": torch.package_dir},
        fixes=[Fix("env", msg("TC107.fix_python"), commands=(f'{cmd.quote(cmd.python_path(env))} -c "import torch"',))],
    )


def run(ctx: CheckContext) -> Iterator[Finding]:
    yield from _base(ctx)
    yield from _inactive(ctx)


CHECK = Check.declared(__name__, run)
