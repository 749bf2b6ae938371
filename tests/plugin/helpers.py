from __future__ import annotations

import json

CHANNELS = ("--override-channels", "-c", "conda-forge")
BOTH_CHANNELS = ("--override-channels", "-c", "pytorch", "-c", "conda-forge")
BROKEN = ("pytorch=2.5.1", "torchvision=0.15.2")  # torchvision built for torch 2.0: TC104, an error
MIXED = ("pytorch::pytorch=2.5.1=*cuda*", "pytorch::cpuonly")  # cuda and cpu builds mixed: TC102


# first lines of what the plugin's hooks print (the environment.yml pre-command has its own tests)
HOOK_HEADS = (
    "conda-torchcheck: `import ",
    "conda-torchcheck: after this transaction torch would be broken in ",
    "conda-torchcheck refused this transaction",
    "conda-torchcheck: the torch check after this command did not finish",
    "conda-torchcheck: the transaction check did not finish",
    "conda-torchcheck: activation checks installed in ",
)
FOLLOW = (
    "  TC",
    "  ... and ",
    "Full report",
    "Instead",
    "Or",
    "After it",
    "Answer n",
    "conda goes ahead",
    "To go",
    "To refuse",
)


def ours(err: str) -> list[str]:
    """The lines the plugin's hooks printed: their heads, and the finding/command lines that follow."""
    out: list[str] = []
    keep = False
    for line in err.splitlines():
        if line.startswith(HOOK_HEADS) or (line.startswith("conda-torchcheck: ") and "warning(s) about torch" in line):
            keep = True
            out.append(line)
        elif keep and line.startswith(FOLLOW):
            out.append(line)
        else:
            keep = False
    return out


def one_json_document(out: str) -> dict:
    return json.loads(out)  # raises when stdout holds anything besides one document
