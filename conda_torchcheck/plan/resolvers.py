"""Asking the package managers' own resolvers what a step would do, without doing it.

pip: ``<env python> -m pip install --dry-run --report -`` (pip 22.2 or later), only where the env's python runs on
this machine; binary wheels only, so that no package's build code runs. conda: its solver in-process when this
runs inside conda, else ``conda install --dry-run --json``. Where neither can be asked, the answer says so.
"""

from __future__ import annotations

import contextlib
import functools
import io
import json
import os
import socket
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from conda_torchcheck.messages import translate
from conda_torchcheck.plan.actions import normalize, option_values
from conda_torchcheck.plan.model import Change, Verification

PIP_TIMEOUT = 300.0
#: pip's words for an index it could not reach (then the answer is "not verified", not "no solution")
_UNREACHABLE = (
    "NewConnectionError",
    "Failed to establish a new connection",
    "Temporary failure in name resolution",
    "Name or service not known",
    "ConnectTimeoutError",
    "Read timed out",
    "ProxyError",
    "Could not fetch URL",
    "connection error",
    "Network is unreachable",
    "SSLError",
)
_HOST_OS = "windows" if sys.platform == "win32" else "darwin" if sys.platform == "darwin" else "linux"


#: output kept from a resolver: its answer (a JSON report) is small; an endless writer must not fill memory
_OUTPUT_LIMIT = 32 * 1024 * 1024


def run_bounded(
    argv: Sequence[str], timeout: float, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess:
    """``subprocess.run(capture_output=True, text=True)`` whose timeout is a real bound: the child gets a session of
    its own, and at the timeout the whole session is killed and the pipes left as they are, even when a process it
    started still holds them (a plain ``run`` would wait for that process). Raises ``subprocess.TimeoutExpired``."""
    import signal

    kwargs: dict[str, Any] = {"start_new_session": True} if sys.platform != "win32" else {}
    proc = subprocess.Popen(
        list(argv),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        env=dict(env) if env is not None else None,
        **kwargs,
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(OSError):
            if sys.platform != "win32":
                os.killpg(proc.pid, signal.SIGKILL)
            else:
                proc.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.communicate(timeout=2)
        raise
    text_out = out[-_OUTPUT_LIMIT:].decode("utf-8", "replace")
    text_err = err[-_OUTPUT_LIMIT:].decode("utf-8", "replace")
    return subprocess.CompletedProcess(list(argv), proc.returncode, text_out, text_err)


def _child_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP")}
    env.update({"PIP_NO_INPUT": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PYTHONNOUSERSITE": "1"})
    return env


class PipResolver:
    """The env's own pip, asked for dry runs. ``problem`` says why it cannot be asked (then every answer is
    "not verified")."""

    def __init__(
        self,
        python: Path | None,
        installed: Mapping[str, str],
        *,
        live: bool,
        target_os: str,
        lang: str | None = None,
    ) -> None:
        self.lang = lang
        self.python = python
        self.installed = {normalize(k): v for k, v in installed.items()}
        self.version: str | None = None
        self.problem: str | None = None
        if target_os != _HOST_OS:
            self.problem = translate("plan.other_os", lang, os=target_os, host=_HOST_OS)
        elif not live:
            self.problem = translate("plan.offline", lang)
        elif python is None or not python.is_file():
            self.problem = translate("plan.no_python", lang)
        else:
            self._probe()

    def _probe(self) -> None:
        assert self.python is not None
        try:
            proc = run_bounded([str(self.python), "-m", "pip", "--version"], 60, _child_env())
        except (OSError, subprocess.SubprocessError) as exc:
            self.problem = translate("plan.python_fails", self.lang, error=f"{type(exc).__name__}: {exc}")
            return
        words = proc.stdout.split()
        if proc.returncode != 0 or len(words) < 2 or words[0] != "pip":
            error = (proc.stderr.strip().splitlines() or ["?"])[-1]
            self.problem = translate("plan.no_pip", self.lang, error=error)
            return
        self.version = words[1]
        try:
            major, minor = (int(p) for p in self.version.split(".")[:2])
        except ValueError:
            major, minor = 0, 0
        if (major, minor) < (22, 2):
            self.problem = translate("plan.old_pip", self.lang, version=self.version)

    @property
    def by(self) -> str:
        return f"pip {self.version} install --dry-run --report" if self.version else "pip"

    def install(self, args: Sequence[str]) -> Verification:
        """What ``pip install <args>`` would install, replace or leave."""
        if self.problem:
            return Verification("not verified", "pip", self.problem)
        assert self.python is not None
        argv = [str(self.python), "-m", "pip", "install", "--dry-run", "--report", "-", "--quiet", "--no-input"]
        argv += ["--only-binary=:all:", "--retries", "0", "--timeout", "15", *args]
        try:
            proc = run_bounded(argv, PIP_TIMEOUT, _child_env())
        except subprocess.TimeoutExpired:
            reason = translate("plan.timeout", self.lang, tool="pip", seconds=f"{PIP_TIMEOUT:.0f}")
            return Verification("not verified", self.by, reason)
        except OSError as exc:
            return Verification("not verified", self.by, f"{type(exc).__name__}: {exc}")
        if proc.returncode != 0:
            lines = [ln.strip() for ln in proc.stderr.splitlines() if ln.strip()]
            last = next((ln for ln in reversed(lines) if ln.startswith("ERROR")), lines[-1] if lines else "?")
            if any(marker in proc.stderr for marker in _UNREACHABLE):
                return Verification("not verified", self.by, translate("plan.unreachable", self.lang, error=last))
            return Verification("rejected", self.by, translate("plan.no_solution", self.lang, tool="pip", error=last))
        try:
            report = json.loads(proc.stdout)
        except ValueError:
            return Verification("not verified", self.by, translate("plan.not_json", self.lang, tool="pip"))
        changes = []
        for item in report.get("install") or ():
            meta = item.get("metadata") or {}
            name = normalize(str(meta.get("name") or "?"))
            changes.append(Change(name, self.installed.get(name), str(meta.get("version") or "?")))
        # pip skips an index it cannot reach without a word and answers from the others, which may differ
        missing = [
            url for url in option_values(list(args), "--index-url", "-i", "--extra-index-url") if not reachable(url)
        ]
        if missing:
            reason = translate("plan.partly_unreachable", self.lang, urls=", ".join(missing))
            return Verification("not verified", self.by, reason, tuple(changes))
        return Verification("verified", self.by, None, tuple(changes))


@functools.lru_cache(maxsize=32)
def reachable(url: str) -> bool:
    """Whether the host of an index URL accepts a connection (file:// URLs: whether the folder exists)."""
    parsed = urlparse(url)
    if parsed.scheme == "file":
        return os.path.isdir(unquote(parsed.path))
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        return False
    port = parsed.port or (443 if parsed.scheme == "https" else 80)
    try:
        with socket.create_connection((parsed.hostname, port), timeout=5):
            return True
    except OSError:
        return False


#: None: ask conda in-process only when this process is conda itself (``conda torchcheck``, ``conda doctor``);
#: tests that drive conda in-process set it
IN_PROCESS_CONDA: bool | None = None


def running_in_conda() -> bool:
    if IN_PROCESS_CONDA is not None:
        return IN_PROCESS_CONDA
    entry = Path(sys.argv[0] if sys.argv else "").name.lower()
    return "conda.base.context" in sys.modules and entry.split(".")[0] in ("conda", "conda-script", "mamba")


class CondaResolver:
    """conda's solver for ``conda install`` steps: in-process when conda is running this, else the ``conda``
    executable (CONDA_EXE) with ``--dry-run --json``."""

    def __init__(self, prefix: Path, *, live: bool, lang: str | None = None) -> None:
        self.lang = lang
        self.prefix = prefix
        self.problem: str | None = None
        self.in_process = running_in_conda()
        self.exe = os.environ.get("CONDA_EXE") if not self.in_process else None
        if not live:
            self.problem = translate("plan.offline_conda", lang)
        elif not self.in_process and not (self.exe and os.path.isfile(self.exe)):
            self.problem = translate("plan.no_conda", lang)

    @property
    def by(self) -> str:
        return "conda's solver (in-process)" if self.in_process else "conda install --dry-run --json"

    def install(self, specs: Sequence[str], channels: Sequence[str]) -> Verification:
        if self.problem:
            return Verification("not verified", "conda", self.problem)
        try:
            if self.in_process:
                return self._solve(specs, channels)
            return self._dry_run(specs, channels)
        except Exception as exc:  # conda's errors are many; each one means the step is not shown as verified
            name = type(exc).__name__
            if "Unsatisfiable" in name or "PackagesNotFound" in name or "ResolvePackageNotFound" in name:
                error = f"{name}: {exc}".strip()[:500]
                return Verification(
                    "rejected", self.by, translate("plan.no_solution", self.lang, tool="conda", error=error)
                )
            return Verification("not verified", self.by, f"{name}: {exc}".strip()[:500])

    def _solve(self, specs: Sequence[str], channels: Sequence[str]) -> Verification:
        from conda.base.context import context
        from conda.models.match_spec import MatchSpec

        backend = context.plugin_manager.get_cached_solver_backend()
        solver = backend(
            str(self.prefix),
            list(channels) or list(context.channels),
            context.subdirs,
            specs_to_add=[MatchSpec(s) for s in specs],
        )
        # conda's solver reports its progress on stdout, which holds our one JSON document under --json
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            unlink, link = solver.solve_for_diff()
        return Verification("verified", self.by, None, _conda_changes(unlink, link))

    def _dry_run(self, specs: Sequence[str], channels: Sequence[str]) -> Verification:
        argv = [str(self.exe), "install", "--dry-run", "--json", "-y", "-p", str(self.prefix)]
        for channel in channels:
            argv += ["-c", channel]
        try:
            proc = run_bounded(argv + list(specs), 600)
        except subprocess.TimeoutExpired:
            return Verification(
                "not verified", self.by, translate("plan.timeout", self.lang, tool="conda", seconds="600")
            )
        except OSError as exc:
            return Verification("not verified", self.by, f"{type(exc).__name__}: {exc}")
        try:
            doc: dict[str, Any] = json.loads(proc.stdout or "{}")
        except ValueError:
            return Verification("not verified", self.by, translate("plan.not_json", self.lang, tool="conda"))
        if doc.get("error") or doc.get("exception_name"):
            name = str(doc.get("exception_name") or "")
            status = "rejected" if "Unsatisfiable" in name or "PackagesNotFound" in name else "not verified"
            return Verification(status, self.by, str(doc.get("message") or doc.get("error"))[:500])
        actions = doc.get("actions") or {}
        return Verification(
            "verified", self.by, None, _conda_changes(actions.get("UNLINK", ()), actions.get("LINK", ()))
        )


def _conda_changes(unlink: Sequence[Any], link: Sequence[Any]) -> tuple[Change, ...]:
    def fields(rec: Any) -> tuple[str, str]:
        if isinstance(rec, Mapping):
            return str(rec.get("name")), f"{rec.get('version')}={rec.get('build_string') or rec.get('build')}"
        return str(rec.name), f"{rec.version}={rec.build}"

    gone = dict(fields(r) for r in unlink)
    new = dict(fields(r) for r in link)
    out = [Change(normalize(n), gone.get(n), v) for n, v in new.items()]
    out += [Change(normalize(n), v, None) for n, v in gone.items() if n not in new]
    # versions carry the build (``2.5.1=cuda126_...``): a cpu -> cuda switch of one version is a change too
    return tuple(out)


def index_args(args: Sequence[str]) -> list[str]:
    """The index options among ``args`` (to carry into a safer step)."""
    out: list[str] = []
    for name in ("--index-url", "--extra-index-url", "--find-links"):
        for value in option_values(list(args), name):
            out += [name, value]
    if "--no-index" in args:
        out.append("--no-index")
    return out
