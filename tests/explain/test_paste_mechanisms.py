"""Mechanisms read from the paste's facts (the blind sets q and r showed them; set p measures them first-pass):
a wheel file's tags against the Python the paste states, ROCm's missing gfx target, a dependency with no wheel or
only a placeholder, an application's own Python check, conda finding no package for a platform, log line
prefixes."""

from __future__ import annotations

import pytest

from conda_torchcheck.explain import explain

WHEEL = "torch-1.0.0-cp37-cp37m-win_amd64.whl is not a supported wheel on this platform."
PLACEHOLDER_ONLY = (
    "ERROR: Could not find a version that satisfies the requirement TorchCodec==0.2.1 (from versions: 0.0.0.dev0)\n"
    "ERROR: No matching distribution found for TorchCodec==0.2.1"
)
APP_PYTHON = (
    "INCOMPATIBLE PYTHON VERSION\nThis program is tested with 3.10.6 Python, but you have 3.11.2.\n"
    "RuntimeError: Couldn't install torch."
)
CONDA_NOT_FOUND = (
    "PackagesNotFoundError: The following packages are not available from current channels:\n\n  - pytorch\n\n"
    "Current channels:\n\n  - https://conda.anaconda.org/pytorch/osx-arm64\n"
)
JOURNALD = (
    "Aug 12 10:38:34 host app[41]: WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. "
    "xFormers was built for:\n"
    "Aug 12 10:38:34 host app[41]:     PyTorch 2.10.0+cu128 with CUDA 1208 (you have 2.11.0+cu130)"
)


HIP_126 = (
    'OSError: [WinError 126] The specified module could not be found. Error loading "F:\\ComfyUI\\python_embeded\\'
    'Lib\\site-packages\\torch\\lib\\c10_hip.dll" or one of its dependencies.'
)
FFMPEG_126 = (
    "FFmpeg version 7: Could not find module 'C:\\Python313\\site-packages\\torchcodec\\libtorchcodec_core7.dll' "
    "(or one of its dependencies). Try using the full path with constructor syntax."
)
WSL_CUDNN = (
    "Could not load library libcudnn_cnn_infer.so.8. Error: libcuda.so: cannot open shared object file: "
    "No such file or directory"
)


@pytest.mark.parametrize(
    ("text", "first"),
    [
        # a ROCm build's own DLL: the AMD driver's HIP runtime is missing
        (HIP_126, "hip-runtime-missing"),
        # torchcodec's FFmpeg bridge: FFmpeg's DLLs are not found
        (FFMPEG_126, "ffmpeg-libraries-missing"),
        (
            "OSError: libavutil.so.59: cannot open shared object file: No such file or directory",
            "ffmpeg-libraries-missing",
        ),
        # cuDNN 8 dlopens the unversioned libcuda.so: the driver's link is missing (WSL2), not the driver
        (WSL_CUDNN, "linux-library-missing"),
        ("ImportError: libcuda.so.1: cannot open shared object file: No such file or directory", "no-nvidia-driver"),
        # an extension in a site folder under /lib is an extension, not a system library
        (
            (
                "ImportError: /lib/python3.10/site-packages/flash_attn_2_cuda.cpython-310-x86_64-linux-gnu.so: "
                "undefined symbol: _ZN3c104cuda9SetDeviceEi"
            ),
            "extension-for-other-torch",
        ),
        ("Mac M3，运行报错：AssertionError: Torch not compiled with CUDA enabled", "no-cuda-on-macos"),
        (
            "faiss crashes: OMP: Error #15: Initializing libomp.dylib, but found libomp.dylib already initialized",
            "other-package-openmp",
        ),
        # the wheel is for the Python that runs pip, and for 64-bit Windows: the Python is 32-bit
        (f"I use Windows 10 and Python 3.7.\n{WHEEL}", "python-32bit"),
        # the wheel is for another Python than the one stated
        (f"Python 3.8.10 on Windows\n{WHEEL}", "torch-for-other-python"),
        (
            "RuntimeError: HIP error: invalid device function\nHIP kernel errors might be asynchronously reported",
            "gpu-arch-not-in-build",
        ),
        (PLACEHOLDER_ONLY, "platform-without-wheels"),
        (
            "No module named 'torchcodec.decoders'\nversion is `torchcodec              0.0.0.dev0`",
            "python-not-supported",
        ),
        (APP_PYTHON, "python-not-supported"),
        (CONDA_NOT_FOUND, "platform-without-wheels"),
        (JOURNALD, "extension-for-other-torch"),
        # pip's and uv's own conflict reports name the torch the companion was built for
        (
            (
                "The conflict is caused by:\n    The user requested torch==2.2.1+cu118\n"
                "    torchvision 0.16.1+cu118 depends on torch==2.1.1+cu118\n"
            ),
            "torchvision-torch-mismatch",
        ),
        (
            (
                "Because xformers==0.0.23 depends on torch==2.1.1 and you require torch==2.2.0, we can conclude that "
                "your requirements are unsatisfiable."
            ),
            "extension-for-other-torch",
        ),
        # uv / pixi: no version of a +cuXXX pin on PyPI alone
        (
            (
                "Because there is no version of torch==2.5.1+cu121 and you require torch==2.5.1+cu121, we can "
                "conclude that your requirements are unsatisfiable."
            ),
            "local-version-needs-torch-index",
        ),
        # a +cpu lock on a Mac
        (
            (
                "MacBook Pro M2\n  - Installing torch (1.13.1+cpu): Failed\n\n  RuntimeError\n\n"
                "  Unable to find installation candidates for torch (1.13.1+cpu)"
            ),
            "local-version-not-built-for-platform",
        ),
        # the nvidia-* CUDA wheels are Linux-only
        (
            "building on my Mac M1:\n  Unable to find installation candidates for nvidia-cuda-nvrtc-cu11 (11.7.99)",
            "wheel-packaging-bug",
        ),
        # cudatoolkit 11.1 was conda-forge's (1.8's install command: -c pytorch -c conda-forge)
        (
            (
                "conda install pytorch torchvision torchaudio cudatoolkit=11.1 -c pytorch\n"
                "PackagesNotFoundError: The following packages are not available from current channels:\n\n"
                "  - cudatoolkit=11.1\n"
            ),
            "conda-package-not-in-channels",
        ),
        # torio's FFmpeg bridge on Windows
        (
            (
                "FileNotFoundError: Could not find module "
                "'C:\\v\\Lib\\site-packages\\torio\\lib\\libtorio_ffmpeg6.pyd' (or one of its dependencies). "
                "Try using the full path with constructor syntax."
            ),
            "ffmpeg-libraries-missing",
        ),
        # blind-g g007 (CTranslate2 loading cuDNN), c050/c051: libcudnn was found, what it opens by name was not
        (
            (
                "Could not load library libcudnn_ops_infer.so.8. Error: libcudnn_ops_infer.so.8: cannot open shared "
                "object file: No such file or directory"
            ),
            "linux-library-missing",
        ),
        # blind-g g026: "import torchtextを実行すると" then libtorch_cpu.so missing: torchtext built for another torch
        (
            "import torchtextを実行すると、\n\nOSError: libtorch_cpu.so: cannot open shared object file: No such file",
            "torchvision-torch-mismatch",
        ),
        # blind-j j006: torch.Generator("cuda") on Windows' CPU wheel
        (
            "RuntimeError: Cannot get CUDA generator without ATen_cuda library. PyTorch splits its backend into two",
            "cpu-build-installed",
        ),
        # blind-e e033: a requirements file's Linux wheel on a Mac
        (
            (
                "building the sample app on a mac\n"
                "torch-1.0.0-cp37-cp37m-linux_x86_64.whl is not a supported wheel on this platform."
            ),
            "wheel-for-other-platform",
        ),
        # blind-e e038: libtorchaudio.pyd "or one of its dependencies": torchaudio built for another torch
        (
            (
                "FileNotFoundError: Could not find module 'C:\\Users\\u\\AppData\\Local\\Programs\\Python\\"
                "Python310\\Lib\\site-packages\\torchaudio\\lib\\libtorchaudio.pyd' (or one of its "
                "dependencies). Try using the full path with constructor syntax."
            ),
            "torchvision-torch-mismatch",
        ),
        # blind-f f004 / f022: a missing std:: symbol is libstdc++'s (torch's own library: the system copy won)
        (
            "ImportError: ../penv2/lib/python2.7/site-packages/torch/_C.so: undefined symbol: _ZNSt12bad_weak_ptrD1Ev",
            "system-libstdcxx-wins",
        ),
        ('I still met the problem that "undefined symbol: _ZNSt13runtime_errorC2EPKc"', "env-libstdcxx-too-old"),
        # ... but a std:: template over torch's own types is torch's symbol
        (
            (
                "ImportError: /x/site-packages/torch_scatter/_C.so: undefined symbol: "
                "_ZNSt6vectorIN3c106IValueESaIS1_EED1Ev"
            ),
            "extension-for-other-torch",
        ),
        # blind-d d009 / d010: the 404's URL decides between a mirror and a channel name anaconda.org lacks
        (
            "UnavailableInvalidChannel: HTTP 404 NOT FOUND for channel nvidia <http://mirrors.tuna.tsinghua.edu.cn/anaconda/nvidia>",
            "conda-mirror-lacks-channel",
        ),
        (
            "UnavailableInvalidChannel: HTTP 404 NOT FOUND for channel pyto <https://conda.anaconda.org/pyto>",
            "conda-channel-name-wrong",
        ),
        # blind-da da037: pip ignored its only index (plain HTTP, not trusted)
        (
            (
                "Looking in indexes: http://pypi.v2ex.com/simple/\nCollecting torch\n  The repository located at "
                "pypi.v2ex.com is not a trusted or secure host and is being ignored.\n  Could not find a version "
                "that satisfies the requirement torch (from versions: )\nNo matching distribution found for torch"
            ),
            "pip-index-unusable",
        ),
        # blind-f f006, u023: Illegal instruction on a Jetson is numpy's OpenBLAS first
        (
            "I'am trying to install torch2trt at Jetson Nano, but `Illegal instruction` occured.",
            "openblas-coretype-misdetected",
        ),
        ("Illegal instruction (core dumped)", "cpu-instruction-set-unsupported"),
        # blind-f f011: a name missing from a torch submodule is version skew between the code and torch
        (
            "ImportError: cannot import name 'return_and_correct_aliasing' from 'torch.utils._python_dispatch'",
            "torch-too-old-for-app",
        ),
        # blind-da da027: whisper's CPU fallback is torch.cuda.is_available() False
        ('warnings.warn("FP16 is not supported on CPU; using FP32 instead")', "cpu-build-installed"),
    ],
)
def test_the_first_cause(text, first):
    assert explain(text).likely_causes[0] == first


LONG_PATH = (
    "ERROR: Could not install packages due to an OSError: [Errno 2] No such file or directory: "
    "'C:\\\\Users\\\\someone.else\\\\AppData\\\\Local\\\\Packages\\\\PythonSoftwareFoundation.Python.3.11_qbz5n2kfra8p0"
    "\\\\LocalCache\\\\local-packages\\\\Python311\\\\site-packages\\\\torch\\\\include\\\\ATen\\\\native\\\\"
    "transformers\\\\cuda\\\\mem_eff_attention\\\\kernels\\\\cutlassB_bf16_aligned_k65536_dropout_sm80.cu.inl'"
)


def test_the_path_pip_could_not_write_decides_by_its_length():
    # the path as pip prints it (a Python repr, doubled backslashes) is over 260 characters on disk
    assert explain(LONG_PATH).likely_causes == ["windows-long-paths"]
    short = LONG_PATH.replace("PythonSoftwareFoundation.Python.3.11_qbz5n2kfra8p0\\\\LocalCache\\\\", "")
    assert "windows-long-paths" not in explain(short).likely_causes
    hint = "HINT: This error might have occurred since this system does not have Windows Long Path support enabled."
    assert explain(hint).likely_causes == ["windows-long-paths"]


FROZEN = (
    'Traceback (most recent call last):\n  File "app.py", line 3, in <module>\n'
    '  File "PyInstaller\\loader\\pyimod02_importers.py", line 419, in exec_module\n'
    "OSError: [WinError 126] The specified module could not be found. Error loading "
    '"C:\\Users\\me\\AppData\\Local\\Temp\\_MEI84722\\torch\\lib\\shm.dll" or one of its dependencies.'
)


def test_a_frozen_apps_bundle_is_read_from_its_paths():
    assert explain(FROZEN).likely_causes[0] == "frozen-app-missing-dlls"
    plain = FROZEN.replace("_MEI84722", "venv\\Lib\\site-packages").replace("PyInstaller\\loader\\pyimod02_", "x")
    assert "frozen-app-missing-dlls" not in explain(plain).likely_causes


def test_pypis_records_of_a_release_decide_whether_the_python_has_wheels():
    from conda_torchcheck.explain.diagnose import _release_facts

    # torch 1.13.1: a cp311 wheel for Linux x86_64 only; the paste's OS decides, an unsaid one leaves it open
    pin = {"requirement": "torch==1.13.1", "paste_python": "3.11"}
    assert _release_facts({**pin, "paste_os": "linux"}) == {"python_supported": "yes"}
    assert _release_facts({**pin, "paste_os": "windows"}) == {"python_supported": "no"}
    assert _release_facts(pin) == {}
    # uv's "no wheel for the current platform" for a release with wheels for the stated Python: the platform
    uv = (
        "uv venv --python 3.12\nerror: Distribution `torch==2.5.1 @ registry+https://pypi.org/simple` can't be "
        "installed because it doesn't have a source distribution or wheel for the current platform"
    )
    assert explain(uv).likely_causes[0] == "platform-without-wheels"


def test_a_native_crash_beside_an_openmp_package_and_a_told_import_order():
    mac = "macOS 14 arm64\nimport lightgbm, torch\nzsh: segmentation fault  python repro.py"
    assert explain(mac).likely_causes[:2] == ["other-package-openmp", "two-openmp-macos"]
    told = (
        "Importing torch or mitsuba alone works fine.\n>>> import torch\n>>> import mitsuba\n"
        "ImportError: DLL load failed: The specified procedure could not be found."
    )
    assert explain(told).likely_causes[0] == "dll-preloaded-by-other-package"


def test_visible_devices_narrowed_and_torch_1_13s_mps_wording():
    narrowed = "export CUDA_VISIBLE_DEVICES=1\n>>> torch.cuda.is_available()\nFalse"
    assert explain(narrowed).likely_causes[0] == "cuda-visible-devices-hides-gpus"
    assert explain(narrowed.replace("=1", "=0")).likely_causes[0] != "cuda-visible-devices-hides-gpus"
    old = "NotImplementedError: The operator 'aten::_index_put_impl_' is not current implemented for the MPS device."
    assert explain(old).likely_causes == ["mps-op-not-implemented"]


def test_classic_condas_conflict_chain_and_autocasts_warning():
    chain = (
        "UnsatisfiableError: The following specifications were found to be in conflict:\n  - cudatoolkit 10.1*\n"
        "  - pytorch 1.0.1* -> cudatoolkit >=10.0.130,<10.1.0a0\n"
    )
    assert explain(chain).likely_causes[0] == "conda-cuda-libs-mismatch"
    autocast = "UserWarning: User provided device_type of 'cuda', but CUDA is not available. Disabling"
    assert explain(autocast).diagnoses[0].match.pattern_id == "cuda-not-available"


COLLECT_ENV = (
    "torch.cuda.is_available returns false\n\nCollecting environment information...\nPyTorch version: 1.5.0\n"
    "Is debug build: No\nCUDA used to build PyTorch: 10.2\n\nOS: Ubuntu 18.04.3 LTS\nPython version: 3.6\n"
    "Is CUDA available: No\nCUDA runtime version: 10.0.130\nGPU models and configuration:\n"
    "GPU 0: Tesla P100-PCIE-16GB\n\nNvidia driver version: {driver}\ncuDNN version: Could not collect\n"
)


def test_collect_envs_driver_under_its_builds_cuda_proves_the_driver_too_old():
    # blind-b b012: driver 410.104 runs CUDA 10.0 at most; a CUDA 10.2 build needs 440.33 (NVIDIA's Table 3)
    expl = explain(COLLECT_ENV.format(driver="410.104"))
    assert expl.likely_causes[0] == "driver-older-than-build"
    assert expl.decision.decided and expl.decision.reason == "proven-by-numbers"
    assert dict(expl.decision.numbers) == {"driver": "410.104", "cuda": "10.2"}


def test_a_driver_that_runs_the_build_is_not_blamed():
    expl = explain(COLLECT_ENV.format(driver="450.80.02"))
    assert expl.likely_causes[0] != "driver-older-than-build"
    assert expl.decision.reason != "proven-by-numbers"


def test_the_cuda_family_minimum_leaves_a_minor_undecided():
    # minor-version compatibility: 461.72 (11.2's driver) runs an 11.3 build, short of 11.3's own driver
    from conda_torchcheck.knowledge.cuda import driver_runs_cuda

    assert driver_runs_cuda("461.72", "11.3", "windows") is None
    assert driver_runs_cuda("418.87", "10.1") is None  # Linux needs 418.39, Windows 418.96: the OS decides
    assert driver_runs_cuda("418.87", "10.1", "linux") is True
    assert driver_runs_cuda("440.33", "11.0") is False  # below the CUDA 11 family minimum


def test_classic_condas_requested_package_conflict_report():
    # blind-a a038: "Package cudatoolkit conflicts for:" in the Requested package -> Available versions format
    text = (
        "Package cudatoolkit conflicts for:\ntorchvision -> pytorch[version='1.4.0.dev20191028'] -> "
        "cudatoolkit[version='>=10.1,<10.2']\ncudatoolkit=10.0\npytorch -> cudatoolkit[version='>=10.1,<10.2']\n"
    )
    assert explain(text).likely_causes[0] == "conda-cuda-libs-mismatch"
    cuda = (
        "UnsatisfiableError: The following specifications were found to be incompatible with your system:\n\n"
        "  - feature:/linux-64::__cuda==10.1=0\n\nPackage __cuda conflicts for:\npytorch -> __cuda\n"
    )
    assert explain(cuda).likely_causes[0] == "driver-older-than-build"


def test_installers_virtual_packages_the_machine_lacks():
    # blind-dg dg003: pixi on a CI runner without a GPU lists the machine's virtual packages, and __cuda is not among
    # them: no driver the detector could load, not an old one
    pixi = (
        "Error:   × Cannot install environment 'default'\n    ╰─▶ Virtual package '__cuda' does not match any of the "
        "available virtual packages on your machine: [__archspec=1=zen2, __glibc=2.39=0, __unix=0=0, __linux=6.11.0=0]"
    )
    assert explain(pixi).likely_causes[0] == "no-nvidia-driver"
    older = pixi.replace("[__archspec=1=zen2,", "[__cuda=11.4=0, __archspec=1=zen2,")
    assert explain(older).likely_causes[:2] == ["driver-older-than-build", "no-nvidia-driver"]
    assert explain("  └─ __glibc >=2.28, which is missing on the system.").likely_causes[0] == "glibc-too-old"


def test_a_mirror_that_sends_no_channel_index():
    # blind-dg dg016: .condarc's custom_channels send pytorch to TUNA, which answers with a page, not repodata.json
    text = (
        "RuntimeError: Unable to read repodata JSON file 'https://mirrors.tuna.tsinghua.edu.cn/anaconda/cloud/pytorch/"
        "noarch', error was: repository does not start with an object"
    )
    assert explain(text).likely_causes[0] == "conda-mirror-lacks-channel"
    # anaconda.org's own index unreadable is not a mirror's doing: no cause is claimed
    assert (
        "conda-mirror-lacks-channel"
        not in explain(text.replace("mirrors.tuna.tsinghua.edu.cn/anaconda/cloud", "conda.anaconda.org")).likely_causes
    )


def test_a_cuda_index_on_a_mac_has_no_wheels_for_it():
    # blind-dg dg013: uv on Apple silicon with --index-url .../whl/cu124, which holds Linux and Windows wheels only
    text = (
        "uv pip install torch torchvision torchaudio --index-url https://download.pytorch.org/whl/cu124\n"
        "On macOS / Apple Silicon:\n  × No solution found when resolving dependencies … torch>=2.4.0 has no wheels "
        "with a matching platform tag (e.g., `macosx_14_0_arm64`)"
    )
    assert explain(text).likely_causes[0] == "no-cuda-on-macos"
    # the CPU index has macOS wheels: the cause is then not the index
    assert explain(text.replace("/whl/cu124", "/whl/cpu")).likely_causes[0] != "no-cuda-on-macos"


def test_cuda_available_elsewhere_in_the_paste_rules_out_the_install():
    # blind-dg dg004: True in a fresh interpreter, then an app's select_device fails with "CUDA unavailable": not a CPU
    # build, not the driver; the process hides the devices, or another interpreter runs the app
    text = (
        '  File "/home/u/.local/lib/python3.7/site-packages/cnstd/yolov7/torch_utils.py", line 90, in select_device\n'
        "    assert torch.cuda.is_available(), f'CUDA unavailable, invalid device {device} requested'\n"
        "AssertionError: CUDA unavailable, invalid device cuda requested\n"
        ">>> import torch\n>>> torch.cuda.is_available()\nTrue\n"
    )
    result = explain(text)
    assert result.likely_causes[:2] == ["cuda-visible-devices-hides-gpus", "wrong-interpreter"]
    assert result.decision.decided is False
    assert explain(text.replace("\nTrue\n", "\nFalse\n")).likely_causes[0] != "cuda-visible-devices-hides-gpus"


def test_uv_names_a_machine_tag_below_the_wheels_manylinux():
    # blind-dg dg005: manylinux_2_27 machine, torch 2.7.0's x86_64 wheels are manylinux_2_28: the glibc is older
    text = (
        "error: Distribution `torch==2.7.0 @ registry+https://pypi.org/simple` can't be installed because it doesn't "
        "have a source distribution or wheel for the current platform\n\nhint: You're on Linux "
        "(`manylinux_2_27_x86_64`), but `torch` (v2.7.0) only has wheels for the following platforms: "
        "`manylinux_2_28_aarch64`, `manylinux_2_28_x86_64`, `macosx_11_0_arm64`, `win_amd64`"
    )
    assert explain(text).likely_causes[0] == "glibc-too-old"
    # an architecture the wheels do not have at all is the platform, not glibc
    other = text.replace("manylinux_2_27_x86_64", "manylinux_2_27_ppc64le")
    assert explain(other).likely_causes[0] != "glibc-too-old"
