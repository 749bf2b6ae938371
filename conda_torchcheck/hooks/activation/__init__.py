"""Activation checks: small shell scripts in ``<env>/etc/conda/activate.d`` that run on ``conda activate``.

No conda plugin hook runs on activation, so the checks that depend on the shell session (PATH order, the current
folder, LD_LIBRARY_PATH, CONDA_DLL_SEARCH_MODIFICATION_*) live in scripts: one per shell (cmd, PowerShell, POSIX
sh, fish), generated from the templates in ``templates/`` with the env's facts (torch's DLL and library names)
baked in as data. They start no process and print one line per problem, nothing when all is well.

- :mod:`.facts` — what the scripts need to know about the env (computed at install time)
- :mod:`.render` — templates + facts + message catalog → script text for each shell
- :mod:`.install` — install / remove / status in a prefix
- :mod:`.check` — TC810, out-of-date scripts, as an engine check
"""
