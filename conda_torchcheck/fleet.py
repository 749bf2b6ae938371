"""``check --all-envs`` / ``conda torchcheck --all``: every env on the machine, one line each and a total.

Each env is checked as ``check`` checks it (without file hashes unless asked: reading every torch file of
twenty envs is minutes, not seconds). Envs are independent, so they run in worker processes when there are
enough of them to pay for the workers; what every env shares (this host's facts, the knowledge tables, the
message catalogs) is read once per worker. An env that cannot be read is one line of the result, not the end of
the run. The exit code is the worst of all: 2 when one could not be read, 1 when one has an error finding.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

#: below this many envs, worker start-up costs more than it saves
PARALLEL_FROM = 4


#: seconds one env may take before it is reported as not finished and the run goes on (an env on a hung
#: network file system must not stop the audit of the others); CONDA_TORCHCHECK_ENV_SECONDS sets it
ENV_SECONDS = 300.0


def env_seconds() -> float:
    wanted = os.environ.get("CONDA_TORCHCHECK_ENV_SECONDS", "")
    try:
        value = float(wanted)
    except ValueError:
        return ENV_SECONDS
    return value if 0 < value < 86_400 else ENV_SECONDS


class EnvTimeout(Exception):
    pass


def _deadline(seconds: float):
    """A context that raises EnvTimeout in this (main) thread after ``seconds``, where POSIX timers exist."""
    import contextlib
    import signal
    import threading

    if not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
        return contextlib.nullcontext()

    @contextlib.contextmanager
    def armed():
        def expire(signum, frame):
            raise EnvTimeout

        previous = signal.signal(signal.SIGALRM, expire)
        signal.setitimer(signal.ITIMER_REAL, seconds)
        try:
            yield
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)

    return armed()


def check_one(prefix: str, options: dict[str, Any]) -> dict[str, Any]:
    """One env's entry: its report as JSON data, or the problem that kept it from being read (an input error,
    a bug of ours, or not finishing in time): each its own line, never the end of the run."""
    from conda_torchcheck.cli.main import error_document
    from conda_torchcheck.errors import InternalError, TargetError, TorchCheckError

    started = time.perf_counter()
    seconds = float(options.get("env_seconds") or env_seconds())
    try:
        with _deadline(seconds):
            doc = _check(prefix, options)
    except EnvTimeout:
        problem = TargetError(f"{prefix}: not finished within {seconds:g} s; the run went on without it")
        doc = {"report": None, "error": error_document(problem)}
    except TorchCheckError as exc:
        doc = {"report": None, "error": error_document(exc)}
    except Exception as exc:  # a bug of ours on this env: its line says so, the others are still checked
        doc = {"report": None, "error": error_document(InternalError(exc))}
    doc["seconds"] = round(time.perf_counter() - started, 4)
    return doc


def _check(prefix: str, options: dict[str, Any]) -> dict[str, Any]:
    from conda_torchcheck.checks.context import CheckOptions
    from conda_torchcheck.inventory import load_environment
    from conda_torchcheck.report import check_environment

    env, host = load_environment(Path(prefix), use_live_host=options.get("live", True))
    checks = CheckOptions(verify_hashes=bool(options.get("hashes")), import_test=False)
    report = check_environment(env, host, checks, options.get("only") or (), options.get("skip") or ())
    return {"report": report.to_dict(options.get("lang")), "error": None}


def _entry(prefix: Path, where: str, result: dict[str, Any]) -> dict[str, Any]:
    report, error = result["report"], result["error"]
    entry: dict[str, Any] = {
        "prefix": str(prefix),
        "name": None,
        "found_in": [where],
        "status": "checked" if report is not None else "unreadable",
        "verdict": "unreadable",
        "torch": None,
        "worst": None,
        "counts": None,
        "seconds": result["seconds"],
        "report": report,
        "error": error,
    }
    if report is None:
        return entry
    entry["name"] = report["target"]["name"]
    entry["torch"] = report["torch"]
    entry["counts"] = report["summary"]
    findings = report["findings"]
    if findings:  # sorted by severity, then id
        worst = findings[0]
        entry["worst"] = {"id": worst["id"], "severity": worst["severity"], "title": worst["title"]}
    counts = report["summary"]
    if counts["errors"]:
        entry["verdict"] = "errors"
    elif report["torch"]["source"] == "unreadable-record":
        entry["verdict"] = "unreadable"  # torch may well be there: "no torch" would be a guess
    elif not report["torch"]["version"] and report["torch"]["source"] == "none":
        entry["verdict"] = "no-torch"
    elif counts["warnings"]:
        entry["verdict"] = "warnings"
    else:
        entry["verdict"] = "ok"
    return entry


def audit(
    targets: Sequence[tuple[Path, str]],
    options: dict[str, Any],
    *,
    progress: Callable[[int, int, str], None] | None = None,
    workers: int | None = None,
) -> dict[str, Any]:
    """The fleet document for ``targets`` ((prefix, where it was found), in order)."""
    from conda_torchcheck.schema import header

    results: list[dict[str, Any] | None] = [None] * len(targets)
    if workers is None:
        # CONDA_TORCHCHECK_WORKERS sets the number (1: no worker processes), for benchmarks and small machines
        wanted = os.environ.get("CONDA_TORCHCHECK_WORKERS", "")
        workers = int(wanted) if wanted.isdigit() and int(wanted) > 0 else (os.cpu_count() or 1)
    count = min(workers, len(targets))
    if count > 1 and len(targets) >= PARALLEL_FROM:
        _run_parallel(targets, options, results, count, progress)
    else:
        for i, (prefix, _) in enumerate(targets):
            if progress is not None:
                progress(i, len(targets), str(prefix))
            results[i] = check_one(str(prefix), options)
    entries = [_entry(prefix, where, result) for (prefix, where), result in zip(targets, results)]  # type: ignore[arg-type]
    summary = {"envs": len(entries), "ok": 0, "warnings": 0, "errors": 0, "no_torch": 0, "unreadable": 0}
    for e in entries:
        summary[e["verdict"].replace("-", "_")] += 1
    exit_code = 2 if summary["unreadable"] else (1 if summary["errors"] else 0)
    return {**header("fleet"), "envs": entries, "summary": summary, "exit_code": exit_code}


def _run_parallel(targets, options, results, count, progress) -> None:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    # fork where there is one: the workers inherit the imported engine instead of importing it again
    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else None
    context = multiprocessing.get_context(method)
    with ProcessPoolExecutor(max_workers=count, mp_context=context) as pool:
        futures = {pool.submit(check_one, str(prefix), options): i for i, (prefix, _) in enumerate(targets)}
        for done, future in enumerate(as_completed(futures), 1):
            i = futures[future]
            results[i] = future.result()
            if progress is not None:
                progress(done, len(targets), str(targets[i][0]))


def stderr_progress() -> Callable[[int, int, str], None] | None:
    """A progress line on stderr when it is a terminal (rewritten in place), else nothing."""
    stream = sys.stderr
    if not getattr(stream, "isatty", lambda: False)():
        return None

    import shutil

    # one row of the terminal at most: a longer line wraps, and "\r" then returns only to its last row, leaving
    # the rows above on screen
    width = max(20, shutil.get_terminal_size((80, 24)).columns - 1)

    def show(done: int, total: int, prefix: str) -> None:
        line = f"conda-torchcheck: {done}/{total} {prefix}"
        if len(line) > width:
            line = line[: width - 1] + "…"
        # the last one is erased too: the table that follows is the result, not the progress
        stream.write("\r\033[K" + (line if done < total else ""))
        stream.flush()

    return show
