"""conda-torchcheck: why `import torch` fails in this environment, proven from the binaries."""

__version__ = "0.1.0"
