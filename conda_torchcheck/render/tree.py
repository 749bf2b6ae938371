"""Render a :class:`LoadGraph` as a dependency tree (like Dependencies / libtree), for any loader model.

Each node says how it was found (the search step and the folder); a miss lists the places searched, in order.
System libraries (API sets, KnownDLLs, System32, ld.so's default dirs) are hidden unless verbose, as libtree does;
misses and problems are always shown. A module's subtree is printed once; later edges to it say "see above".
Windows graphs add per-root outcomes (which load fails, with which WinError) and torch's PATH fallback.
"""

from __future__ import annotations

from conda_torchcheck.loader.graph import Dependency, LoadGraph, Module
from conda_torchcheck.messages import translate
from conda_torchcheck.render.style import paint

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

SYSTEM_STEPS = frozenset(
    {"api-set", "known-dll", "system32", "system", "windows-dir", "ld.so.cache", "default-dirs", "dyld-shared-cache"}
)
BRANCH, LAST, PIPE, SPACE = "├── ", "└── ", "│   ", "    "


def step_label(step: str, lang: str | None) -> str:
    key = f"tree.step.{step}"
    text = translate(key, lang)
    return step if text == key else text


def _is_system(dep: Dependency) -> bool:
    res = dep.resolution
    if res is None or dep.problems:
        return False
    if res.found_by.step in SYSTEM_STEPS:
        return True
    if res.found_by.step == "already-loaded" and res.path is None and "part of Windows" in (res.found_by.note or ""):
        return True
    return False


class _Renderer:
    def __init__(self, graph: LoadGraph, *, lang: str | None, color: bool, verbose: int) -> None:
        self.graph = graph
        self.lang = lang
        self.color = color
        self.verbose = verbose
        self.expanded: set[str] = set()
        self.hidden = 0
        self.lines: list[str] = []
        self.issues: dict[tuple[str, str], Any] = {}
        self._outcomes: dict[str, Any] | None = None
        self._blamed: Any = None
        for issue in getattr(graph, "issues", []) or []:
            self.issues[(str(issue.importer), issue.name.lower())] = issue

    def t(self, key: str, **params: Any) -> str:
        return translate(key, self.lang, **params)

    def found_text(self, dep: Dependency) -> str:
        res = dep.resolution
        assert res is not None
        how = res.found_by
        label = step_label(how.step, self.lang)
        if how.step == "already-loaded":
            label += f": {self.loaded_text(how.note)}" if how.note else ""
        elif how.note and how.step not in ("dll-load-dir",):
            label += f" ({how.note})"
        if res.assumed and how.step != "unexamined" and "assumed" not in (how.note or ""):
            label += f", {self.t('tree.assumed')}"
        where = str(res.path) if res.path is not None else (how.directory or "")
        return f"[{label}] {where}".rstrip()

    def loaded_text(self, note: str) -> str:
        who, _, step = note.partition(":")
        key = f"tree.loaded.{who}"
        text = self.t(key)
        text = who if text == key else text
        return f"{text}, {step_label(step, self.lang)}" if step else text

    def problem_texts(self, module: Module, dep: Dependency) -> list[str]:
        out = []
        for problem in dep.problems:
            code, _, detail = problem.partition(":")
            if code == "arch":
                out.append(self.t("tree.wrong_arch", arch=detail))
            elif code == "unreadable":
                out.append(self.t("tree.unreadable", reason=detail))
            elif code == "missing-symbols":
                issue = self.issues.get((str(module.path), dep.name.lower()))
                names = (
                    ", ".join(issue.detail[:6]) + (" …" if issue and len(issue.detail) > 6 else "") if issue else detail
                )
                out.append(self.t("tree.missing_symbols", symbols=names))
            else:
                out.append(problem)
        return out

    def render_module(self, module: Module, prefix: str) -> None:
        deps = list(module.dependencies)
        shown = [d for d in deps if self.verbose or not _is_system(d)]
        self.hidden += len(deps) - len(shown)
        for i, dep in enumerate(shown):
            last = i == len(shown) - 1
            self.render_dep(module, dep, prefix, last)

    def render_dep(self, module: Module, dep: Dependency, prefix: str, last: bool) -> None:
        branch = LAST if last else BRANCH
        child_prefix = prefix + (SPACE if last else PIPE)
        kind = "" if dep.kind in ("import", "needed") else f" ({dep.kind})"
        if dep.resolution is None:
            head = f"{dep.name}{kind}  " + paint(self.t("tree.not_found"), "red", self.color)
            self.lines.append(prefix + branch + head)
            self.lines.append(child_prefix + "┊ " + self.t("tree.searched"))
            for n, place in enumerate(dep.searched, 1):
                note = f" ({place.note})" if place.note else ""
                label = step_label(place.step, self.lang)
                self.lines.append(f"{child_prefix}┊ {n}. {label}: {place.directory or '?'}{note}")
            fallback = module.extra.get("fallback", {}).get(dep.name.lower())
            if fallback is not None:
                res = fallback.get("resolution")
                result = res["path"] if res and res.get("path") else self.t("tree.fallback_missing")
                self.lines.append(child_prefix + "┊ " + self.t("tree.fallback", result=result))
            return
        problems = self.problem_texts(module, dep)
        text = f"{dep.name}{kind}  {self.found_text(dep)}"
        if problems:
            text += "  " + paint("; ".join(problems), "red", self.color)
        path = dep.resolution.path
        target = self.graph.module(path) if path is not None else None
        key = str(path) if path is not None else None
        repeat = (
            target is not None
            and key in self.expanded
            and target.dependencies
            and dep.resolution.found_by.step != "already-loaded"
        )
        if repeat:
            text += f"  ({self.t('tree.seen')})"
        self.lines.append(prefix + branch + text)
        if target is not None and key not in self.expanded and dep.resolution.found_by.step != "already-loaded":
            self.expanded.add(key)  # type: ignore[arg-type]
            if target.unreadable:
                self.lines.append(child_prefix + "┊ " + self.t("tree.unreadable", reason=target.unreadable))
            self.render_module(target, child_prefix)

    def root_status(self, root) -> str:
        # the outcomes by path and the blamed one, computed once: per root they made a tree of 100,000 roots
        # (every file of a torch/lib) quadratic
        if self._outcomes is None:
            self._outcomes = {str(o.path): o for o in getattr(self.graph, "outcomes", []) or []}
            self._blamed = getattr(self.graph, "blamed", lambda: None)()
        outcome = self._outcomes.get(str(root))
        if outcome is None:
            return ""
        blamed = self._blamed
        if outcome.error is not None:
            text = paint(self.t("tree.outcome_error", code=outcome.error), "red", self.color)
            if blamed is outcome:
                text += " - " + self.t("tree.blamed")
        elif outcome.fallback_used:
            text = paint(self.t("tree.outcome_fallback"), "yellow", self.color)
        else:
            text = paint(self.t("tree.outcome_ok"), "green", self.color)
        if outcome.uncertain:
            text += f" ({self.t('tree.uncertain')})"
        return f"  [{outcome.kind} {outcome.index + 1}: {text}]"

    def render(self) -> str:
        for root in self.graph.roots:
            module = self.graph.module(root)
            self.lines.append(paint(str(root), "bold", self.color) + self.root_status(root))
            if module is None:
                continue
            if module.unreadable:
                self.lines.append("┊ " + self.t("tree.unreadable", reason=module.unreadable))
            if str(root) in self.expanded:
                self.lines.append(LAST + f"({self.t('tree.seen')})")
                continue
            self.expanded.add(str(root))
            self.render_module(module, "")
        if self.hidden and not self.verbose:
            self.lines.append("")
            self.lines.append(paint(self.t("tree.hidden", count=self.hidden), "dim", self.color))
        if self.graph.notes:
            self.lines.append("")
            self.lines.append(self.t("tree.notes"))
            self.lines.extend(f"  - {note}" for note in self.graph.notes)
        return "\n".join(self.lines) + "\n"


def render_tree_text(graph: LoadGraph, *, lang: str | None = None, color: bool = False, verbose: int = 0) -> str:
    return _Renderer(graph, lang=lang, color=color, verbose=verbose).render()


def render_tree_json(graph: LoadGraph, *, target: dict[str, Any]) -> str:
    from conda_torchcheck import __version__

    doc = {
        "schema": 1,
        "tool": {"name": "conda-torchcheck", "version": __version__},
        "kind": "tree",
        "target": target,
        "graph": graph.to_dict(),
        "failed": graph_failed(graph),
    }
    import json

    return json.dumps(doc, indent=2, ensure_ascii=False)


def graph_failed(graph: LoadGraph) -> bool:
    """True when the modelled load fails (a root fails, or a non-delayed dependency is missing or broken)."""
    outcomes = getattr(graph, "outcomes", None)
    if outcomes:
        return any(o.error is not None for o in outcomes)
    return (
        bool(graph.missing())
        or any(m.unreadable for m in graph.modules.values())
        or any(d.problems for _m, d in graph.iter_edges() if d.kind not in ("delay-import", "weak"))
    )
