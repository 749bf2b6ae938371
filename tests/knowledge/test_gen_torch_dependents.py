"""tools/gen_torch_dependents.py's readers, on small texts in the shapes they read (written for this test)."""

from __future__ import annotations

from tools import gen_torch_dependents as gen

META = """{% set version = "1.2.0" %}
package:
  name: demo
requirements:
  host:
    - python {{ python_min }}
    - pip
  run:
    - python >={{ python_min }}
    - numpy
    - pytorch >=2.0   # [linux]
test:
  requires:
    - pytorch-lightning
"""

RECIPE = """context:
  version: "0.3.1"
requirements:
  host:
    - pytorch
    - pytorch * ${{ torch_proc_type }}*
  run:
    - python
    - scipy
tests:
  - python:
      imports: [demo]
  - requirements:
      run:
        - pytorch
"""


def test_torch_requirements_keep_markers_and_drop_extras():
    lines = [
        "numpy",
        'torch>=2.1; sys_platform != "darwin"',
        'torch<2.3; sys_platform == "darwin"',
        'torchvision; extra == "vision"',
        'torch[opt]>=2; extra == "all"',
    ]
    assert gen.torch_requirements(lines) == [
        'torch>=2.1; sys_platform != "darwin"',
        'torch<2.3; sys_platform == "darwin"',
    ]
    assert gen.torch_requirements(['torch; python_version >= "3.9" and extra == "torch"']) == []
    assert gen.torch_requirements(None) == []
    assert set(gen.unconditional(lines)) == {"numpy", "torch"}


def test_a_meta_yaml_run_requirement():
    assert gen.section_items(META, "run")[-1] == "- pytorch >=2.0   # [linux]"
    assert gen._torch_item(gen.section_items(META, "run")) == "pytorch >=2.0   # [linux]"
    assert "pytorch-lightning" not in " ".join(gen.section_items(META, "run"))  # a test's requirement


def test_a_recipe_yaml_host_pytorch_and_a_tests_run_list():
    run = gen.section_items(RECIPE, "run")
    assert [gen.item_name(i) for i in run] == ["python", "scipy"]  # the tests' run list is not the package's
    assert gen._torch_item(gen.section_items(RECIPE, "host")) == "pytorch"


def test_item_names():
    assert gen.item_name('- ${{ "pytorch * cuda*" if cuda_compiler_version != "None" }}') == "pytorch"
    assert gen.item_name("- {{ pin_compatible('pytorch') }}") == "pytorch"
    assert gen.item_name('- "pytorch 2.10.* *cuda*"') == "pytorch"
    assert gen.item_name("then: pytorch-gpu") == "pytorch-gpu"
    assert gen.item_name("- huggingface_hub >=0.23.0") == "huggingface_hub"
