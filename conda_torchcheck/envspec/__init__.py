"""environment.yml: check it before ``conda env create``, rewrite it into a reproducible spec, export one.

- :func:`check_path` / :func:`check_text` → TC6xx findings with line numbers (no environment needed);
- :func:`fix_path` → the rewritten text, its diff and every change with its reason (``--write`` replaces the
  file atomically and keeps ``FILE.bak``);
- :mod:`export` → a reproducible spec from an installed env (``conda export --format torchcheck``);
- :mod:`conda_integration` → what the conda plugin registers (exporter, pre-command hook).

ruamel.yaml is imported only here, never when the conda plugin is loaded.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the conda plugin imports this package on every conda command: keep it light
    from conda_torchcheck.findings import Finding

from conda_torchcheck.schema import SCHEMA_VERSION


@dataclass
class CheckResult:
    path: str
    findings: list[Finding]
    torch: dict[str, Any]
    has_torch: bool
    #: notes on the file's upkeep (channel hygiene, TC603): shown after the findings, not counted among them
    notes: list[Finding] = field(default_factory=list)

    @property
    def has_errors(self) -> bool:
        return any(f.severity.value == "error" for f in self.findings)

    @property
    def counts(self) -> dict[str, int]:
        counts = {"errors": 0, "warnings": 0, "info": 0}
        for f in self.findings:
            counts[{"error": "errors", "warning": "warnings", "info": "info"}[f.severity.value]] += 1
        return counts

    def to_dict(self, lang: str | None = None) -> dict[str, Any]:
        from conda_torchcheck import __version__

        return {
            "schema": SCHEMA_VERSION,
            "tool": {"name": "conda-torchcheck", "version": __version__},
            "kind": "spec-check",
            "file": self.path,
            "torch": self.torch,
            "findings": [f.to_dict(lang) for f in self.findings],
            "notes": [f.to_dict(lang) for f in self.notes],
            "summary": self.counts,
        }

    def render_text(self, *, lang: str | None = None, verbose: int = 0, color: bool = False) -> str:
        from conda_torchcheck.messages import translate
        from conda_torchcheck.render.text import render_finding

        out: list[str] = []
        if not self.has_torch and not self.findings and not self.notes:
            return translate("envspec.cli.no_torch", lang, file=self.path) + "\n"
        if self.has_torch:
            out.append(_torch_line(self.path, self.torch, lang))
        else:  # what conda makes of the file itself, or torch coming in as another package's dependency
            out.append(translate("envspec.cli.no_torch_named", lang, file=self.path))
        out.append("")
        if not self.findings:
            out.append(translate("envspec.cli.clean", lang, file=self.path))
            out.extend(self._render_notes(lang=lang, color=color, verbose=verbose))
            return "\n".join(out) + "\n"
        for f in self.findings:
            out.extend(render_finding(f, lang=lang, color=color, verbose=verbose))
            out.append("")
        out.extend(self._render_notes(lang=lang, color=color, verbose=verbose))
        c = self.counts
        info = c["info"] + len(self.notes)
        out.append(translate("report.summary", lang, errors=c["errors"], warnings=c["warnings"], info=info))
        return "\n".join(out) + "\n"

    def _render_notes(self, *, lang: str | None, color: bool, verbose: int) -> list[str]:
        from conda_torchcheck.messages import translate
        from conda_torchcheck.render.text import render_finding

        if not self.notes:
            return []
        out = [translate("envspec.cli.notes", lang)]
        for f in self.notes:
            out.extend(render_finding(f, lang=lang, color=color, verbose=verbose))
            out.append("")
        return out


def _torch_line(path: str, torch: dict[str, Any], lang: str | None) -> str:
    from conda_torchcheck.messages import translate

    source = translate(f"envspec.source.{torch.get('source') or 'unknown'}", lang, channel=torch.get("channel") or "?")
    variant = torch.get("variant")
    details = []
    if torch.get("version"):
        details.append(str(torch["version"]))
    if variant in ("cuda", "cpu"):
        details.append(f"CUDA {torch['cuda']}" if variant == "cuda" and torch.get("cuda") else variant.upper())
    return translate("envspec.cli.torch_line", lang, file=path, source=source, details=", ".join(details) or "-")


def _intent_summary(intent) -> dict[str, Any]:
    if intent.era not in (None, "pip") and "pytorch" not in intent.deps and intent.misnamed_torch is None:
        pip = intent.pip.get("torch")
        if pip is not None and pip.line.exact:
            # the torch that ends up installed is pip's, put over whatever conda pytorch the companions brought
            return {"source": "pip", "channel": None, "variant": None, "cuda": None, "version": pip.line.exact}
    return {
        "source": intent.era,
        # the channel the solver takes pytorch from (the first listed one with the release), not only the first listed
        "channel": intent.torch_supplier or intent.torch_channel,
        "variant": intent.variant,
        "cuda": intent.cuda,
        "version": intent.torch_version,
    }


def check_file(file, *, command: str = "conda-torchcheck") -> CheckResult:
    from conda_torchcheck import registry
    from conda_torchcheck.envspec.intent import analyse
    from conda_torchcheck.envspec.rules import check_file as rules_check

    intent = analyse(file)
    found = rules_check(file, command=command)
    notes = [f for f in found if registry.is_note(f)]
    findings = [f for f in found if not registry.is_note(f)]
    return CheckResult(file.path, findings, _intent_summary(intent), intent.has_torch, notes=notes)


def check_text(text: str, path: str = "environment.yml", *, command: str = "conda-torchcheck") -> CheckResult:
    from conda_torchcheck.envspec.parse import parse_text

    return check_file(parse_text(text, path), command=command)


def check_path(path: Path | str, *, command: str = "conda-torchcheck") -> CheckResult:
    from conda_torchcheck.envspec.parse import load

    return check_file(load(path), command=command)


@dataclass
class FixResult:
    path: str
    original: str
    fixed: str
    plan: Any
    findings_before: list[Finding]
    findings_after: list[Finding]
    written: bool = False
    backup: Path | None = None
    changes: list[Any] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return self.fixed != self.original

    @property
    def diff(self) -> str:
        import difflib

        if not self.changed:
            return ""
        relative = not Path(self.path).is_absolute()
        lines = difflib.unified_diff(
            self.original.splitlines(keepends=True),
            self.fixed.splitlines(keepends=True),
            fromfile=f"a/{self.path}" if relative else self.path,
            tofile=f"b/{self.path}" if relative else self.path,
        )
        out = []
        for line in lines:
            out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
        return "".join(out)

    def render_changes(self, lang: str | None = None) -> str:
        from conda_torchcheck.messages import translate

        if not self.plan.changes:
            return ""
        out = [translate("envspec.cli.changes_header", lang, count=len(self.plan.changes))]
        order = {"channels": 0, "dependencies": 1, "pip": 2}
        for change in sorted(self.plan.changes, key=lambda c: order.get(c.section, 3)):
            where = f"{change.line}: " if change.line else ""
            what = translate(
                f"envspec.action.{change.action}",
                lang,
                old=change.old or "",
                new=change.new or "",
                section=change.section,
            )
            out.append(f"  {where}{what}")
            out.append(f"      {change.reason(lang)}")
        return "\n".join(out) + "\n"

    def render_unresolved(self, lang: str | None = None) -> list[str]:
        from conda_torchcheck.messages import translate

        if not self.plan.unresolved:
            return []
        return [translate("envspec.cli.unresolved_header", lang)] + [
            f"  - {t.render(lang)}" for t in self.plan.unresolved
        ]

    def to_dict(self, lang: str | None = None) -> dict[str, Any]:
        from conda_torchcheck import __version__

        return {
            "schema": SCHEMA_VERSION,
            "tool": {"name": "conda-torchcheck", "version": __version__},
            "kind": "spec-fix",
            "file": self.path,
            "changed": self.changed,
            "written": self.written,
            "backup": str(self.backup) if self.backup else None,
            "changes": [c.to_dict(lang) for c in self.plan.changes],
            "unresolved": [t.render(lang) for t in self.plan.unresolved],
            "diff": self.diff,
            "findings_before": [f.to_dict(lang) for f in self.findings_before],
            "findings_after": [f.to_dict(lang) for f in self.findings_after],
        }


def fix_file(
    file, *, installed=None, lock: bool = False, command: str = "conda-torchcheck", base_channel: str | None = None
) -> FixResult:
    from conda_torchcheck.envspec.parse import parse_text
    from conda_torchcheck.envspec.rewrite import fix_text
    from conda_torchcheck.envspec.rules import check_file as rules_check

    fixed, plan = fix_text(file, installed=installed, lock=lock, base_channel=base_channel)
    before = rules_check(file, command=command)
    if fixed == file.text:
        after = before
    else:
        after = rules_check(plan.result or parse_text(fixed, file.path), command=command)
    return FixResult(file.path, file.text, fixed, plan, before, after, changes=list(plan.changes))


def fix_path(
    path: Path | str,
    *,
    installed=None,
    lock: bool = False,
    write: bool = False,
    command: str = "conda-torchcheck",
    base_channel: str | None = None,
) -> FixResult:
    from conda_torchcheck.envspec.parse import decode, encode, parse_text, read_bytes
    from conda_torchcheck.envspec.writefile import replace_file

    p = Path(path)
    data = read_bytes(p)
    text, encoding, bom = decode(data, str(path))
    file = parse_text(text, str(path), encoding=encoding, bom=bom)
    result = fix_file(file, installed=installed, lock=lock, command=command, base_channel=base_channel)
    if write and result.changed:
        result.backup = replace_file(p, encode(result.fixed, encoding, bom), expected=data)
        result.written = True
    return result
