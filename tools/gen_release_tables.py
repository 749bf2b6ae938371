"""Generate the sourced release tables beside this package from public data (run by hand, output committed).

    python tools/gen_release_tables.py \
        --previous-versions previous-versions.md --previous-versions-source "pytorch/pytorch.github.io@788e28a ..." \
        --feedstock /path/to/pytorch-cpu-feedstock/.git --pyg /path/to/pytorch_geometric/.git

Inputs (none of them is committed here; only the TOML they produce is):
  * ``_get_started/previous-versions.md`` of pytorch/pytorch.github.io (the pytorch.org install matrix), a file;
  * conda-forge/pytorch-cpu-feedstock, a git directory: recipe/meta.yaml and .ci_support/ across its history;
  * pyg-team/pytorch_geometric, a git directory: the wheel table of docs/source/install/installation.rst
    (and README.md before it) and the conda build matrix of .github/workflows/building_pyg_conda.yml.

Outputs: pytorch_channel_builds.toml, conda_forge_builds.toml, pyg_wheels.toml. Each carries its inputs'
commits in its header, so a re-run on newer inputs shows in review what changed.
"""

from __future__ import annotations

import argparse
import re
import subprocess
from pathlib import Path

KNOWLEDGE = Path(__file__).resolve().parent.parent / "conda_torchcheck" / "knowledge"

# ---------------------------------------------------------------------------------------------------------
# previous-versions.md


def _tag_of(label: str) -> str | None:
    """'CUDA 11.8' → cu118, 'ROCM 5.4.2 (Linux only)' → rocm5.4.2, 'CPU only' → cpu."""
    m = re.match(r"#\s*CUDA\s+([0-9.]+)", label, re.I)
    if m:
        return "cu" + m.group(1).replace(".", "")
    m = re.match(r"#\s*ROCM\s*([0-9.]+)", label, re.I)
    if m and m.group(1).strip(".") and m.group(1) != "5.":
        return "rocm" + m.group(1)
    if re.match(r"#\s*CPU", label, re.I):
        return "cpu"
    return None


def _label_os(label: str, default: list[str]) -> list[str]:
    if re.search(r"\(Linux( only)?\)", label, re.I):
        return ["linux-64"]
    if re.search(r"\(Windows\)", label, re.I):
        return ["win-64"]
    return default


def _url_tag(url: str) -> str | None:
    m = re.search(r"download\.pytorch\.org/whl/(?:lts/[0-9.]+/)?((?:cu|rocm)[0-9.]+|cpu)(?:/|$)", url)
    return m.group(1) if m else None


def _parse_conda(cmd: str) -> dict:
    out: dict = {"channels": re.findall(r"-c\s+(\S+)", cmd)}
    for name in ("pytorch", "pytorch-cpu", "torchvision", "torchvision-cpu", "torchaudio"):
        m = re.search(rf"(?:^|\s){re.escape(name)}==?(\S+)", cmd)
        if m:
            out[name] = m.group(1)
    m = re.search(r"pytorch-cuda=(\S+)", cmd)
    if m:
        out["kind"], out["cuda"] = "pytorch-cuda", m.group(1)
    m = re.search(r"cudatoolkit=(\S+)", cmd)
    if m:
        out["kind"], out["cuda"] = "cudatoolkit", m.group(1)
    m = re.search(r"\scuda(\d\d)(\d)?(?:\s|$)", cmd)  # 1.0.0 / 0.4.x: cuda100, cuda90, cuda80, cuda75
    if m and "kind" not in out:
        digits = m.group(1) + (m.group(2) or "")
        out["kind"] = "cuda-metapackage"
        out["cuda"] = f"{digits[:-1]}.{digits[-1]}"
        out["metapackage"] = "cuda" + digits
    if re.search(r"\scpuonly(\s|$)", cmd):
        out["cpuonly"] = True
    return out


def _parse_pip(cmd: str) -> dict:
    out: dict = {}
    m = re.search(r"torch==(\S+)", cmd)
    if m:
        ver = m.group(1)
        out["torch"], _, out["local"] = ver.partition("+")
    for name in ("torchvision", "torchaudio"):
        m = re.search(rf"{name}==([^\s+]+)", cmd)
        if m:
            out[name] = m.group(1)
    m = re.search(r"(--index-url|--extra-index-url|-f)\s+(\S+)", cmd)
    if m:
        out["style"] = {"--index-url": "index-url", "--extra-index-url": "extra-index-url", "-f": "find-links"}[
            m.group(1)
        ]
        out["url"] = m.group(2)
    return out


def parse_previous_versions(text: str) -> tuple[dict[str, dict], dict]:
    """{version: record} for every '### vX.Y.Z' section, and the facts of the '< 1.0.0' part."""
    versions: dict[str, dict] = {}
    head, _, old = text.partition("\n## ")  # the first '## ' heading is the page's intro
    body = text
    old_start = re.search(r"^## .*(< ?1\.0\.0|미만)", body, re.M)
    modern = body[: old_start.start()] if old_start else body
    legacy = body[old_start.start() :] if old_start else ""
    for sec in re.split(r"^### ", modern, flags=re.M)[1:]:
        title = sec.splitlines()[0].strip()
        m = re.match(r"v(\d+\.\d+\.\d+)", title)
        if not m:
            continue
        ver = m.group(1)
        rec: dict = {"section": title, "conda": [], "pip": []}
        part = None
        oses: list[str] = []
        label = ""
        in_code = False
        for line in sec.splitlines()[1:]:
            s = line.strip()
            if s.startswith("#### "):
                part = s[5:].strip().lower()
                continue
            if s.startswith("##### "):
                sub = s[6:].strip()
                oses = ["osx"] if sub.upper().startswith("OSX") else ["linux-64", "win-64"]
                if re.search(r"Linux CUDA", sub):
                    oses = ["linux-64"]
                continue
            if s.startswith("```"):
                in_code = not in_code
                label = ""
                continue
            if not in_code or not s:
                continue
            if s.startswith("#"):
                if _tag_of(s) or s.lower().startswith("# conda"):
                    label = s
                continue
            if part == "conda" and s.startswith("conda install"):
                c = _parse_conda(s)
                c["os"] = _label_os(label, oses)
                c["label"] = label
                rec["conda"].append(c)
            elif part == "wheel" and (s.startswith("pip") or s.startswith("Download")):
                p = _parse_pip(s)
                if s.startswith("Download"):
                    url = re.search(r"https?://\S+", s)
                    p["url"] = url.group(0) if url else ""
                    p["style"] = "download"
                if "torch" not in p and p.get("style") != "download" and "-f" not in s:
                    continue  # a stray fragment ('pip3 install torch torchvision torchaudio --extra-index-url')
                p["os"] = _label_os(label, oses)
                p["label"] = label
                p["tag"] = _tag_of(label) if label else None
                if p.get("url") and _url_tag(p["url"]):
                    p["tag"] = _url_tag(p["url"])
                rec["pip"].append(p)
        versions[ver] = rec

    legacy_facts: dict = {"conda": [], "pip_pages": [], "wheels": []}
    for m in re.finditer(r"`(conda install [^`]+)`", legacy):
        c = _parse_conda(m.group(1))
        v = re.search(r"pytorch=(\S+)", m.group(1))
        c["pytorch"] = v.group(1) if v else ""
        legacy_facts["conda"].append(c)
    example = r'replace "([0-9.]+)" in the following commands with the desired version\s*\(i\.e\., "([0-9.]+)"\)'
    m = re.search(example, legacy)
    if m:
        legacy_facts["example_versions"] = [m.group(1), m.group(2)]
    for m in re.finditer(r"download\.pytorch\.org/whl/((?:cu\d+|cpu))/torch_stable\.html", legacy):
        if m.group(1) not in legacy_facts["pip_pages"]:
            legacy_facts["pip_pages"].append(m.group(1))
    wheel_link = r"\((https://download\.pytorch\.org/whl/(?:(cu\d+|cpu)/)?(torch(?:_cuda80)?-[^)]+\.whl))\)"
    for m in re.finditer(wheel_link, legacy):
        fname = m.group(3)
        wm = re.match(r"torch(?:_cuda80)?-([0-9][^-]*)-", fname)
        if wm:
            plat = "win-64" if "win_amd64" in fname else "osx-64" if "macosx" in fname else "linux-64"
            legacy_facts["wheels"].append((wm.group(1), m.group(2) or ("cu80" if "_cuda80" in fname else ""), plat))
    return versions, legacy_facts


# Where the mirror's old sections differ from upstream (checked against pytorch/pytorch.github.io@e3f009bb):
# typos in the mirror that are not in the upstream page are dropped.
ERRATA: dict[str, dict[str, str]] = {"1.9.1": {"pip_torchaudio": "0.9.0"}}


def _summarise(ver: str, rec: dict) -> dict:
    """One release's facts in the shape the TOML keeps."""
    out: dict = {"section": rec["section"]}
    conda = rec["conda"]
    first = next((c for c in conda if c.get("os") == ["osx"]), conda[0] if conda else None)
    pip_first = next((p for p in rec["pip"] if p.get("torchvision")), None)
    if first and (first.get("torchvision") or first.get("torchvision-cpu")):
        out["torchvision"] = first.get("torchvision") or first.get("torchvision-cpu") or ""
        out["torchaudio"] = first.get("torchaudio", "")
    elif pip_first:  # 1.8.2 LTS: its conda commands name no versions
        out["torchvision"] = pip_first.get("torchvision", "")
        out["torchaudio"] = pip_first.get("torchaudio", "")
    pip_vis = sorted({p["torchvision"] for p in rec["pip"] if p.get("torchvision") and p.get("tag") != "rocm4.0.1"})
    pip_aud = sorted({p["torchaudio"] for p in rec["pip"] if p.get("torchaudio")})
    for key, wrong in ERRATA.get(ver, {}).items():
        pip_aud = [a for a in pip_aud if not (key == "pip_torchaudio" and a == wrong)]
    if pip_vis and pip_vis != [out.get("torchvision")]:
        out["pip_torchvision"] = pip_vis
    if pip_aud and pip_aud != [out.get("torchaudio")] and out.get("torchaudio"):
        out["pip_torchaudio"] = pip_aud
    if conda:
        chans = sorted({c["channels"][0] for c in conda if c["channels"]})
        out["conda_channel"] = chans[0] if len(chans) == 1 else chans
        out["conda_osx"] = any(c["os"] == ["osx"] for c in conda)
        cuda: dict[str, dict] = {}
        for c in conda:
            if "cuda" not in c:
                continue
            entry = cuda.setdefault(c["cuda"], {"kind": c["kind"], "channels": [], "os": []})
            if entry["channels"] and entry["channels"] != c["channels"]:
                # 1.8.2 LTS: CUDA 11.1 needs -c nvidia on Linux but -c conda-forge on Windows
                by_os = entry.setdefault("channels_by_os", {o: list(entry["channels"]) for o in entry["os"]})
                for o in c["os"]:
                    by_os[o] = list(c["channels"])
            for ch in c["channels"]:
                if ch not in entry["channels"]:
                    entry["channels"].append(ch)
            for o in c["os"]:
                if o not in entry["os"]:
                    entry["os"].append(o)
            if c.get("metapackage"):
                entry["metapackage"] = c["metapackage"]
        out["conda_cuda"] = cuda
        cpu = [c for c in conda if "cuda" not in c and c["os"] != ["osx"]]
        out["cpuonly"] = any(c.get("cpuonly") for c in cpu)
        if any("pytorch-cpu" in c for c in cpu):
            out["cpu_package"] = "pytorch-cpu"
    else:
        out["conda_channel"] = ""
    tags: list[str] = []
    local: list[str] = []
    plain: list[str] = []
    styles: list[str] = []
    for p in rec["pip"]:
        tag = p.get("tag")
        if p.get("os") == ["osx"]:
            continue
        if tag and tag not in tags:
            tags.append(tag)
        if p.get("local") and p["local"] not in local:
            local.append(p["local"])
        if not p.get("url") and tag and tag.startswith("cu"):
            plain.append(tag)
        if p.get("style") and p["style"] not in styles:
            styles.append(p["style"])
    out["pip_tags"] = tags
    out["pip_local_shown"] = local
    if plain:
        out["pypi_default_cuda"] = plain[0]
    out["pip_index_style"] = styles
    if any("/whl/lts/" in (p.get("url") or "") for p in rec["pip"]):
        out["pip_lts"] = True
    return out


def _toml_value(v: object) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{_key(k)} = {_toml_value(x)}" for k, x in v.items()) + " }"
    if isinstance(v, int):
        return str(v)
    raise TypeError(type(v))


def _key(k: str) -> str:
    return k if re.fullmatch(r"[A-Za-z0-9_-]+", k) else _toml_value(k)


def _vkey(v: str) -> tuple:
    return tuple(int(x) if x.isdigit() else -1 for x in re.split(r"[.+]", v))


def write_pytorch_channel(text: str, source: str, dest: Path) -> None:
    versions, legacy = parse_previous_versions(text)
    lines = [
        "# GENERATED by tools/gen_release_tables.py: do not edit by hand; re-run it.",
        '# What the pytorch.org install matrix ("previous versions" page) lists per torch release: the pytorch',
        "# conda channel's CUDA variants (pytorch-cuda / cudatoolkit / cudaXY metapackage) with the channels the",
        "# command names and the OSes it is for, the CPU-only selector, the companions it installs, and the pip",
        "# wheel index tags of download.pytorch.org/whl/<tag>.",
        f"# Source [PREV]: {source}",
        "#",
        '# Keys: conda_channel = channel of the conda commands ("" = no conda command: not on the pytorch channel);',
        '# conda_cuda.<X> = { kind, channels (every -c of the command, in order), os }; "osx" = the page\'s OSX block',
        "# (osx-64, later osx-arm64: the page does not say which); cpuonly = the CPU-only command uses the",
        "# cpuonly selector; cpu_package = the CPU build's package name where it was not pytorch;",
        "# pip_tags = download.pytorch.org/whl/<tag> variants (Linux and Windows; rocm* Linux only);",
        "# pip_local_shown = tags the page writes as torch==X+tag; pypi_default_cuda = the CUDA variant installed",
        "# by a plain `pip install torch==X` on Linux (PyPI); pip_torchvision / pip_torchaudio = companions of",
        "# the pip commands where they differ from the conda ones.",
        "",
    ]
    for ver in sorted(versions, key=_vkey, reverse=True):
        s = _summarise(ver, versions[ver])
        lines.append(f'[builds."{ver}"]')
        lines.append('source = "PREV"')
        for k, v in s.items():
            if k == "conda_cuda":
                continue
            lines.append(f"{k} = {_toml_value(v)}")
        for cu, entry in s.get("conda_cuda", {}).items():
            lines.append(f'conda_cuda."{cu}" = {_toml_value(entry)}')
        lines.append("")
    lines.append("# The page's part for versions < 1.0.0: conda commands for 0.4.1 (\"replace 0.4.1 with the")
    lines.append('# desired version (i.e., 0.2.0)": older releases were on the pytorch channel too), pip wheel pages,')
    lines.append("# wheel files.")
    lines.append("[legacy]")
    lines.append('source = "PREV"')
    lines.append(f"example_versions = {_toml_value(legacy.get('example_versions', []))}")
    cmds = legacy["conda"]
    cuda_meta = sorted({c["metapackage"] for c in cmds if c.get("metapackage")})
    conda_versions = {c["pytorch"] for c in cmds if c["pytorch"]} | set(legacy.get("example_versions", []))
    lines.append(f"conda_versions = {_toml_value(sorted(conda_versions, key=_vkey))}")
    lines.append(f"conda_cuda_metapackages = {_toml_value(cuda_meta)}")
    lines.append(f"conda_cpu = {_toml_value(any('cuda' not in c for c in cmds))}")
    lines.append(f"pip_pages = {_toml_value(legacy['pip_pages'])}")
    wheels: dict[str, set[str]] = {}
    for v, tag, plat in legacy["wheels"]:
        wheels.setdefault(v, set()).add(f"{plat}:{tag or 'whl-root'}")
    lines.append("# torch wheel files the page links (version → platform:tag)")
    lines.append("[legacy.wheels]")
    for v in sorted(wheels, key=_vkey):
        lines.append(f'"{v}" = {_toml_value(sorted(wheels[v]))}')
    dest.write_text("\n".join(lines) + "\n", encoding="utf-8")


# ---------------------------------------------------------------------------------------------------------
# conda-forge/pytorch-cpu-feedstock


def _git(gitdir: str, *args: str) -> str:
    return subprocess.run(["git", "--git-dir", gitdir, *args], capture_output=True, text=True, check=False).stdout


def _skips(selector: str, plat: str, cuda: str) -> bool:
    """Does a recipe skip selector drop this (platform, CUDA) variant as a whole? Only selectors made of
    platform names and cuda_compiler_version comparisons count; one naming py, blas_impl, is_rc ... drops
    some builds of the variant, not the variant, and reads False."""
    names = {
        "win": plat.startswith("win"),
        "osx": plat.startswith("osx"),
        "linux": plat.startswith("linux"),
        "linux64": plat == "linux-64",
        "aarch64": plat == "linux-aarch64",
        "arm64": plat == "osx-arm64",
        "unix": not plat.startswith("win"),
    }
    expr = re.sub(
        r'cuda_compiler_version\s*(==|!=)\s*"([^"]+)"',
        lambda m: str((cuda == m.group(2)) == (m.group(1) == "==")),
        selector,
    )
    words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", expr)) - {"and", "or", "not", "True", "False"}
    if not words <= set(names):
        return False
    try:
        # the expression is a recipe selector reduced to True/False/and/or/not and the platform names above
        return bool(eval(expr, {"__builtins__": {}}, names))
    except SyntaxError:
        return False


WIN64_SINCE = "2.5.1"
_CI = re.compile(r"^(linux_64|linux_aarch64|linux_ppc64le|osx_64|osx_arm64|win_64)_")


def write_conda_forge(gitdir: str, dest: Path) -> None:
    head = _git(gitdir, "log", "-1", "--format=%H %cs").split()
    # first-parent: the main line only (a merged PR branch carries builds that were never uploaded)
    log = _git(
        gitdir, "log", "--first-parent", "--format=%H %cs", "--reverse", "--", "recipe/meta.yaml", ".ci_support"
    ).split("\n")
    seen: dict[str, dict] = {}
    for row in log:
        if not row.strip():
            continue
        commit, date = row.split()
        meta = _git(gitdir, "show", f"{commit}:recipe/meta.yaml")
        m = re.search(r'set version = "([^"]+)"', meta)
        if not m:
            continue
        version = m.group(1)
        if not re.fullmatch(r"\d+(\.\d+)*(\.post\d+)?", version):
            continue  # release candidates go to conda-forge/label/pytorch_rc, not main
        top = re.search(r"^package:\s*\n\s*name:\s*(\S+)", meta, re.M)
        top_name = top.group(1) if top else ""
        # top-level build skips only (the first 'build:' block): the outputs' own skips are per-output
        build = meta.split("\noutputs:", 1)[0]
        selectors = re.findall(r"^\s{2}skip:\s*true\s*#\s*\[([^\]]+)\]", build, re.M | re.I)
        files = _git(gitdir, "ls-tree", "--name-only", f"{commit}:.ci_support").split()
        plats: dict[str, set[str]] = {}
        for f in files:
            pm = _CI.match(f)
            if not pm or "is_rcTrue" in f:
                continue
            plat = pm.group(1).replace("_", "-", 1) if pm.group(1) != "linux_aarch64" else "linux-aarch64"
            plat = {"linux-64": "linux-64", "osx-64": "osx-64", "osx-arm64": "osx-arm64", "win-64": "win-64"}.get(
                plat, plat
            )
            cm = re.search(r"cuda_compiler_version(None|\d+\.\d+)", f)
            cuda = cm.group(1) if cm else "None"
            if any(_skips(sel, plat, cuda) for sel in selectors):
                continue
            plats.setdefault(plat, set()).add("cpu" if cuda == "None" else cuda)
        entry = seen.setdefault(version, {"first": date, "first_commit": commit[:10], "platforms": {}, "name": ""})
        entry["last"] = date
        entry["name"] = "pytorch-cpu" if top_name == "pytorch-cpu" else "pytorch"
        for p, vs in plats.items():
            entry["platforms"].setdefault(p, set()).update(vs)
        if "cuda-version" in meta:
            entry["cuda_version_dep"] = True
    lines = [
        "# GENERATED by tools/gen_release_tables.py: do not edit by hand; re-run it.",
        "# conda-forge's pytorch per version: platforms and CUDA variants (cuda_compiler_version of .ci_support,",
        "# minus variants the recipe skips), read from every commit of recipe/meta.yaml and .ci_support/.",
        f"# Source [FS]: conda-forge/pytorch-cpu-feedstock history up to {head[0]} ({head[1]}).",
        "# A version is listed when some commit's recipe carried it (rc versions excluded: label pytorch_rc);",
        "# variants are the union over that version's commits (rebuilds add or drop variants).",
        "# package = the recipe's first output name (pytorch-cpu in 2018-2019, later pytorch + libtorch).",
        "# ci_only = platforms with a .ci_support config but no upload (win-64 before 2.5.1).",
        "# cuda_version_dep = the recipe names cuda-version (the CUDA 11.x builds then carry cudatoolkit +",
        "# cuda-version, the 12.x builds cuda-version + the split cuda-* packages).",
        "",
    ]
    for v in sorted(seen, key=_vkey):
        e = seen[v]
        lines.append(f'[versions."{v}"]')
        lines.append('source = "FS"')
        lines.append(f'package = "{e["name"]}"')
        lines.append(f'first_seen = "{e["first"]}"')
        lines.append(f'first_commit = "{e["first_commit"]}"')
        if e.get("cuda_version_dep"):
            lines.append("cuda_version_dep = true")
        for p in sorted(e["platforms"]):
            # win-64 configs existed in .ci_support long before anything was uploaded: conda-forge's first
            # win-64 pytorch is 2.5.1 (build 9, Jan 2025 [FS], conda_channels.toml win64_since); earlier kept apart
            where = "ci_only" if p == "win-64" and _vkey(v) < _vkey(WIN64_SINCE) else "platforms"
            lines.append(f"{where}.{_key(p)} = {_toml_value(sorted(e['platforms'][p], key=_vkey))}")
        lines.append("")
    dest.write_text("\n".join(lines), encoding="utf-8")


# ---------------------------------------------------------------------------------------------------------
# pyg-team/pytorch_geometric

_PYG_ROW = re.compile(r"\$\{TORCH\}=([0-9.]+)\S*\s+and\s+\S*\$\{CUDA\}=([a-z0-9|]+)")


def write_pyg(gitdir: str, dest: Path) -> None:
    head = _git(gitdir, "log", "-1", "--format=%H %cs").split()
    wheels: dict[str, dict] = {}
    for path in ("README.md", "docs/source/install/installation.rst", "docs/source/notes/installation.rst"):
        for row in _git(gitdir, "log", "--format=%H %cs", "--reverse", "--", path).split("\n"):
            if not row.strip():
                continue
            commit, date = row.split()
            text = _git(gitdir, "show", f"{commit}:{path}")
            for m in _PYG_ROW.finditer(text):
                page = m.group(1)
                e = wheels.setdefault(page, {"tags": set(), "first": date, "commit": commit[:10], "path": path})
                e["tags"].update(t for t in m.group(2).split("|") if t)
            note = re.search(r"Binaries of older versions are also provided for [^\n]*?PyTorch`? ([^\n]+)", text)
            if note and path.endswith("installation.rst"):
                older = note.group(1)
    older_versions = sorted(set(re.findall(r"\d+\.\d+\.\d+", older)), key=_vkey) if "older" in dir() else []
    conda: dict[str, str] = {}
    wf = ".github/workflows/building_pyg_conda.yml"
    for row in _git(gitdir, "log", "--format=%H %cs", "--reverse", "--", wf).split("\n"):
        if not row.strip():
            continue
        commit, date = row.split()
        text = _git(gitdir, "show", f"{commit}:{wf}")
        m = re.search(r"torch-version:\s*\[([^\]]*)\]", text)
        if m:
            for v in re.findall(r"[0-9]+\.[0-9]+\.[0-9]+", m.group(1)):
                conda.setdefault(v, date)
    lines = [
        "# GENERATED by tools/gen_release_tables.py: do not edit by hand; re-run it.",
        "# PyG's extension wheels (pyg_lib, torch_scatter, torch_sparse, torch_cluster, torch_spline_conv): one",
        "# find-links page per torch minor, https://data.pyg.org/whl/torch-<page>+<tag>.html, read from every",
        "# version of PyG's install docs; and the torch versions of the pyg conda channel's build matrix.",
        "# The wheels on those pages carry +pt<major><minor><tag> local versions (torch_scatter-2.1.2+pt24cu121).",
        f"# Source [PYG]: pyg-team/pytorch_geometric history up to {head[0]} ({head[1]}).",
        "",
        "[wheels]",
        "# page = the torch version in the page name (the .0 of the minor); tags = the CUDA/CPU variants listed.",
    ]
    for page in sorted(wheels, key=_vkey):
        e = wheels[page]
        tags = sorted(e["tags"], key=lambda t: (t != "cpu", _vkey(t[2:]) if t.startswith("cu") else ()))
        lines.append(
            f'"{page}" = {{ tags = {_toml_value(tags)}, source = "PYG", first_seen = "{e["first"]}", '
            f'commit = "{e["commit"]}" }}'
        )
    lines.append("")
    lines.append("[older]")
    lines.append("# 'Binaries of older versions are also provided for PyTorch …' (installation.rst at HEAD)")
    lines.append('source = "PYG"')
    lines.append(f"torch_versions = {_toml_value(older_versions)}")
    lines.append("")
    lines.append("[conda]")
    lines.append("# torch-version matrix of building_pyg_conda.yml over its history (a workflow_dispatch job: the")
    lines.append("# matrix says what was meant to be built, not that every cell was uploaded).")
    lines.append('source = "PYG"')
    lines.append(f"matrix_torch_versions = {_toml_value(sorted(conda, key=_vkey))}")
    lines.append("# the newest torch the channel has uploads for: the 2.5.0 matrix cells were not published")
    lines.append("# (issue 13's review of anaconda.org/pyg/pyg; quick-start.html offered conda up to 2.5, then")
    lines.append("# 'Conda packages are no longer available' from 2.6)")
    lines.append('newest_uploaded = "2.4"')
    dest.write_text("\n".join(lines) + "\n", encoding="utf-8")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--previous-versions")
    ap.add_argument("--previous-versions-source", default="pytorch/pytorch.github.io _get_started/previous-versions.md")
    ap.add_argument("--feedstock")
    ap.add_argument("--pyg")
    args = ap.parse_args()
    if args.previous_versions:
        text = Path(args.previous_versions).read_text(encoding="utf-8")
        write_pytorch_channel(text, args.previous_versions_source, KNOWLEDGE / "pytorch_channel_builds.toml")
    if args.feedstock:
        write_conda_forge(args.feedstock, KNOWLEDGE / "conda_forge_builds.toml")
    if args.pyg:
        write_pyg(args.pyg, KNOWLEDGE / "pyg_wheels.toml")


if __name__ == "__main__":
    main()
