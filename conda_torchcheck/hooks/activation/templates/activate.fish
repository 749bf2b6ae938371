@@HEADER@@
# Sourced by `conda activate` in fish. Builtins only; every variable is local to the begin/end block.
if set -q CONDA_PREFIX; and test -n "$CONDA_PREFIX"
begin
set -l _ctc_lang $CONDA_TORCHCHECK_LANG
if test -z "$_ctc_lang"; set _ctc_lang $LC_ALL; end
if test -z "$_ctc_lang"; set _ctc_lang $LC_MESSAGES; end
if test -z "$_ctc_lang"; set _ctc_lang $LANG; end
set -l _ctc_zh
if string match -q 'zh*' -- "$_ctc_lang"; set _ctc_zh 1; end
set -l _ctc_p (string replace -r '/$' '' -- "$CONDA_PREFIX")
set -l _ctc_d
set -l _ctc_libs
#@@BEGIN posix_path@@
# TC801: a folder before this env's bin/ on PATH that belongs to another env or has its own python
if not string match -q '*:*' -- "$_ctc_p"
  set -l _ctc_entries
  for _ctc_entry in $PATH
    set -a _ctc_entries (string replace -r '(.)/$' '$1' -- "$_ctc_entry")
  end
  if contains -- "$_ctc_p/bin" $_ctc_entries
    for _ctc_d in $_ctc_entries
      if test "$_ctc_d" = "$_ctc_p/bin"
        break
      else if test -n "$_ctc_d"; and not string match -q '*/condabin' -- "$_ctc_d"
        if test -d "$_ctc_d/../conda-meta"
          @@MSG TC801.line.env@@
        else if begin; test -f "$_ctc_d/python"; and test -x "$_ctc_d/python"; end; or begin; test -f "$_ctc_d/python3"; and test -x "$_ctc_d/python3"; end
          @@MSG TC801.line.python@@
        end
      end
    end
  else
    set _ctc_d "$_ctc_p/bin"
    @@MSG TC801.line.missing@@
  end
end
#@@END posix_path@@
#@@BEGIN ld_library_path@@
# TC804: LD_LIBRARY_PATH folders holding CUDA/NCCL/torch libraries that torch would otherwise take from its own
if set -q LD_LIBRARY_PATH; and test -n "$LD_LIBRARY_PATH"
  set -l _ctc_own_dirs @@OWN_DIRS_FISH@@
  for _ctc_entry in (string split ':' -- "$LD_LIBRARY_PATH")
    set _ctc_d (string replace -r '(.)/$' '$1' -- "$_ctc_entry")
    if test -z "$_ctc_d"; set _ctc_d $PWD; end
    if not contains -- "$_ctc_d" $_ctc_own_dirs
      set -l _ctc_found
      for _ctc_n in @@SONAMES@@
        if test -e "$_ctc_d/$_ctc_n"
          set -a _ctc_found $_ctc_n
        end
      end
      if set -q _ctc_found[1]
        set _ctc_libs (string join ', ' -- $_ctc_found[1..3])
        if set -q _ctc_found[4]; set _ctc_libs "$_ctc_libs, ..."; end
        @@MSG TC804.line@@
      end
    end
  end
end
#@@END ld_library_path@@
#@@BEGIN windows@@
# On Windows: TC803 CONDA_DLL_SEARCH_MODIFICATION_ENABLE
if test "$OS" = Windows_NT
  if set -q CONDA_DLL_SEARCH_MODIFICATION_ENABLE; and test -n "$CONDA_DLL_SEARCH_MODIFICATION_ENABLE"; and test "$CONDA_DLL_SEARCH_MODIFICATION_ENABLE" != 0
    @@MSG TC803.line.@@PYTHON_MODE@@@@
  end
end
#@@END windows@@
end
end
true
