"""explain's time against the size of adversarial pastes: it must stay linear, at most 1 s per MB.

Run by hand:  .venv/bin/python benchmarks/bench_explain_adversarial.py [--sizes 0.25,1,4] [--repeat 1]

For each shape below, the whole `explain --no-env -f FILE` verb is run in-process at each size (the median of
--repeat runs after one warm-up) and the per-MB slope between the smallest and the largest size is printed;
a slope above 1 s/MB, or a time per MB that grows with the size, is a regression. The shapes are the ones that
were super-linear (issue: hostile and odd environments):
- repeated-dll: one `DLL load failed` line repeated (a CI log that retried an import);
- distinct-dll: WinError 126 lines naming a different DLL in a different env each (a fleet's log);
- undefined-symbol: one undefined-symbol message on a single line of 1-4 MB (a mangled name gone wild);
- pth-lines / blank-lines: traceback frames and blank lines between errors (the context windows' worst case).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from conda_torchcheck.cli.main import main

MB = 1 << 20


def _fill(line_of, size: int) -> str:
    out, total, i = [], 0, 0
    while total < size:
        line = line_of(i)
        out.append(line)
        total += len(line)
        i += 1
    return "".join(out)[:size]


def repeated_dll(size: int) -> str:
    return _fill(
        lambda i: "ImportError: DLL load failed while importing _C: The specified module could not be found.\n", size
    )


def distinct_dll(size: int) -> str:
    return _fill(
        lambda i: (
            f'OSError: [WinError 126] The specified module could not be found. Error loading "C:\\envs\\e{i}'
            f'\\Lib\\site-packages\\torch\\lib\\c10_{i}.dll" or one of its dependencies.\n'
        ),
        size,
    )


def undefined_symbol(size: int) -> str:
    head = "ImportError: /opt/conda/lib/python3.11/site-packages/torch/lib/libtorch_cuda.so: undefined symbol: "
    return head + ("_ZN3c10" * (size // 7 + 1))[: max(0, size - len(head))]


def frames_between_errors(size: int) -> str:
    frame = '  File "/opt/conda/lib/python3.11/site-packages/torch/__init__.py", line 1, in <module>\n'
    return _fill(
        lambda i: (
            (frame * 40 + "ImportError: libcudnn.so.9: cannot open shared object file: No such file or directory\n")
            if i % 41 == 0
            else frame
        ),
        size,
    )


def blank_lines(size: int) -> str:
    return _fill(lambda i: "\n" * 200 + "OSError: [WinError 127] The specified procedure could not be found\n", size)


SHAPES = {
    "repeated-dll": repeated_dll,
    "distinct-dll": distinct_dll,
    "undefined-symbol": undefined_symbol,
    "frames-between": frames_between_errors,
    "blank-lines": blank_lines,
}


def run_once(path: Path) -> float:
    start = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        code = main(["explain", "--no-env", "-f", str(path)])
    assert code in (0, 1), code
    return time.perf_counter() - start


def main_bench() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="0.25,1,4", help="paste sizes in MB, comma-separated")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--shapes", default=",".join(SHAPES))
    args = parser.parse_args()
    sizes = [float(s) for s in args.sizes.split(",")]
    worst = 0.0
    print(f"{'shape':18} " + " ".join(f"{s:>8g}MB" for s in sizes) + "   slope s/MB")
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.shapes.split(","):
            times = []
            for size in sizes:
                path = Path(tmp) / f"{name}-{size}.txt"
                path.write_text(SHAPES[name](int(size * MB)), encoding="utf-8")
                run_once(path)  # warm-up: the pattern table, the catalogs
                times.append(statistics.median(run_once(path) for _ in range(args.repeat)))
            slope = (times[-1] - times[0]) / (sizes[-1] - sizes[0]) if len(sizes) > 1 else times[0] / sizes[0]
            worst = max(worst, slope)
            print(f"{name:18} " + " ".join(f"{t:>9.2f}s" for t in times) + f"   {slope:8.2f}")
    print(f"worst slope: {worst:.2f} s/MB (target: <= 1 s/MB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main_bench())
