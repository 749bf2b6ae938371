"""How long `explain` takes to read pasted text, and the import test to run, on generated input.

Run by hand:  .venv/bin/python benchmarks/bench_explain.py [--repeat 5]

Measures (median of --repeat runs after one warm-up):
- recognise() on a short traceback, a 1 MB bug-report thread (noise + 40 errors), a 10 MB CI log, and
  adversarial lines (200,000 characters of spaces / path characters / colons) that make naive regexes
  quadratic or worse;
- the whole `explain` verb in-process: --no-env, and against a fixture conda env (runs the confirming checks);
- the opt-in import test against a real venv of this Python whose `torch` is a stub (interpreter start-up cost).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import statistics
import sys
import tempfile
import time
import venv
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from conda_torchcheck.cli.main import main
from conda_torchcheck.explain.recognise import recognise
from tests.envbuilder import EnvBuilder

TRACEBACK = r"""Traceback (most recent call last):
  File "C:\Users\me\proj\app.py", line 3, in <module>
    import torch
  File "C:\Users\me\miniconda3\envs\t\Lib\site-packages\torch\__init__.py", line 148, in <module>
    raise err
OSError: [WinError 126] 找不到指定的模块。 Error loading "C:\Users\me\miniconda3\envs\t\Lib\site-packages\torch\lib\fbgemm.dll" or one of its dependencies.
"""  # noqa: E501
ERRORS = [
    TRACEBACK,
    "ImportError: /x/envs/a/lib/python3.11/site-packages/torch/lib/libtorch_cpu.so: undefined symbol: iJIT_NotifyEvent",
    "OMP: Error #15: Initializing libiomp5md.dll, but found libiomp5md.dll already initialized.",
    "ImportError: /lib/x86_64-linux-gnu/libstdc++.so.6: version `GLIBCXX_3.4.30' not found (required by /a/b.so)",
    "ImportError: DLL load failed while importing _C: 动态链接库(DLL)初始化例程失败。",
    "RuntimeError: operator torchvision::nms does not exist",
]
NOISE = (
    "2026-09-30 10:00:00 INFO  step 1234/99999 loss=0.1234 lr=3e-4 grad_norm=1.0 path=/data/shards/part-00001.parquet\n"
    "> quoted reply: have you tried reinstalling? `pip install torch --index-url https://download.pytorch.org/whl/cu121`\n"
)


def thread(size: int, errors: int) -> str:
    chunks = []
    per = max(1, size // (len(NOISE) * errors))
    for i in range(errors):
        chunks.append(NOISE * per)
        chunks.append(ERRORS[i % len(ERRORS)] + "\n")
    return "".join(chunks)


ADVERSARIAL = {
    "200k spaces then ':'": " " * 200_000 + ":",
    "200k path chars": "x/" * 100_000,
    "'.so' x 70k": "lib" + ".so" * 70_000,
    "': undefined symbol: x' x 20k": ": undefined symbol: x" * 20_000,
    "[WinError 126] + 200k chars": "[WinError 126]" + "x" * 200_000,
}


def timed(fn, repeat: int) -> float:
    fn()
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        runs.append(time.perf_counter() - start)
    return statistics.median(runs)


def quiet(argv: list[str]) -> int:
    with contextlib.redirect_stdout(io.StringIO()):
        return main(argv)


def main_bench() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    rows: list[tuple[str, float, str]] = []

    short = TRACEBACK
    mb1 = thread(1_000_000, 40)
    mb10 = thread(10_000_000, 40)
    rows.append(("recognise: one traceback", timed(lambda: recognise(short), args.repeat), f"{len(short)} chars"))
    rows.append(
        (
            "recognise: 1 MB thread, 40 errors",
            timed(lambda: recognise(mb1), args.repeat),
            f"{len(recognise(mb1))} found",
        )
    )
    rows.append(("recognise: 10 MB CI log, 40 errors", timed(lambda: recognise(mb10), max(1, args.repeat // 2)), ""))
    for name, text in ADVERSARIAL.items():
        rows.append((f"recognise: {name}", timed(lambda t=text: recognise(t), args.repeat), ""))

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        rows.append(
            (
                "explain --no-env (CLI, in-process)",
                timed(lambda: quiet(["explain", "--no-env", short]), args.repeat),
                "",
            )
        )
        b = EnvBuilder(root / "broken")
        b.conda_pytorch("2.2.2", "py3.11_cuda12.1_cudnn8.9.2_0", channel="pytorch", depends=("mkl >=2018",))
        b.conda_record("mkl", "2024.1.0", "h0000000_691", channel="defaults")
        text = f"ImportError: {b.site_packages}/torch/lib/libtorch_cpu.so: undefined symbol: iJIT_NotifyEvent"
        rows.append(
            (
                "explain -p <conda env> (confirms TC105)",
                timed(lambda: quiet(["explain", "-p", str(b.prefix), text]), args.repeat),
                "",
            )
        )

        prefix = root / "venv"
        venv.EnvBuilder(with_pip=False, symlinks=sys.platform != "win32").create(prefix)
        site = next(prefix.glob("lib/python3*/site-packages"), prefix / "Lib" / "site-packages")
        (site / "torch").mkdir(parents=True)
        (site / "torch" / "__init__.py").write_text(
            "__version__ = '2.5.1+cpu'\nclass version:\n    cuda = None\nclass cuda:\n"
            "    @staticmethod\n    def is_available():\n        return False\n",
            encoding="utf-8",
        )
        rows.append(
            (
                "check --import-test --only TC7 (real venv, stub torch)",
                timed(lambda: quiet(["check", "-p", str(prefix), "--import-test", "--only", "TC7"]), args.repeat),
                "",
            )
        )

    width = max(len(r[0]) for r in rows)
    print(f"{'case':<{width}}  median")
    for name, seconds, note in rows:
        print(f"{name:<{width}}  {seconds * 1000:8.1f} ms  {note}")


if __name__ == "__main__":
    main_bench()
