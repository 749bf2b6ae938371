@@HEADER@@
@rem Called by conda's activate.bat in cmd.exe. Builtins only; setlocal keeps every variable local; exits 0
@rem (a non-zero exit would abort the activation). Paths travel only in FOR variables and quoted strings, so
@rem any prefix works: spaces, ampersands, percent signs, semicolons, parentheses, non-ASCII letters.
@rem Messages are English only: cmd reads batch files in the console code page.
@if not defined CONDA_PREFIX exit /b 0
@setlocal DisableDelayedExpansion
@set "ctc_p=%CONDA_PREFIX%"
@if "%ctc_p:~-1%"=="\" set "ctc_p=%ctc_p:~0,-1%"
@set "ctc_reached="
@set "ctc_skip_path="
@rem a prefix holding a semicolon cannot be one PATH entry: no PATH check then
@if not "%ctc_p:;=%"=="%ctc_p%" set "ctc_skip_path=1"
@rem TC801: folders before this env's folders on PATH: another env, a python.exe, DLLs torch needs
@rem first whether this env is on PATH at all; the folders before it only when it is
@set "ctc_reachable="
@if not defined ctc_skip_path for %%D in ("%PATH:;=" "%") do (
  set "ctc_d=%%~D"
  call :ctc_mark_reachable
)
@if defined ctc_reachable for %%D in ("%PATH:;=" "%") do (
  set "ctc_d=%%~D"
  call :ctc_path_entry
)
@if not defined ctc_skip_path if not defined ctc_reachable for %%X in ("%ctc_p%\Library\bin") do (
  @@MSG TC801.line.missing dir=%%~X@@
)
@rem TC802: DLLs in the current folder with the names of torch's dependencies
@set "ctc_d=%CD%"
@call :ctc_current_folder
@rem TC803: CONDA_DLL_SEARCH_MODIFICATION_ENABLE
@if defined CONDA_DLL_SEARCH_MODIFICATION_ENABLE if not "%CONDA_DLL_SEARCH_MODIFICATION_ENABLE%"=="0" (
  @@MSG TC803.line.@@PYTHON_MODE@@ var=CONDA_DLL_SEARCH_MODIFICATION_ENABLE@@
)
@endlocal
@exit /b 0

:ctc_path_entry
@if defined ctc_reached goto :eof
@if "%ctc_d%"=="" goto :eof
@call :ctc_is_own
@if defined ctc_own set "ctc_reached=1"
@if defined ctc_own goto :eof
@set "ctc_skip="
@for %%X in ("%ctc_d%") do @if /i "%%~nxX"=="condabin" set "ctc_skip=1"
@if defined ctc_skip goto :eof
@set "ctc_env="
@if exist "%ctc_d%\conda-meta\" set "ctc_env=1"
@if exist "%ctc_d%\..\conda-meta\" set "ctc_env=1"
@if exist "%ctc_d%\..\..\conda-meta\" set "ctc_env=1"
@if defined ctc_env for %%X in ("%ctc_d%") do @@MSG TC801.line.env dir=%%~X@@
@if defined ctc_env goto :eof
@if exist "%ctc_d%\python.exe" for %%X in ("%ctc_d%") do @@MSG TC801.line.python dir=%%~X@@
@if exist "%ctc_d%\python.exe" goto :eof
@set "ctc_dll="
@for %%F in (@@DLL_NAMES@@) do @if not defined ctc_dll if exist "%ctc_d%\%%F" set "ctc_dll=%%F"
@if defined ctc_dll for %%X in ("%ctc_d%") do for %%F in ("%ctc_dll%") do @@MSG TC801.line.dlls dir=%%~X libs=%%~F@@
@goto :eof

:ctc_mark_reachable
@if defined ctc_reachable goto :eof
@if "%ctc_d%"=="" goto :eof
@call :ctc_is_own
@if defined ctc_own set "ctc_reachable=1"
@goto :eof

:ctc_current_folder
@call :ctc_is_own
@if defined ctc_own goto :eof
@set "ctc_dll="
@for %%F in (@@DLL_NAMES@@) do @if not defined ctc_dll if exist "%ctc_d%\%%F" set "ctc_dll=%%F"
@if defined ctc_dll for %%X in ("%ctc_d%") do for %%F in ("%ctc_dll%") do @@MSG TC802.line dir=%%~X libs=%%~F@@
@goto :eof

:ctc_is_own
@set "ctc_own="
@for %%O in ("%ctc_p%" "%ctc_p%\Library\mingw-w64\bin" "%ctc_p%\Library\usr\bin" "%ctc_p%\Library\bin" "%ctc_p%\Scripts" "%ctc_p%\bin") do @if /i "%ctc_d%"=="%%~O" set "ctc_own=1"
@for %%O in ("%ctc_p%" "%ctc_p%\Library\mingw-w64\bin" "%ctc_p%\Library\usr\bin" "%ctc_p%\Library\bin" "%ctc_p%\Scripts" "%ctc_p%\bin") do @if /i "%ctc_d%"=="%%~O\" set "ctc_own=1"
@goto :eof
