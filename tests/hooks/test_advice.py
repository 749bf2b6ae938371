"""The guard's advice without conda: requests from conda's parsed arguments, the edits derived from findings, and
only what the judge (conda's solver, in the plugin tests) accepts."""

from __future__ import annotations

from conda_torchcheck.findings import Fix, Severity, finding
from conda_torchcheck.hooks.advice import Request, advise, candidates, request_from, spec_build, spec_name
from conda_torchcheck.messages import msg

CREATE = {
    "cmd": "create",
    "prefix": "/envs/new env",
    "channel": ["pytorch", "conda-forge"],
    "override_channels": False,
    "packages": ["pytorch=2.5.1", "pytorch-cuda=12.4", "cpuonly", "numpy"],
    "file": [],
    "func": "conda.cli.main_create.execute",
}


def tc102(*fix_commands: tuple[str, ...]):
    fixes = [Fix("conda", msg("TC102.fix_cuda"), commands=c) for c in fix_commands]
    return finding("TC102", Severity.WARNING, variant="mixed", cpu="cpuonly", cuda="pytorch", fixes=fixes)


def test_a_request_is_read_from_condas_arguments():
    r = request_from(CREATE)
    assert r == Request("create", ("-p", "/envs/new env"), ("pytorch", "conda-forge"), False, tuple(CREATE["packages"]))
    assert (
        r.command()
        == 'conda create -p "/envs/new env" -c pytorch -c conda-forge pytorch=2.5.1 pytorch-cuda=12.4 cpuonly numpy'
    )
    assert request_from({**CREATE, "func": "conda.cli.main_remove.execute"}) is None
    assert request_from({**CREATE, "file": ["specs.txt"]}) is None  # nothing typed to correct
    assert request_from({**CREATE, "func": "conda.cli.main_env_create.execute"}).verb == "env create"


def test_spec_parts():
    assert spec_name("pytorch::pytorch=2.5.1=*cuda*") == "pytorch"
    assert spec_build("pytorch::pytorch=2.5.1=*cuda*") == "*cuda*"
    assert spec_name("torchvision>=0.20") == "torchvision"
    assert spec_build("pytorch[build=cuda*]") == "cuda*"


def test_a_cpu_cuda_mix_offers_each_side_keeping_the_other_specs():
    r = request_from(CREATE)
    out = candidates(r, [tc102()])
    assert [(c[0].specs, c[2]) for c in out] == [
        (("pytorch=2.5.1", "pytorch-cuda=12.4", "numpy"), "cuda"),
        (("pytorch=2.5.1", "cpuonly", "numpy"), "cpu"),
    ]


def test_a_fix_is_folded_into_the_request_keeping_the_users_version():
    r = request_from(CREATE)
    fix = (
        'conda remove -p "/envs/new env" --force pytorch-cuda cpuonly',
        'conda install -p "/envs/new env" -c conda-forge "conda-forge::pytorch=*=cpu*"',
    )
    out = candidates(r, [tc102(fix)])
    folded = [c for c in out if c[0].specs[0].startswith("conda-forge::")][0]
    assert folded[0].specs == ("conda-forge::pytorch=2.5.1=*cpu*", "numpy")
    assert folded[1] == ()  # a create removes nothing first: the prefix does not exist
    assert folded[2] == "cpu"


def test_only_what_the_judge_accepts_is_advised_and_create_stays_create():
    r = request_from(CREATE)
    accepted = advise(r, [tc102()], judge=lambda req: "cpuonly" not in req.specs)
    assert len(accepted) == 1 and accepted[0].keeps == "cuda" and accepted[0].verified
    assert accepted[0].commands[0].startswith('conda create -p "/envs/new env" ')
    assert advise(r, [tc102()], judge=lambda req: False) == []


def test_a_removal_from_an_existing_env_comes_first_and_is_not_claimed_verified():
    r = Request("install", ("-n", "ml"), ("conda-forge",), False, ("pytorch-cuda=12.4",))
    fix = ("conda remove -n ml --force cpuonly", "conda install -n ml -c conda-forge pytorch-cuda=12.4")
    out = advise(r, [tc102(fix)], judge=lambda req: True)
    assert out[0].commands[0] == "conda remove -n ml --force cpuonly"
    assert not out[0].verified


def test_env_files_get_no_command():
    r = request_from({**CREATE, "func": "conda.cli.main_env_create.execute"})
    assert advise(r, [tc102()], judge=lambda req: True) == []


def test_a_removal_is_aimed_as_the_user_aimed_their_command():
    """The finding names the env by name (it lives under envs/), the user typed -p: the advice uses -p."""
    r = Request("install", ("-p", "/home/me/miniforge3/envs/u"), ("pytorch", "conda-forge"), True, ("mkl",))
    fix = ("conda remove -n u --force cpuonly", "conda install -n u -c conda-forge conda-forge::pytorch")
    [out] = advise(r, [tc102(fix)], judge=lambda req: True)
    assert out.commands[0] == "conda remove -p /home/me/miniforge3/envs/u --force cpuonly"
    assert out.commands[1].startswith("conda install -p /home/me/miniforge3/envs/u --override-channels ")


def test_an_update_whose_correction_pins_a_build_becomes_an_install():
    """conda update takes names only ("Invalid spec for 'conda update'"): a correction with a version, build or
    channel in a spec is an install; one that keeps bare names stays an update."""
    r = Request("update", ("-n", "u"), ("pytorch", "conda-forge"), True, ("pytorch",))
    fix = ('conda install -n u -c conda-forge "conda-forge::pytorch=*=cuda*"',)
    folded = [c[0] for c in candidates(r, [tc102(fix)]) if c[0].specs != r.specs]
    assert folded and all(c.verb == "install" for c in folded)
    assert folded[0].command().startswith("conda install -n u --override-channels -c pytorch -c conda-forge ")
    plain = Request("update", ("-n", "u"), ("conda-forge",), False, ("pytorch", "cpuonly"))
    kept = candidates(plain, [tc102()])
    assert all(c[0].verb == "update" for c in kept)
