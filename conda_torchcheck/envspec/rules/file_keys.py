"""TC618: what conda itself refuses or ignores in the file, before any package is solved: a top-level section
that is not an environment-file key (dropped: "EnvironmentSectionNotValid"), or an env name conda refuses (a
path, a space, `:` or `#`; a reserved name), and an empty dependency item (a TypeError in conda's
reader). Read from conda's own source (knowledge/env_files.toml
[conda_env_file])."""

from __future__ import annotations

import re
from collections.abc import Iterator

from conda_torchcheck.envspec.intent import facts
from conda_torchcheck.envspec.rules._common import Rule, RuleContext, at, ev
from conda_torchcheck.findings import Finding, Fix, Severity, finding
from conda_torchcheck.messages import msg

#: a `- pip:` item of the dependencies
_PIP_ITEM = re.compile(r"^\s*-\s*pip\s*:")


def file_keys(ctx: RuleContext) -> Iterator[Finding]:
    root = ctx.file.root
    if root is None or type(root).__name__ != "MappingNode":
        return
    rules = facts()["conda_env_file"]
    valid = set(rules["valid_keys"]) | set(rules.get("other_tools_keys", ()))
    ignored = [
        (str(key.value), key.start_mark.line + 1)
        for key, _ in root.value
        if type(key).__name__ == "ScalarNode" and str(key.value) not in valid
    ]
    if ignored:
        yield finding(
            "TC618",
            Severity.WARNING,
            variant="ignored_key",
            keys=", ".join(k for k, _ in ignored),
            evidence=ev(ctx, ignored=[{"line": line, "key": key} for key, line in ignored]),
            fixes=[Fix("file", msg("TC618.ignored_key.fix"))],
        )
    # items conda reads as something else than the file meant, each by its lines: empty dependency items (a
    # TypeError), an earlier `- pip:` list a later one replaces, empty items in the pip list (a TypeError at pip)
    for variant, lines, fix_key in (
        ("empty_item", ctx.file.empty_dep_lines, "TC618.empty_item.fix"),
        ("dropped_pip_list", ctx.file.dropped_pip_lines, "TC618.dropped_pip_list.fix"),
        ("empty_pip_item", ctx.file.empty_pip_lines, "TC618.empty_item.fix"),
    ):
        if lines:
            extra = {}
            if variant == "dropped_pip_list":
                # the list conda installs instead: the last `- pip:` item (blind-u u026 names that one)
                kept = [n for n, text in enumerate(ctx.file.text.splitlines(), 1) if _PIP_ITEM.match(text)]
                if kept and kept[-1] not in lines:
                    extra["kept"] = {"line": kept[-1]}
            yield finding(
                "TC618",
                Severity.ERROR,
                variant=variant,
                lines=", ".join(str(n) for n in lines),
                evidence=ev(ctx, lines=[{"line": n} for n in lines], **extra),
                fixes=[Fix("file", msg(fix_key))],
            )
    for line, replaced in ctx.file.conda_mappings:
        yield finding(
            "TC618",
            Severity.WARNING,
            variant="conda_mapping",
            line=line,
            evidence=ev(ctx, mapping={"line": line}, replaced=[{"line": n} for n in replaced]),
            fixes=[Fix("file", msg("TC618.conda_mapping.fix"))],
        )
    single = [
        p
        for p in ctx.file.pip or ()
        if p.line.kind == "requirement"
        and p.line.version_spec.startswith("=")
        and not p.line.version_spec.startswith("==")
    ]
    if single:
        # `auraloss=0.4.0`: `=` is conda's operator, not pip's (PEP 508 has ==); pip reads the whole list as one
        # requirements file and stops at "Invalid requirement" before installing any of it
        yield finding(
            "TC618",
            Severity.ERROR,
            variant="pip_single_equals",
            entries=", ".join(p.text for p in single),
            evidence=ev(ctx, entries=[at(p) for p in single]),
            fixes=[Fix("file", msg("TC618.pip_single_equals.fix"))],
        )
    name = ctx.file.name
    if name is None:
        return
    bad = [c for c in rules["name_disallowed_chars"] if c in name]
    reserved = name in rules["reserved_names"]
    if bad or reserved:
        line = next((k.start_mark.line + 1 for k, _ in root.value if str(getattr(k, "value", "")) == "name"), 1)
        yield finding(
            "TC618",
            Severity.ERROR,
            variant="reserved_name" if reserved else "bad_name",
            name=name,
            characters=" ".join(repr(c) for c in bad),
            evidence=ev(ctx, name={"line": line, "value": name}),
            fixes=[Fix("file", msg("TC618.name.fix"))],
        )


RULE = Rule.declared(__name__, file_keys, whole_file=True)
