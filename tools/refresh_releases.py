"""Refresh the release knowledge from its public sources (run by hand; review the diff; commit the output).

    python tools/refresh_releases.py                      # read PyPI; print what the tables lack or state otherwise
    python tools/refresh_releases.py --write              # ... and add the minors they lack to torch_releases.toml
    python tools/refresh_releases.py --record DIR         # ... and save the trimmed JSON it read (a test's snapshot)
    python tools/refresh_releases.py --replay DIR         # read such a recording instead of the network
    python tools/refresh_releases.py --previous-versions previous-versions.md --feedstock FEEDSTOCK/.git --pyg PYG/.git
                                                          # ... and regenerate the generated tables (gen_release_tables)

Sources, each a public one:
  * PyPI's JSON API (https://pypi.org/pypi/<name>/json) for torch, torchvision and torchaudio: the versions,
    each file's upload date and Requires-Python, the wheel tags (which CPython ABIs and platforms a release has
    wheels for), and the newest release's Requires-Dist (the CUDA of the default Linux wheel);
  * the pytorch.org install matrix (pytorch/pytorch.github.io ``_get_started/previous-versions.md``), the
    conda-forge feedstock's history and PyG's: read by tools/gen_release_tables.py from local copies.

A new minor's row gets what PyPI proves: the Python range of its CPython wheels, its companions (the torchvision
and torchaudio releases uploaded the day its first patch was), and the default Linux wheel's CUDA as its one
known pip CUDA tag (the download.pytorch.org variants are not in PyPI's data: add them from the release notes).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
KNOWLEDGE = ROOT / "conda_torchcheck" / "knowledge"
TABLE = KNOWLEDGE / "torch_releases.toml"
PROJECTS = ("torch", "torchvision", "torchaudio")
PYPI = "https://pypi.org/pypi/{name}/json"
#: a recording keeps releases from these on (the test needs the newest rows, not 1.x's 2,000 files)
RECORD_FROM = {"torch": (2, 12), "torchvision": (0, 27), "torchaudio": (2, 11)}

_FINAL = re.compile(r"^(\d+)\.(\d+)(?:\.(\d+))?$")
_WHEEL = re.compile(r"^[^-]+-[^-]+-(?P<python>[^-]+)-(?P<abi>[^-]+)-(?P<platform>[^-]+)\.whl$")
_CPYTHON = re.compile(r"^cp(\d)(\d+)(t?)$")
# the default Linux wheel's CUDA: cuda-toolkit[...]==13.2.2 (2.15), or the nvidia-cuda-runtime-cu12==12.8.90 pin
_CUDA_PIN = re.compile(r"^(?:cuda-toolkit(?:\[[^\]]*\])?|nvidia-cuda-runtime(?:-cu\d+)?)\s*==\s*(\d+)\.(\d+)")


def _release(version: str) -> tuple[int, ...] | None:
    m = _FINAL.match(version)
    return tuple(int(x) for x in m.groups(default="0")) if m else None


# ---------------------------------------------------------------------------------------------------------
# reading


def fetch(name: str, replay: Path | None = None) -> dict:
    """PyPI's JSON for a project, trimmed to what this script reads (from a recording when ``replay``)."""
    if replay is not None:
        return json.loads((replay / f"{name}.json").read_text(encoding="utf-8"))
    with urllib.request.urlopen(PYPI.format(name=name), timeout=60) as response:
        return trim(name, json.load(response))


def trim(name: str, data: dict) -> dict:
    """Only the fields read here, and only the releases from RECORD_FROM on (a small, reviewable recording)."""
    since = RECORD_FROM.get(name, (0, 0))
    info = data.get("info", {})
    releases = {}
    for version, files in data.get("releases", {}).items():
        key = _release(version)
        if key is None or key[:2] < since:
            continue
        releases[version] = [
            {k: f.get(k) for k in ("filename", "upload_time", "requires_python", "yanked")} for f in files
        ]
    return {
        "info": {k: info.get(k) for k in ("name", "version", "requires_python", "requires_dist")},
        "releases": releases,
    }


# ---------------------------------------------------------------------------------------------------------
# what PyPI says per minor


@dataclass
class MinorFacts:
    minor: str
    patches: list[str] = field(default_factory=list)
    released: str = ""  # the first patch's first upload, YYYY-MM-DD
    requires_python: str | None = None
    pythons: list[str] = field(default_factory=list)  # CPython minors with wheels: "3.11"
    free_threaded: list[str] = field(default_factory=list)  # "3.14t"
    platforms: list[str] = field(default_factory=list)
    default_cuda: str | None = None  # "cu132": the PyPI Linux wheel of the newest release, when it is this minor
    torchvision: str | None = None
    torchaudio: str | None = None
    #: torch patch -> the torchvision uploaded with it, where it is not <torchvision minor>.<torch patch>
    torchvision_patch: dict[str, str] = field(default_factory=dict)

    @property
    def python_range(self) -> list[str] | None:
        if not self.pythons:
            return None
        ordered = sorted(self.pythons, key=lambda v: tuple(int(x) for x in v.split(".")))
        return [ordered[0], ordered[-1]]


def _minor_of(key: tuple[int, ...]) -> str:
    return f"{key[0]}.{key[1]}"


def torch_minors(torch: dict) -> dict[str, MinorFacts]:
    out: dict[str, MinorFacts] = {}
    for version, files in sorted(torch["releases"].items(), key=lambda kv: _release(kv[0]) or ()):
        key = _release(version)
        live = [f for f in files if not f.get("yanked")]
        if key is None or not live:
            continue
        facts = out.setdefault(_minor_of(key), MinorFacts(_minor_of(key)))
        facts.patches.append(version)
        if not facts.released:
            facts.released = min(f["upload_time"] for f in live)[:10]
            facts.requires_python = next((f["requires_python"] for f in live if f.get("requires_python")), None)
        for f in live:
            m = _WHEEL.match(f["filename"])
            if not m:
                continue
            cp = _CPYTHON.match(m["abi"])
            if cp:
                py = f"{cp[1]}.{cp[2]}"
                target = facts.free_threaded if cp[3] else facts.pythons
                name = py + cp[3]
                if name not in target:
                    target.append(name)
            for platform in m["platform"].split("."):
                if platform not in facts.platforms:
                    facts.platforms.append(platform)
    newest = _release(torch["info"]["version"] or "")
    if newest is not None and _minor_of(newest) in out:
        out[_minor_of(newest)].default_cuda = default_cuda(torch["info"].get("requires_dist") or [])
    return out


def default_cuda(requires_dist: list[str]) -> str | None:
    for requirement in requires_dist:
        m = _CUDA_PIN.match(requirement.split(";", 1)[0].strip())
        if m:
            return f"cu{m[1]}{m[2]}"
    return None


def companion_on(day: str, project: dict) -> str | None:
    """The project's release uploaded on ``day`` (PyTorch uploads its companions with torch), or None."""
    for version, files in sorted(project["releases"].items(), key=lambda kv: _release(kv[0]) or ()):
        key = _release(version)
        if key is not None and any(f["upload_time"][:10] == day for f in files if not f.get("yanked")):
            return version
    return None


def _patch_days(torch: dict) -> dict[str, str]:
    """torch patch -> the day its first file was uploaded."""
    return {
        version: min(f["upload_time"] for f in files)[:10]
        for version, files in torch["releases"].items()
        if _release(version) is not None and files
    }


def read_pypi(replay: Path | None = None, record: Path | None = None) -> dict[str, MinorFacts]:
    data = {name: fetch(name, replay) for name in PROJECTS}
    if record is not None:
        record.mkdir(parents=True, exist_ok=True)
        for name, trimmed in data.items():
            text = json.dumps(trimmed, indent=1, sort_keys=True, ensure_ascii=False)
            (record / f"{name}.json").write_text(text + "\n", encoding="utf-8")
    minors = torch_minors(data["torch"])
    days = _patch_days(data["torch"])
    for facts in minors.values():
        vision = companion_on(facts.released, data["torchvision"])
        audio = companion_on(facts.released, data["torchaudio"])
        facts.torchvision = _minor_of(_release(vision)) if vision else None
        facts.torchaudio = _minor_of(_release(audio)) if audio else None
        for patch in facts.patches:
            seen = companion_on(days[patch], data["torchvision"])
            if seen and facts.torchvision and seen != f"{facts.torchvision}.{_release(patch)[2]}":
                facts.torchvision_patch[patch] = seen
    return minors


# ---------------------------------------------------------------------------------------------------------
# against the table


def differences(minors: dict[str, MinorFacts], table: dict) -> list[str]:
    """What PyPI says that the table lacks or states otherwise, one line each."""
    rows = table["releases"]
    out = []
    for minor, facts in minors.items():
        row = rows.get(minor)
        if row is None:
            out.append(f"{minor}: not in torch_releases.toml (PyPI has {', '.join(facts.patches)})")
            continue
        py = facts.python_range
        if py and py != list(row["python"]):
            out.append(f"{minor}: python {row['python']} in the table, CPython wheels on PyPI for {py[0]}-{py[1]}")
        for name in ("torchvision", "torchaudio"):
            seen = getattr(facts, name)
            if seen and row.get(name) not in (seen, "same"):
                out.append(f"{minor}: {name} {row.get(name)!r} in the table, {seen} uploaded with torch {minor}.0")
        if facts.default_cuda and facts.default_cuda not in row.get("pip_cuda", ()):
            out.append(f"{minor}: the PyPI Linux wheel is {facts.default_cuda}, not in pip_cuda {row.get('pip_cuda')}")
    return out


def row_toml(facts: MinorFacts) -> str:
    """A torch_releases.toml row for a minor the table lacks, from what PyPI proves (source [PYPI])."""
    py = facts.python_range or ["", ""]
    lines = [
        f'[releases."{facts.minor}"]',
        'source = "[PYPI]"',
        f"# [PYPI] torch {', '.join(facts.patches)} (first uploaded {facts.released}), Requires-Python "
        f"{facts.requires_python}; CPython wheels {', '.join(facts.pythons)}"
        + (f" (free-threaded {', '.join(facts.free_threaded)})" if facts.free_threaded else "")
        + f"; {', '.join(facts.platforms)}",
    ]
    lines.append(
        f"# pip_cuda: only the PyPI Linux wheel's CUDA ({facts.default_cuda or 'none named'}) is in PyPI's data; "
        "list the download.pytorch.org variants from the release notes, then drop pip_cuda_partial"
    )
    lines += [
        f'torchvision = "{facts.torchvision or ""}"',
        *(
            [
                "torchvision_patch = { "
                + ", ".join(f'"{k}" = ["{v}"]' for k, v in facts.torchvision_patch.items())
                + " }"
            ]
            if facts.torchvision_patch
            else []
        ),
        f'torchaudio = "{facts.torchaudio or ""}"',
        f'python = ["{py[0]}", "{py[1]}"]',
        f"pip_cuda = {json.dumps([facts.default_cuda] if facts.default_cuda else [])}",
        "pip_cuda_partial = true",
        "pytorch_cuda = []",
    ]
    return "\n".join(lines) + "\n"


def add_rows(text: str, rows: list[str]) -> str:
    """The table's text with the new rows inserted after the last ``[releases."X.Y"]`` (before ``[channels]``)."""
    at = text.index("\n[channels]\n")
    return text[:at].rstrip("\n") + "\n\n" + "\n".join(rows) + "\n" + text[at:]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    ap.add_argument("--replay", type=Path, help="read a recording (DIR/<project>.json) instead of PyPI")
    ap.add_argument("--record", type=Path, help="save the trimmed JSON read to DIR/<project>.json")
    ap.add_argument("--write", action="store_true", help="add the minors the table lacks to torch_releases.toml")
    ap.add_argument("--table", type=Path, default=TABLE)
    ap.add_argument("--previous-versions", help="pytorch.github.io _get_started/previous-versions.md (a file)")
    ap.add_argument("--previous-versions-source", default="pytorch/pytorch.github.io _get_started/previous-versions.md")
    ap.add_argument("--feedstock", help="conda-forge/pytorch-cpu-feedstock (a git directory)")
    ap.add_argument("--pyg", help="pyg-team/pytorch_geometric (a git directory)")
    ap.add_argument("--out", type=Path, default=KNOWLEDGE, help="where the generated tables go (the package's)")
    args = ap.parse_args(argv)

    sys.path.insert(0, str(ROOT))
    from conda_torchcheck._toml import load_toml_text

    minors = read_pypi(args.replay, args.record)
    text = args.table.read_text(encoding="utf-8")
    table = load_toml_text(text)
    found = differences(minors, table)
    print("\n".join(found) if found else "torch_releases.toml agrees with PyPI")
    missing = [facts for minor, facts in minors.items() if minor not in table["releases"]]
    if args.write and missing:
        args.table.write_text(add_rows(text, [row_toml(f) for f in missing]), encoding="utf-8")
        print(f"added {', '.join(f.minor for f in missing)} to {args.table}: review the rows, then commit")

    if args.previous_versions or args.feedstock or args.pyg:
        from tools import gen_release_tables as gen

        if args.previous_versions:
            page = Path(args.previous_versions).read_text(encoding="utf-8")
            gen.write_pytorch_channel(page, args.previous_versions_source, args.out / "pytorch_channel_builds.toml")
        if args.feedstock:
            gen.write_conda_forge(args.feedstock, args.out / "conda_forge_builds.toml")
        if args.pyg:
            gen.write_pyg(args.pyg, args.out / "pyg_wheels.toml")
    return 0


if __name__ == "__main__":
    sys.exit(main())
