"""Whether the Linux machine an env runs on is WSL, and which WSL: read from its root (``/`` for this machine,
``--system-root`` for another), never by running anything.

WSL 2 runs a real Linux kernel whose release string ends in ``-microsoft-standard-WSL2``, and maps the Windows
NVIDIA driver's CUDA library into the distribution under ``/usr/lib/wsl/lib``; WSL 1 translates system calls
(release string with ``Microsoft``, no ``standard``) and has no GPU access at all (knowledge/linux_libraries.toml
[WSL])."""

from __future__ import annotations

from pathlib import Path

from conda_torchcheck.inventory import fs


def wsl_version(root: Path) -> int | None:
    """2 for WSL 2, 1 for WSL 1, None when the machine is not WSL (or nothing says it is)."""
    from conda_torchcheck.knowledge.linux import wsl_layout

    layout = wsl_layout()
    try:
        release = fs.read_text(root / layout.kernel_release_file, fs.SMALL_LIMIT).strip()
    except OSError:
        release = ""
    lowered = release.lower()
    if "microsoft" in lowered:
        return 2 if ("wsl2" in lowered or "microsoft-standard" in lowered) else 1
    # a copied root without /proc: the driver bridge folder says WSL 2
    return 2 if (root / layout.bridge).is_dir() else None


def bridge_libcuda(root: Path) -> Path | None:
    """The Windows driver's libcuda as WSL 2 maps it (``/usr/lib/wsl/lib/libcuda.so.1``), when it is there."""
    from conda_torchcheck.knowledge.linux import wsl_layout

    layout = wsl_layout()
    path = root / layout.bridge / layout.libcuda
    return path if path.exists() else None
