"""TC701-TC706: the opt-in import test: run the env's own Python, import torch, report what happened.

This is the only place the tool runs code from the target env, and only with ``--import-test``.

How the interpreter is started, and why:

* ``<env python> -c <script>``, no shell, output captured, a timeout (``--import-timeout``), the child killed
  (with its process group on POSIX) when it runs over.
* Not isolated (no ``-I``/``-E``/``-s``): the question is what *the user* gets from ``import torch``, and
  PYTHONPATH, the user site-packages and ``.pth`` files are among the classic reasons it differs from what
  the files say (TC706 reports exactly that). As with ``python -c``, the working directory is on sys.path; it
  is the directory given with ``--cwd`` or the current one.
* The env's environment: when the env is the active one the current variables are used unchanged; otherwise
  the child gets what ``conda activate`` sets that matters for loading (CONDA_PREFIX or VIRTUAL_ENV, the env's
  folders first on PATH); ``activate.d`` scripts are not run. ``--env``/``--path``/``--ld-library-path``
  apply on top.
* Nothing is written to the env: PYTHONDONTWRITEBYTECODE=1 stops ``__pycache__`` files.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from conda_torchcheck.checks import Check
from conda_torchcheck.checks.context import CheckContext
from conda_torchcheck.findings import Finding, Fix, Severity, finding
from conda_torchcheck.inventory import fs
from conda_torchcheck.inventory.host import RUNNING_OS
from conda_torchcheck.inventory.model import Environment, HostFacts
from conda_torchcheck.messages import Text, msg

TYPE_CHECKING = False
if TYPE_CHECKING:
    import subprocess

MARKER = "@@CONDA_TORCHCHECK_IMPORT_TEST@@"
MEMO_KEY = "import_test"
OUTPUT_LIMIT = 20_000  # characters of stdout/stderr kept (the tail)

# Runs in the env's interpreter: keep it plain (any Python 3), print one marked JSON line at the end.
SCRIPT = r"""
import json, sys, time, traceback, warnings
M = "@@CONDA_TORCHCHECK_IMPORT_TEST@@"
R = {"python": sys.version.split()[0], "executable": sys.executable, "sys_path": sys.path[:25]}
caught = []
def keep(message, category, filename, lineno, file=None, line=None):
    if len(caught) < 50:
        caught.append("%s: %s" % (category.__name__, message))
warnings.showwarning = keep
warnings.simplefilter("always")
def emit():
    R["warnings"] = caught
    sys.stdout.write("\n" + M + json.dumps(R, default=str) + "\n")
    sys.stdout.flush()
t0 = time.time()
try:
    import torch
except BaseException as e:
    R.update(ok=False, error_type=type(e).__name__, error=str(e), traceback=traceback.format_exc()[-12000:])
    R["import_s"] = round(time.time() - t0, 3)
    emit()
    sys.exit(0)
R["import_s"] = round(time.time() - t0, 3)
R.update(ok=True, version=getattr(torch, "__version__", None), file=getattr(torch, "__file__", None))
v = getattr(torch, "version", None)
R["cuda_build"] = getattr(v, "cuda", None)
R["hip"] = getattr(v, "hip", None)
try:
    available = bool(torch.cuda.is_available())
    R["cuda_available"] = available
    if available:
        R["device_count"] = torch.cuda.device_count()
        R["device_name"] = torch.cuda.get_device_name(0)
        R["capability"] = list(torch.cuda.get_device_capability(0))
except BaseException as e:
    R["cuda_error"] = "%s: %s" % (type(e).__name__, e)
emit()
"""


@dataclass(frozen=True)
class ImportTestResult:
    """What the env's interpreter said. ``outcome``: ok, failed, crashed, timeout, not-run."""

    outcome: str
    ran_at: str
    timeout_s: float
    python: str | None = None
    command: tuple[str, ...] = ()
    cwd: str | None = None
    environment: str = ""  # inherited (active env), activated (emulated), none
    duration_s: float | None = None
    returncode: int | None = None
    reason: str | None = None  # why it could not run
    report: Mapping[str, Any] = field(default_factory=dict)  # the JSON the script printed
    stdout_tail: str = ""
    stderr_tail: str = ""

    @property
    def version(self) -> str | None:
        return self.report.get("version")

    @property
    def error_type(self) -> str | None:
        return self.report.get("error_type")

    def error_text(self) -> str:
        """Everything that may name the problem, for ``explain``."""
        parts = []
        if self.report.get("traceback"):
            parts.append(str(self.report["traceback"]))
        elif self.report.get("error"):
            parts.append(f"{self.report.get('error_type', 'Error')}: {self.report['error']}")
        if self.report.get("cuda_error"):
            parts.append(str(self.report["cuda_error"]))
        parts.extend(str(w) for w in self.report.get("warnings", ()))
        if self.stderr_tail:
            parts.append(self.stderr_tail)
        return "\n".join(parts)

    def first_error_line(self) -> str:
        if self.report.get("error"):
            line = f"{self.report.get('error_type', 'Error')}: {self.report['error']}"
        else:
            lines = [ln for ln in self.stderr_tail.splitlines() if ln.strip()]
            line = lines[-1] if lines else ""
        line = " ".join(line.split())
        return line if len(line) <= 200 else line[:199] + "…"

    def to_dict(self) -> dict[str, Any]:
        doc = asdict(self)
        doc["command"] = list(self.command)
        doc["report"] = dict(self.report)
        for key in ("version", "error_type"):
            doc[key] = getattr(self, key)
        return doc


def _now() -> str:
    from datetime import datetime, timezone  # only for the opt-in test: every check run imports this module

    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _tail(data: bytes | str | None) -> str:
    if data is None:
        return ""
    text = data.decode("utf-8", errors="replace") if isinstance(data, bytes) else data
    return text[-OUTPUT_LIMIT:]


# variables a process needs to start at all, kept even with --ignore-environment
_ESSENTIAL = ("SYSTEMROOT", "SystemRoot", "WINDIR", "TEMP", "TMP", "HOME", "USERPROFILE", "LANG", "PATH")


def child_environment(env: Environment, host: HostFacts) -> tuple[dict[str, str], str]:
    """The variables the env's interpreter runs with, and how they were made (inherited / activated)."""
    if host.live:
        environ = dict(os.environ)
    else:
        environ = {k: v for k, v in os.environ.items() if k in _ESSENTIAL}
    environ.update(host.environ)
    mode = "inherited"
    if not env.is_active:
        mode = "activated"
        prefix = str(env.prefix)
        if env.os == "windows":
            first = [
                prefix,
                *(str(env.prefix / p) for p in ("Library/mingw-w64/bin", "Library/usr/bin", "Library/bin")),
            ]
            first += [str(env.prefix / "Scripts"), str(env.prefix / "bin")]
        else:
            first = [str(env.prefix / "bin")]
        existing = environ.get("PATH", "")
        environ["PATH"] = os.pathsep.join([*first, existing] if existing else first)
        if env.layout == "venv":
            environ["VIRTUAL_ENV"] = prefix
            environ.pop("CONDA_PREFIX", None)
        else:
            environ["CONDA_PREFIX"] = prefix
            environ["CONDA_DEFAULT_ENV"] = env.name or prefix
            environ.pop("VIRTUAL_ENV", None)
    environ["PYTHONDONTWRITEBYTECODE"] = "1"
    environ["PYTHONIOENCODING"] = "utf-8"
    return environ, mode


def run_import_test(env: Environment, host: HostFacts, timeout: float) -> ImportTestResult:
    """Import torch in ``env``'s own interpreter (see the module docstring for how it is started)."""
    import subprocess  # only for the opt-in test: every check run imports this module

    ran_at = _now()
    if env.os != RUNNING_OS:
        return ImportTestResult("not-run", ran_at, timeout, reason=f"other-os:{env.os}:{RUNNING_OS}")
    python = env.python.executable
    if python is None or not fs.exists(Path(python)):
        return ImportTestResult("not-run", ran_at, timeout, reason="no-python")
    environ, mode = child_environment(env, host)
    cwd = str(host.cwd) if host.cwd is not None and fs.is_dir(Path(host.cwd)) else None
    command = (str(python), "-c", SCRIPT)
    shown = (str(python), "-c", "<import test script>")
    popen_kwargs: dict[str, Any] = {}
    if os.name == "nt":  # pragma: no cover - Windows only
        popen_kwargs["creationflags"] = subprocess.CREATE_NEW_PROCESS_GROUP
    else:
        popen_kwargs["start_new_session"] = True  # so a timeout kills whatever it started too
    start = time.monotonic()
    try:
        proc = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=environ,
            cwd=cwd,
            **popen_kwargs,
        )
    except OSError as exc:
        return ImportTestResult(
            "not-run", ran_at, timeout, python=str(python), command=shown, reason=f"start-failed:{exc}"
        )
    readers = [_Drain(proc.stdout), _Drain(proc.stderr)]
    timed_out = False
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        _kill(proc)
        try:
            proc.wait(timeout=KILL_GRACE)
        except subprocess.TimeoutExpired:  # pragma: no cover - a process that survives SIGKILL (D state)
            pass
    # a process the child left in another session can hold the pipes open for ever: wait a moment for the
    # end of the output, then go on with what was read (the reader threads are daemons)
    deadline = time.monotonic() + KILL_GRACE
    for reader in readers:
        reader.join(max(0.0, deadline - time.monotonic()))
    out, err = (reader.data() for reader in readers)
    duration = round(time.monotonic() - start, 3)
    stdout, stderr = _tail(out), _tail(err)
    report: dict[str, Any] = {}
    for line in reversed(stdout.splitlines()):
        if line.startswith(MARKER):
            try:
                report = json.loads(line[len(MARKER) :])
            except ValueError:
                report = {}
            break
    visible_stdout = "\n".join(ln for ln in stdout.splitlines() if not ln.startswith(MARKER)).strip()
    if report:
        outcome = "ok" if report.get("ok") else "failed"
    elif timed_out:
        outcome = "timeout"
    else:
        outcome = "crashed"
    return ImportTestResult(
        outcome=outcome,
        ran_at=ran_at,
        timeout_s=timeout,
        python=str(python),
        command=shown,
        cwd=cwd,
        environment=mode,
        duration_s=duration,
        returncode=None if timed_out else proc.returncode,
        report=report,
        stdout_tail=visible_stdout[-OUTPUT_LIMIT:],
        stderr_tail=stderr.strip(),
    )


#: bytes of each stream kept while reading (the tail: the report line is printed last); the rest is discarded
#: as it comes, so a python that writes without end costs no memory
STREAM_KEEP = 1 << 20
KILL_GRACE = 2.0  # seconds to wait for the output's end after the child exited or was killed


class _Drain:
    """Reads a pipe to its end in a daemon thread, keeping the last STREAM_KEEP bytes."""

    def __init__(self, stream: Any) -> None:
        import threading

        self._stream = stream
        self._buffer = bytearray()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            while True:
                chunk = self._stream.read1(1 << 16) if hasattr(self._stream, "read1") else self._stream.read(1 << 16)
                if not chunk:
                    break
                with self._lock:
                    self._buffer += chunk
                    if len(self._buffer) > 2 * STREAM_KEEP:
                        del self._buffer[:-STREAM_KEEP]
        except (OSError, ValueError):
            pass

    def join(self, timeout: float) -> None:
        self._thread.join(timeout)

    def data(self) -> bytes:
        with self._lock:
            return bytes(self._buffer[-STREAM_KEEP:])


def _kill(proc: subprocess.Popen) -> None:
    import signal

    try:
        if os.name != "nt":
            os.killpg(proc.pid, signal.SIGKILL)
        else:  # pragma: no cover - Windows only
            proc.kill()
    except (OSError, ProcessLookupError):
        try:
            proc.kill()
        except OSError:
            pass


def import_test_result(ctx: CheckContext) -> ImportTestResult:
    """Run the import test once per context (``check`` and ``explain --import-test`` share it)."""
    return ctx.memo(MEMO_KEY, lambda: run_import_test(ctx.env, ctx.host, ctx.options.import_timeout))


# --- findings ------------------------------------------------------------------------------------------------


def _reason_text(result: ImportTestResult) -> Text:
    reason = result.reason or ""
    if reason.startswith("other-os:"):
        _, env_os, host_os = reason.split(":", 2)
        return msg("TC705.other_os", env_os=env_os, host_os=host_os)
    if reason.startswith("start-failed:"):
        return msg("TC705.start_failed", python=result.python or "?", detail=reason.split(":", 1)[1])
    return msg("TC705.no_python")


def _output_tail(result: ImportTestResult, lines: int = 15) -> list[str]:
    text = str(result.report.get("traceback") or "") or result.stderr_tail or result.stdout_tail
    return [ln.rstrip() for ln in text.splitlines() if ln.strip()][-lines:]


def _same_dir(a: str | Path | None, b: str | Path | None) -> bool:
    if a is None or b is None:
        return True
    try:
        return os.path.normcase(os.path.realpath(a)) == os.path.normcase(os.path.realpath(b))
    except OSError:
        return str(a) == str(b)


def _failure(ctx: CheckContext, result: ImportTestResult) -> Finding:
    from conda_torchcheck.explain import explain

    expl = explain(result.error_text(), ctx, source="import-test")
    crash = msg("import_test.crash_error", returncode=result.returncode)
    error_line = result.first_error_line()
    if not result.report.get("error") and expl.diagnoses:  # a crash: the recognised line says more
        error_line = expl.diagnoses[0].match.excerpt[:200]
    error_type = result.error_type or crash
    evidence: dict[str, Any] = {
        "python": result.python,
        "ran_at": result.ran_at,
        "environment": result.environment,
        "returncode": result.returncode,
        "output": _output_tail(result),
    }
    if not expl.diagnoses:
        return finding(
            "TC701",
            Severity.ERROR,
            variant="unrecognised",
            error=error_line or crash,
            error_type=error_type,
            python=result.python or "?",
            evidence=evidence,
            fixes=[Fix("env", msg("TC701.fix"))],
        )
    diagnosis = next((d for d in expl.diagnoses if d.root_cause is not None), expl.diagnoses[0])
    root = diagnosis.root_cause
    evidence["recognised"] = [d.match.pattern_id for d in expl.diagnoses]
    evidence["likely_causes"] = [c.id for c in diagnosis.causes if c.status != "ruled-out"]
    if root is not None:
        evidence["root_cause"] = root.id
        evidence["confirmed_by"] = [f.id for f in root.confirmed_by]
        conclusion = msg("TC701.root_cause", cause=root.title, finding=root.confirmed_by[0].id)
        fixes = [Fix("env", root.fix, commands=root.commands)]
    else:
        candidates = [c for c in diagnosis.causes if c.status != "ruled-out"] or list(diagnosis.causes)
        conclusion = msg("TC701.no_root_cause", cause=candidates[0].title) if candidates else msg("TC701.fix")
        fixes = [Fix("env", msg("TC701.fix"))]
    return finding(
        "TC701",
        Severity.ERROR,
        error=error_line or crash,
        error_type=error_type,
        python=result.python or "?",
        recognised=diagnosis.title,
        conclusion=conclusion,
        evidence=evidence,
        fixes=fixes,
    )


def _success(ctx: CheckContext, result: ImportTestResult) -> Iterator[Finding]:
    report = result.report
    cuda = report.get("cuda_build")
    if not cuda:
        summary = msg("TC703.cpu_build")
    elif report.get("cuda_available"):
        summary = msg("TC703.cuda_available", cuda=cuda, device=report.get("device_name") or "?")
    else:
        summary = msg("TC703.cuda_unavailable", cuda=cuda)
    location = str(Path(report["file"]).parent) if report.get("file") else "?"
    evidence = {
        "python": result.python,
        "ran_at": result.ran_at,
        "environment": result.environment,
        "version": report.get("version"),
        "location": location,
        "cuda_build": cuda,
        "cuda_available": report.get("cuda_available"),
        "device": report.get("device_name"),
        "import_seconds": report.get("import_s"),
    }
    yield finding(
        "TC703",
        Severity.INFO,
        version=report.get("version") or "?",
        cuda_summary=summary,
        python=result.python or "?",
        location=location,
        evidence={k: v for k, v in evidence.items() if v is not None},
    )
    if cuda and not report.get("cuda_available"):
        from conda_torchcheck.explain import explain

        text = "\n".join([str(report.get("cuda_error") or ""), *map(str, report.get("warnings", ()))])
        expl = explain(text) if text.strip() else None
        if expl is not None and expl.diagnoses:
            reason = msg("TC704.reason_recognised", recognised=expl.diagnoses[0].title)
        else:
            reason = msg("TC704.reason_unknown")
        yield finding(
            "TC704",
            Severity.WARNING,
            cuda=cuda,
            reason=reason,
            evidence={
                "cuda_build": cuda,
                "cuda_error": report.get("cuda_error"),
                "warnings": list(report.get("warnings", ())),
                "CUDA_VISIBLE_DEVICES": ctx.host.get("CUDA_VISIBLE_DEVICES"),
                "recognised": [d.match.pattern_id for d in expl.diagnoses] if expl else [],
            },
            fixes=[Fix("system", msg("TC704.fix", cuda=cuda))],
        )
    expected = ctx.torch.package_dir
    if report.get("file") and expected is not None and not _same_dir(Path(report["file"]).parent, expected):
        yield finding(
            "TC706",
            Severity.WARNING,
            location=location,
            expected=str(expected),
            evidence={"imported_from": location, "expected": str(expected), "sys_path": report.get("sys_path", [])},
            fixes=[Fix("env", msg("TC706.fix"))],
        )


def run(ctx: CheckContext) -> Iterator[Finding]:
    if not ctx.options.import_test:
        return
    result = import_test_result(ctx)
    if result.outcome == "not-run":
        yield finding(
            "TC705",
            Severity.WARNING,
            reason=_reason_text(result),
            evidence={"python": result.python or str(ctx.env.python.executable or ""), "reason": result.reason},
        )
    elif result.outcome == "timeout":
        yield finding(
            "TC702",
            Severity.ERROR,
            timeout=f"{result.timeout_s:g}",
            python=result.python or "?",
            evidence={"python": result.python, "ran_at": result.ran_at, "output": _output_tail(result)},
            fixes=[Fix("env", msg("TC702.fix"))],
        )
    elif result.outcome in ("failed", "crashed"):
        yield _failure(ctx, result)
    else:
        yield from _success(ctx, result)


CHECK = Check.declared(__name__, run)

if __name__ == "__main__":  # pragma: no cover - manual use: python -m conda_torchcheck.checks.import_test PREFIX
    from conda_torchcheck.inventory import load_environment

    env_, host_ = load_environment(Path(sys.argv[1]))
    print(json.dumps(run_import_test(env_, host_, 60.0).to_dict(), indent=2))
