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
  _ctc_rest=${PATH-}
  # split on ":" in one pass: cutting the string from the front each time is quadratic in its length
  if [ -n "${IFS+x}" ]; then _ctc_hadifs=1; _ctc_ifs=$IFS; else _ctc_hadifs=; fi
  _ctc_opts=
  if [ -n "${ZSH_VERSION-}" ]; then
    if [[ -o shwordsplit ]]; then :; else _ctc_opts=w; setopt shwordsplit; fi
    if [[ -o noglob ]]; then :; else _ctc_opts=${_ctc_opts}g; setopt noglob; fi
  else
    _ctc_rest=$_ctc_rest:
    case $- in *f*) ;; *) _ctc_opts=f; set -f ;; esac
  fi
  IFS=:
  for _ctc_d in $_ctc_rest; do
    if [ -n "$_ctc_hadifs" ]; then IFS=$_ctc_ifs; else unset IFS; fi
    if [ "$_ctc_d" != "/" ]; then _ctc_d=${_ctc_d%/}; fi
    if [ "$_ctc_d" = "$_ctc_p/bin" ]; then
      break
    elif [ -n "$_ctc_d" ] && [ "${_ctc_d##*/}" != "condabin" ]; then
      if [ -d "$_ctc_d/../conda-meta" ]; then
        @@MSG TC801.line.env@@
      elif { [ -f "$_ctc_d/python" ] && [ -x "$_ctc_d/python" ]; } || { [ -f "$_ctc_d/python3" ] && [ -x "$_ctc_d/python3" ]; }; then
        @@MSG TC801.line.python@@
      fi
    fi
  done
  if [ -n "$_ctc_hadifs" ]; then IFS=$_ctc_ifs; else unset IFS; fi
  case $_ctc_opts in *w*) unsetopt shwordsplit ;; esac
  case $_ctc_opts in *g*) unsetopt noglob ;; esac
  case $_ctc_opts in *f*) set +f ;; esac
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
_ctc_rest=$LD_LIBRARY_PATH
# split on ":" in one pass: cutting the string from the front each time is quadratic in its length
if [ -n "${IFS+x}" ]; then _ctc_hadifs=1; _ctc_ifs=$IFS; else _ctc_hadifs=; fi
_ctc_opts=
if [ -n "${ZSH_VERSION-}" ]; then
  if [[ -o shwordsplit ]]; then :; else _ctc_opts=w; setopt shwordsplit; fi
  if [[ -o noglob ]]; then :; else _ctc_opts=${_ctc_opts}g; setopt noglob; fi
else
  _ctc_rest=$_ctc_rest:
  case $- in *f*) ;; *) _ctc_opts=f; set -f ;; esac
fi
IFS=:
for _ctc_d in $_ctc_rest; do
  if [ -n "$_ctc_hadifs" ]; then IFS=$_ctc_ifs; else unset IFS; fi
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
if [ -n "$_ctc_hadifs" ]; then IFS=$_ctc_ifs; else unset IFS; fi
case $_ctc_opts in *w*) unsetopt shwordsplit ;; esac
case $_ctc_opts in *g*) unsetopt noglob ;; esac
case $_ctc_opts in *f*) set +f ;; esac
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
unset _ctc_lang _ctc_zh _ctc_p _ctc_rest _ctc_d _ctc_own _ctc_libs _ctc_count _ctc_n _ctc_ifs _ctc_hadifs _ctc_opts
fi
:
