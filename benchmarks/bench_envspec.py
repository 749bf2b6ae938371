"""How long `spec check` / `spec fix` take, side by side with conda's own reading of the same files.

Run by hand:  .venv/bin/python benchmarks/bench_envspec.py [--repeat 30]
With the peer (conda's `conda.env.env.from_file`: YAML load + schema + MatchSpec per line), run it with a
Python that can import conda, e.g. the scratch conda venv:
              /tmp/conda-venv/bin/python benchmarks/bench_envspec.py

Files: the golden seed (the Chinese articles' environment.yml, 11 lines), the largest golden file, and a
generated "large" file (400 conda dependencies, 150 pip lines, comments) to see how the rewrite scales.
In-process medians after one warm-up; plus whole-process `conda-torchcheck spec check` wall time (includes
interpreter start-up and the ruamel.yaml import).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from conda_torchcheck.envspec import check_path, fix_path  # noqa: E402

GOLDEN = ROOT / "tests" / "envspec" / "golden"


def large_file(directory: Path) -> Path:
    lines = ["# generated: many dependencies", "name: big", "channels:", "  - pytorch", "  - nvidia", "  - defaults"]
    lines += ["dependencies:", "  - python=3.11", "  - pytorch", "  - torchvision", "  - pytorch-cuda=12.1"]
    lines += [f"  - package-{n}=1.{n % 10}  # note {n}" for n in range(400)]
    lines += ["  - pip:"] + [f"    - pypkg-{n}=={n}.0" for n in range(150)]
    path = directory / "large.yml"
    path.write_text("\n".join(lines) + "\n")
    return path


def median_ms(fn, repeat: int) -> float:
    fn()
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def peer(path: Path):
    try:
        from conda.env import env as conda_env
    except ImportError:
        return None
    return lambda: conda_env.from_file(str(path))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        files = {
            "seed (11 lines)": GOLDEN / "seed_zh_pytorch_nvidia.in.yml",
            "pinned README (18 lines)": GOLDEN / "pytorch_channel_pinned.in.yml",
            "large (560 entries)": large_file(Path(tmp)),
        }
        print(f"{'file':28} {'spec check':>11} {'spec fix':>10} {'conda from_file':>16}")
        for label, path in files.items():
            check = median_ms(lambda p=path: check_path(p), args.repeat)
            fix = median_ms(lambda p=path: fix_path(p), args.repeat)
            other = peer(path)
            peer_ms = f"{median_ms(other, args.repeat):13.1f} ms" if other else "   (no conda)"
            print(f"{label:28} {check:8.1f} ms {fix:7.1f} ms {peer_ms:>16}")
        seed = files["seed (11 lines)"]
        walls = []
        for _ in range(max(5, args.repeat // 3)):
            start = time.perf_counter()
            subprocess.run(
                [sys.executable, "-m", "conda_torchcheck", "spec", "check", str(seed)], capture_output=True, check=False
            )
            walls.append((time.perf_counter() - start) * 1000)
        print(f"whole process `spec check` on the seed: {statistics.median(walls):.0f} ms (median of {len(walls)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
