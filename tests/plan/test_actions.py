"""Reading fix commands: which manager, verb, packages, variables and files a command touches."""

from __future__ import annotations

from conda_torchcheck.plan.actions import option_values, parse


def test_pip_install_names_its_requirements_not_option_values():
    a = parse('"/e/bin/python" -m pip install torch==2.13.0 "torchvision==0.28.*" --index-url https://x/whl/cpu')
    assert (a.manager, a.verb) == ("pip", "install")
    assert a.targets == (("package", "torch"), ("package", "torchvision"))
    assert option_values(a.args, "--index-url") == ["https://x/whl/cpu"]
    assert a.effect(("package", "torchvision")) == "install torchvision==0.28.*"


def test_conda_names_pytorch_as_torch_and_skips_channels():
    a = parse('conda install -p "/e" -c pytorch "pytorch=2.5.1=py3.11_cpu_0" conda-forge::torchvision')
    assert (a.manager, a.verb) == ("conda", "install")
    assert a.targets == (("package", "torch"), ("package", "torchvision"))
    assert option_values(a.args, "-c") == ["pytorch"]


def test_shell_and_file_steps():
    assert parse("unset LD_LIBRARY_PATH").targets == (("variable", "LD_LIBRARY_PATH"),)
    export = parse('export LD_LIBRARY_PATH="/a:/b"')
    assert export.targets == (("variable", "LD_LIBRARY_PATH"),)
    assert export.effect(("variable", "LD_LIBRARY_PATH")) != parse("unset LD_LIBRARY_PATH").effect(
        ("variable", "LD_LIBRARY_PATH")
    )
    move = parse('mv "/e/conda-meta/x.json" "/e/conda-meta/x.json.broken"')
    assert (move.manager, move.targets) == ("file", (("file", "/e/conda-meta/x.json"),))


def test_unparseable_words_are_other():
    assert parse('echo "unterminated').manager == "other"
    assert parse("").manager == "other"
