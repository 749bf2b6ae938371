@@HEADER@@
# Sourced by `conda activate` (bash, zsh, dash, ksh ...). POSIX sh only: no subshells, no external commands,
# every variable is named _ctc_* and unset at the end; safe under `set -eu`; the last command returns 0.
if [ -n "${CONDA_PREFIX-}" ]; then
_ctc_lang=${CONDA_TORCHCHECK_LANG:-${LC_ALL:-${LC_MESSAGES:-${LANG-}}}}
case $_ctc_lang in zh*) _ctc_zh=1 ;; *) _ctc_zh= ;; esac
_ctc_p=${CONDA_PREFIX%/}
#@@BEGIN posix_path@@
# TC801: a folder before this env's bin/ on PATH that belongs to another env or has its own python
case $_ctc_p in
*:*) ;;
*)
case ":${PATH-}:" in
*":$_ctc_p/bin:"* | *":$_ctc_p/bin/:"*)
  _ctc_rest=${PATH-}:
  while [ -n "$_ctc_rest" ]; do
    _ctc_d=${_ctc_rest%%:*}
    _ctc_rest=${_ctc_rest#*:}
    if [ "$_ctc_d" != "/" ]; then _ctc_d=${_ctc_d%/}; fi
    if [ "$_ctc_d" = "$_ctc_p/bin" ]; then
      _ctc_rest=
    elif [ -n "$_ctc_d" ] && [ "${_ctc_d##*/}" != "condabin" ]; then
      if [ -d "$_ctc_d/../conda-meta" ]; then
        @@MSG TC801.line.env@@
      elif { [ -f "$_ctc_d/python" ] && [ -x "$_ctc_d/python" ]; } || { [ -f "$_ctc_d/python3" ] && [ -x "$_ctc_d/python3" ]; }; then
        @@MSG TC801.line.python@@
      fi
    fi
  done
  ;;
*)
  _ctc_d=$_ctc_p/bin
  @@MSG TC801.line.missing@@
  ;;
esac
;;
esac
#@@END posix_path@@
#@@BEGIN ld_library_path@@
# TC804: LD_LIBRARY_PATH folders holding CUDA/NCCL/torch libraries that torch would otherwise take from its own
if [ -n "${LD_LIBRARY_PATH-}" ]; then
_ctc_rest=$LD_LIBRARY_PATH:
while [ -n "$_ctc_rest" ]; do
  _ctc_d=${_ctc_rest%%:*}
  _ctc_rest=${_ctc_rest#*:}
  if [ -z "$_ctc_d" ]; then _ctc_d=${PWD:-.}; fi
  if [ "$_ctc_d" != "/" ]; then _ctc_d=${_ctc_d%/}; fi
  _ctc_own=
  case $_ctc_d in
  @@OWN_DIRS_CASE@@) _ctc_own=1 ;;
  esac
  if [ -z "$_ctc_own" ]; then
    _ctc_libs=
    _ctc_count=0
    for _ctc_n in @@SONAMES@@; do
      if [ -e "$_ctc_d/$_ctc_n" ]; then
        _ctc_count=$((_ctc_count + 1))
        if [ "$_ctc_count" -le 3 ]; then _ctc_libs=${_ctc_libs:+$_ctc_libs, }$_ctc_n; fi
      fi
    done
    if [ "$_ctc_count" -gt 3 ]; then _ctc_libs="$_ctc_libs, ..."; fi
    if [ -n "$_ctc_libs" ]; then
      @@MSG TC804.line@@
    fi
  fi
done
fi
#@@END ld_library_path@@
#@@BEGIN windows@@
# On Windows (Git Bash / MSYS2): TC802 DLLs in the current folder, TC803 CONDA_DLL_SEARCH_MODIFICATION_ENABLE
if [ "${OS-}" = "Windows_NT" ]; then
  _ctc_libs=
  for _ctc_n in @@DLL_NAMES@@; do
    if [ -z "$_ctc_libs" ] && [ -e "./$_ctc_n" ]; then _ctc_libs=$_ctc_n; fi
  done
  if [ -n "$_ctc_libs" ]; then
    _ctc_d=${PWD-.}
    @@MSG TC802.line@@
  fi
  _ctc_d=${CONDA_DLL_SEARCH_MODIFICATION_ENABLE-}
  if [ -n "$_ctc_d" ] && [ "$_ctc_d" != "0" ]; then
    @@MSG TC803.line.@@PYTHON_MODE@@@@
  fi
fi
#@@END windows@@
unset _ctc_lang _ctc_zh _ctc_p _ctc_rest _ctc_d _ctc_own _ctc_libs _ctc_count _ctc_n
fi
:
