@@HEADER@@
# Dot-sourced by `conda activate` in PowerShell. Runs in a child scope (& { }) so nothing leaks into the session;
# .NET calls only (no cmdlets that start processes); literal paths (no wildcard interpretation of [ ]).
& {
    $ctcPrefix = $env:CONDA_PREFIX
    if (-not $ctcPrefix -or $env:OS -ne 'Windows_NT') { return }
    $ctcPrefix = $ctcPrefix.TrimEnd('\', '/')
    $ctcLang = $env:CONDA_TORCHCHECK_LANG
    if (-not $ctcLang) { $ctcLang = $env:LC_ALL }
    if (-not $ctcLang) { $ctcLang = $env:LC_MESSAGES }
    if (-not $ctcLang) { $ctcLang = $env:LANG }
    if (-not $ctcLang) { $ctcLang = [System.Globalization.CultureInfo]::CurrentUICulture.Name }
    $ctcZh = $ctcLang -like 'zh*'
    $ctcDlls = @(@@DLL_NAMES_PS@@)
    $ctcOwn = @(
        $ctcPrefix,
        (Join-Path $ctcPrefix 'Library\mingw-w64\bin'),
        (Join-Path $ctcPrefix 'Library\usr\bin'),
        (Join-Path $ctcPrefix 'Library\bin'),
        (Join-Path $ctcPrefix 'Scripts'),
        (Join-Path $ctcPrefix 'bin')
    )
    # TC801: folders before this env's folders on PATH: another env, a python.exe, DLLs torch needs
    # a prefix holding a semicolon cannot be one PATH entry: no PATH check then
    $ctcEntries = @()
    if (-not $ctcPrefix.Contains(';')) {
        $ctcEntries = @(([string]$env:PATH).Split(';') | ForEach-Object {
            $ctcE = $_.Trim().Trim('"')
            if ($ctcE.Length -gt 3) { $ctcE = $ctcE.TrimEnd('\', '/') }
            $ctcE
        })
    }
    $ctcReached = $false
    foreach ($ctcD in $ctcEntries) {
        foreach ($ctcO in $ctcOwn) { if ([string]::Equals($ctcD, $ctcO, [StringComparison]::OrdinalIgnoreCase)) { $ctcReached = $true } }
    }
    # folders before the first of this env's (only when this env is on PATH at all; else one line says so)
    foreach ($ctcD in $(if ($ctcReached) { $ctcEntries } else { @() })) {
        if (-not $ctcD) { continue }
        $ctcIsOwn = $false
        foreach ($ctcO in $ctcOwn) { if ([string]::Equals($ctcD, $ctcO, [StringComparison]::OrdinalIgnoreCase)) { $ctcIsOwn = $true } }
        if ($ctcIsOwn) { break }
        if ([System.IO.Path]::GetFileName($ctcD) -ieq 'condabin') { continue }
        try {
            if ([System.IO.Directory]::Exists([System.IO.Path]::Combine($ctcD, 'conda-meta')) -or
                [System.IO.Directory]::Exists([System.IO.Path]::Combine($ctcD, '..', 'conda-meta')) -or
                [System.IO.Directory]::Exists([System.IO.Path]::Combine($ctcD, '..', '..', 'conda-meta'))) {
                @@MSG TC801.line.env@@
                continue
            }
            if ([System.IO.File]::Exists([System.IO.Path]::Combine($ctcD, 'python.exe'))) {
                @@MSG TC801.line.python@@
                continue
            }
            $ctcHit = @($ctcDlls | Where-Object { [System.IO.File]::Exists([System.IO.Path]::Combine($ctcD, $_)) })
            if ($ctcHit.Count -gt 0) {
                $ctcLibs = ($ctcHit | Select-Object -First 3) -join ', '
                if ($ctcHit.Count -gt 3) { $ctcLibs += ', ...' }
                @@MSG TC801.line.dlls@@
            }
        } catch { }
    }
    if (-not $ctcReached -and -not $ctcPrefix.Contains(';')) {
        $ctcD = Join-Path $ctcPrefix 'Library\bin'
        @@MSG TC801.line.missing@@
    }
    # TC802: DLLs in the current folder with the names of torch's dependencies
    $ctcD = [System.IO.Directory]::GetCurrentDirectory()
    $ctcHere = (Get-Location).ProviderPath
    if ($ctcHere) { $ctcD = $ctcHere }
    $ctcIsOwn = $false
    foreach ($ctcO in $ctcOwn) { if ([string]::Equals($ctcD.TrimEnd('\'), $ctcO, [StringComparison]::OrdinalIgnoreCase)) { $ctcIsOwn = $true } }
    if (-not $ctcIsOwn) {
        $ctcHit = @($ctcDlls | Where-Object { [System.IO.File]::Exists([System.IO.Path]::Combine($ctcD, $_)) })
        if ($ctcHit.Count -gt 0) {
            $ctcLibs = ($ctcHit | Select-Object -First 3) -join ', '
            if ($ctcHit.Count -gt 3) { $ctcLibs += ', ...' }
            @@MSG TC802.line@@
        }
    }
    # TC803: CONDA_DLL_SEARCH_MODIFICATION_ENABLE
    $ctcV = $env:CONDA_DLL_SEARCH_MODIFICATION_ENABLE
    if ($ctcV -and $ctcV -ne '0') {
        @@MSG TC803.line.@@PYTHON_MODE@@@@
    }
}
