"""Real error texts (from the failure catalog, bug reports and the Chinese seed articles) → the right pattern."""

from __future__ import annotations

from pathlib import Path

import pytest

from conda_torchcheck.explain.patterns import table
from conda_torchcheck.explain.recognise import normalize_text, recognise

SEEDS = Path(__file__).resolve().parents[3] / "shared" / "seeds"

# (text, pattern id, expected fields) — verbatim texts as users paste them
CASES = [
    (
        (
            r'OSError: [WinError 126] The specified module could not be found. Error loading "C:\Users\x\AppData\Roaming'  # noqa: E501
            r'\Python\Python311\site-packages\torch\lib\shm.dll" or one of its dependencies.'
        ),
        "winerror-126",
        {"dll": "shm.dll"},
    ),
    (
        (
            r'OSError: [WinError 126] 找不到指定的模块。 Error loading "D:\soft\Anaconda\envs\Muice\lib\site-packages'
            r'\torch\lib\fbgemm.dll" or one of its dependencies.'
        ),
        "winerror-126",
        {"dll": "fbgemm.dll"},
    ),
    (
        (
            r'OSError: [WinError 126] Не найден указанный модуль. Error loading "C:\Users\USER\AppData\Local\Programs'
            r'\Python\Python311\Lib\site-packages\torch\lib\cudnn_cnn_infer64_8.dll" or one of its dependencies.'
        ),
        "winerror-126",
        {"dll": "cudnn_cnn_infer64_8.dll"},
    ),
    (
        (
            r"FileNotFoundError: Could not find module 'C:\Python38\lib\site-packages\torch\lib\c10.dll' (or one of its "  # noqa: E501
            r"dependencies). Try using the full path with constructor syntax."
        ),
        "winerror-126",
        {"dll": "c10.dll"},
    ),
    (
        (
            r'OSError: [WinError 127] 找不到指定的程序。 Error loading "D:\Code\TorchProject\venv\lib\site-packages\torch'  # noqa: E501
            r'\lib\torch_python.dll" or one of its dependencies.'
        ),
        "winerror-127",
        {"dll": "torch_python.dll"},
    ),
    (
        (
            r'OSError: [WinError 127] The specified procedure could not be found. Error loading "C:\x\venv\Lib'
            r'\site-packages\torch\lib\caffe2_detectron_ops_gpu.dll" or one of its dependencies.'
        ),
        "winerror-127",
        {"dll": "caffe2_detectron_ops_gpu.dll"},
    ),
    (r"OSError: [WinError 193] %1 不是有效的 Win32 应用程序。", "winerror-193", {}),
    (
        (
            r"OSError: [WinError 1114] A dynamic link library (DLL) initialization routine failed. Error loading "
            r'"C:\Program Files\Python311\Lib\site-packages\torch\lib\c10.dll" or one of its dependencies.'
        ),
        "winerror-1114",
        {"dll": "c10.dll"},
    ),
    (
        (
            r'OSError: [WinError 1114] 动态链接库(DLL)初始化例程失败。 Error loading "D:\anaconda\envs\graphrag\lib'
            r'\site-packages\torch\lib\c10.dll" or one of its dependencies.'
        ),
        "winerror-1114",
        {"dll": "c10.dll"},
    ),
    (
        "ImportError: DLL load failed while importing _C: The specified module could not be found.",
        "import-126",
        {"module": "_C"},
    ),
    ("ImportError: DLL load failed while importing _C: 找不到指定的模块。", "import-126", {"module": "_C"}),
    ("ImportError: DLL load failed: 找不到指定的模块。", "import-126", {}),
    (
        "ImportError: DLL load failed while importing _C: Das angegebene Modul wurde nicht gefunden.",
        "import-126",
        {"module": "_C"},
    ),
    (
        "ImportError: DLL load failed while importing _C: 指定されたモジュールが見つかりません。",
        "import-126",
        {"module": "_C"},
    ),
    ("ImportError: DLL load failed while importing lib: 找不到指定的程序。", "import-127", {"module": "lib"}),
    (
        "ImportError: DLL load failed while importing _C: The specified procedure could not be found.",
        "import-127",
        {"module": "_C"},
    ),
    ("ImportError: DLL load failed while importing _C: %1 is not a valid Win32 application.", "import-193", {}),
    (
        "ImportError: DLL load failed while importing _C: A dynamic link library (DLL) initialization routine failed.",
        "import-1114",
        {"module": "_C"},
    ),
    # full-width parentheses and no spaces, as some consoles and editors produce
    ("ImportError: DLL load failed while importing _C: 动态链接库（DLL）初始化例程失败", "import-1114", {}),
    (
        "OMP: Error #15: Initializing libiomp5md.dll, but found libiomp5md.dll already initialized.",
        "omp-error-15",
        {"runtime": "libiomp5md.dll", "other": "libiomp5md.dll"},
    ),
    (
        "OMP: Error #15: Initializing libiomp5.dylib, but found libomp.dylib already initialized.",
        "omp-error-15",
        {"runtime": "libiomp5.dylib", "other": "libomp.dylib"},
    ),
    (
        (
            "ImportError: /home/u/miniconda3/envs/t/lib/python3.10/site-packages/torch/lib/libtorch_cpu.so: "
            "undefined symbol: iJIT_NotifyEvent"
        ),
        "undefined-symbol",
        {"symbol": "iJIT_NotifyEvent", "library": "libtorch_cpu.so"},
    ),
    (
        (
            "ImportError: /usr/local/lib/python3.10/dist-packages/torch/lib/libtorch_cuda.so: undefined symbol: "
            "ncclCommRegister"
        ),
        "undefined-symbol",
        {"symbol": "ncclCommRegister", "library": "libtorch_cuda.so"},
    ),
    (
        (
            "ImportError: /venv/lib/python3.11/site-packages/nvidia/cusparse/lib/libcusparse.so.12: undefined symbol: "
            "__nvJitLinkComplete_12_4, version libnvJitLink.so.12"
        ),
        "undefined-symbol",
        {"symbol": "__nvJitLinkComplete_12_4", "symbol_version": "libnvJitLink.so.12", "library": "libcusparse.so.12"},
    ),
    (
        (
            "ImportError: /lib/x86_64-linux-gnu/libstdc++.so.6: version `GLIBCXX_3.4.30' not found (required by "
            "/home/u/miniconda3/envs/x/lib/python3.11/site-packages/torch/lib/libtorch_python.so)"
        ),
        "version-not-found",
        {"version": "GLIBCXX_3.4.30", "library": "libstdc++.so.6", "required_by": "libtorch_python.so"},
    ),
    (
        (
            "ImportError: /home/u/miniconda3/envs/x/bin/../lib/libstdc++.so.6: version `GLIBCXX_3.4.32' not found "
            "(required by /home/u/.cache/torch_extensions/py311_cu121/fused/fused.so)"
        ),
        "version-not-found",
        {"version": "GLIBCXX_3.4.32", "needed_gcc": "13"},
    ),
    (
        "ImportError: libgomp.so.1: version `OACC_2.0' not found (required by /x/torch/lib/libtorch_cpu.so)",
        "version-not-found",
        {"version": "OACC_2.0"},
    ),
    (
        "ImportError: libcudnn.so.9: cannot open shared object file: No such file or directory",
        "cannot-open-shared-object",
        {"library": "libcudnn.so.9"},
    ),
    (
        "OSError: libcurand.so.10: cannot open shared object file: No such file or directory",
        "cannot-open-shared-object",
        {"library": "libcurand.so.10"},
    ),
    (
        (
            "UserWarning: Failed to load image Python extension: libtorch_cuda_cu.so: cannot open shared object file: "
            "No such file or directory"
        ),
        "cannot-open-shared-object",
        {"library": "libtorch_cuda_cu.so"},
    ),
    (
        "ImportError: libc10_cuda.so: 无法打开共享对象文件: 没有那个文件或目录",
        "cannot-open-shared-object",
        {"library": "libc10_cuda.so"},
    ),
    (
        (
            "UserWarning: CUDA initialization: The NVIDIA driver on your system is too old (found version 11040). Please "  # noqa: E501
            "update your GPU driver by downloading and installing a new version from the URL: "
            "http://www.nvidia.com/Download/index.aspx"
        ),
        "cuda-driver-too-old",
        {"found": "11040", "found_cuda": "11.4"},
    ),
    (
        "RuntimeError: CUDA error: CUDA driver version is insufficient for CUDA runtime version",
        "cuda-driver-too-old",
        {},
    ),
    (
        (
            "NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current PyTorch installation.\n"  # noqa: E501
            "The current PyTorch install supports CUDA capabilities sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90."
        ),
        "gpu-arch-unsupported",
        {"sm": "sm_120", "supported": "sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90"},
    ),
    ("RuntimeError: operator torchvision::nms does not exist", "torchvision-operator-missing", {"op": "nms"}),
    (
        "ModuleNotFoundError: No module named 'typing_extensions'",
        "torch-dependency-missing",
        {"module": "typing_extensions"},
    ),
    (
        "ImportError: cannot import name 'TypeIs' from 'typing_extensions' (/x/site-packages/typing_extensions.py)",
        "torch-dependency-missing",
        {"module": "typing_extensions", "name": "TypeIs"},
    ),
    ("ModuleNotFoundError: No module named 'torch'", "torch-not-found", {}),
    (
        (
            "Microsoft Visual C++ Redistributable is not installed, this may lead to the DLL load failure.\n"
            "It can be downloaded at https://aka.ms/vs/16/release/vc_redist.x64.exe"
        ),
        "vc-redist-warning",
        {},
    ),
    (
        "Could not locate zlibwapi.dll. Please make sure it is in your library path!",
        "zlibwapi-missing",
        {},
    ),
    (
        "ImportError: Failed to load PyTorch C extensions:\n    It appears that PyTorch has loaded the `torch/_C` folder",  # noqa: E501
        "c-extensions-not-loaded",
        {},
    ),
    (
        (
            "ERROR: Could not find a version that satisfies the requirement torch (from versions: none)\n"
            "ERROR: No matching distribution found for torch"
        ),
        "no-matching-distribution",
        {"requirement": "torch"},
    ),
    (
        r"WARNING: Ignoring invalid distribution -orch (c:\users\x\miniconda3\envs\t\lib\site-packages)",
        "invalid-distribution",
        {"leftover": "-orch"},
    ),
    # --- added with the real-report corpus (tests/data/reports/*.txt hold the full pastes) ---
    (
        (
            r'OSError: [WinError 182] The operating system cannot run %1. Error loading "D:\m\envs\r\Lib\site-packages'
            r'\torch\lib\fbgemm.dll" or one of its dependencies.'
        ),
        "winerror-182",
        {"dll": "fbgemm.dll"},
    ),
    ("ImportError: DLL load failed: The operating system cannot run %1.", "import-182", {}),
    (
        (
            r'OSError: [WinError 1455] 页面文件太小，无法完成操作。 Error loading "F:\a\envs\p\lib\site-packages\torch'
            r'\lib\caffe2_detectron_ops_gpu.dll" or one of its dependencies.'
        ),
        "winerror-1455",
        {"dll": "caffe2_detectron_ops_gpu.dll"},
    ),
    (
        "Erro loading “xxx\\Lib\\site-packages\\torch\\lib\\fbgemm.dll” or one of its dependencies.",
        "dll-load-error",
        {"dll": "fbgemm.dll"},
    ),
    (
        "Could not load library cudnn_ops_infer64_8.dll. Error code 126",
        "cudnn-library-not-loaded",
        {"dll": "cudnn_ops_infer64_8.dll", "code": "126"},
    ),
    (
        "The code execution cannot proceed because VCRUNTIME140_1.dll was not found. Reinstalling the program may fix",
        "dll-missing-named",
        {"dll": "VCRUNTIME140_1.dll"},
    ),
    (
        "Missing C:\\p\\Lib\\site-packages\\torch\\lib\\caffe2_nvrtc.dll",
        "dll-missing-named",
        {"dll": "caffe2_nvrtc.dll"},
    ),
    ("AssertionError: Torch not compiled with CUDA enabled", "torch-not-compiled-cuda", {}),
    (">>> torch.cuda.is_available()\nFalse", "cuda-not-available", {}),
    (
        "RuntimeError: CUDA error: no kernel image is available for execution on the device",
        "no-kernel-image",
        {},
    ),
    ("RuntimeError: Found no NVIDIA driver on your system. Please check", "no-nvidia-driver", {}),
    ("ModuleNotFoundError: No module named 'torch._C'", "torch-c-missing", {}),
    ("NameError: name '_C' is not defined", "torch-c-missing", {}),
    (
        (
            "ImportError: dlopen(/x/torch/_C.cpython-38-darwin.so, 2): Library not loaded: @rpath/libomp.dylib\n"
            "  Referenced from: /x/torch/lib/libtorch_cpu.dylib"
        ),
        "dyld-library-not-loaded",
        {"library": "libomp.dylib", "required_by": "libtorch_cpu.dylib", "required_by_role": "torch"},
    ),
    (
        "(mach-o file, but is an incompatible architecture (have 'x86_64', need 'arm64'))",
        "dyld-incompatible-arch",
        {"have": "x86_64", "need": "arm64"},
    ),
    (
        (
            "ImportError: dlopen(/e/lib/python3.12/site-packages/x/_ext.cpython-312-darwin.so, 0x0002): "
            "symbol not found in flat namespace '__ZN3c106detail14torchCheckFailEPKcS2_jRKNSt3__112basic_string"
            "IcNS3_11char_traitsIcEENS3_9allocatorIcEEEE'"
        ),
        "dyld-symbol-not-found",
        {"library_role": "extension"},
    ),
    (
        (
            "WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:\n"
            "    PyTorch 2.1.2+cu121 with CUDA 1201 (you have 2.1.2+cpu)"
        ),
        "extension-built-for-torch",
        {"built_for": "2.1.2+cu121", "have_torch": "2.1.2+cpu"},
    ),
    (
        (
            "OSError: /e/lib/python3.8/site-packages/torch/lib/../../../../libcublas.so.11: symbol free_gemm_select "
            "version libcublasLt.so.11 not defined in file libcublasLt.so.11 with link time reference"
        ),
        "symbol-version-not-defined",
        {"library": "libcublas.so.11", "library_role": "cuda"},
    ),
    (
        "RuntimeError: Expected one of cpu, cuda, xpu device type at start of device string: mps",
        "mps-unknown",
        {},
    ),
    ("RuntimeError: The MPS backend is supported on MacOS 12.3+.", "mps-macos-too-old", {"needed_macos": "12.3"}),
    (
        "MisconfigurationException: MPSAccelerator can not run on your system since the accelerator is not available.",
        "mps-not-available",
        {},
    ),
    (
        (
            "RuntimeError: Detected that PyTorch and torchvision were compiled with different CUDA versions. "
            "PyTorch has CUDA Version=11.7 and torchvision has CUDA Version=11.8. Please reinstall"
        ),
        "torchvision-cuda-mismatch",
        {"torch_cuda": "11.7", "vision_cuda": "11.8"},
    ),
    (
        (
            "The following NEW packages will be INSTALLED:\n\n  cpu-only           pytorch/linux-64::cpu-only-1.0-0\n"
            "  pytorch-nightly    pytorch/linux-64::pytorch-nightly-1.2.0.dev20190805+cpu-py3.7_cpu_0\n"
        ),
        "conda-plan-cpu-build",
        {},
    ),
    (
        "RuntimeError: Error named symbol not found at line 233 in file /src/csrc/ops.cu",
        "cuda-named-symbol-not-found",
        {},
    ),
    (
        "RuntimeError: cuDNN version mismatch: PyTorch was compiled against 7102 but linked against 7605",
        "cudnn-version-mismatch",
        {"built_cudnn": "7102", "linked_cudnn": "7605"},
    ),
    (
        (
            '  File "/usr/lib/python3.7/inspect.py", line 56, in <module>\n'
            "    for k, v in dis.COMPILER_FLAG_NAMES.items():\n"
            "AttributeError: module 'dis' has no attribute 'COMPILER_FLAG_NAMES'"
        ),
        "module-attribute-missing",
        {"module": "dis", "attribute": "COMPILER_FLAG_NAMES"},
    ),
    ("I install PyTorch on Win8.1 and it goes wrong with DLL not found.", "dll-failure-told", {}),
    ("Importing Torch is giving me an error undefined symbol: ncclCommRegister", "undefined-symbol-named", {}),
    (
        (
            "ImportError: cannot import name 'Random' from 'random' "
            "(/Users/d/anaconda3/lib/python3.7/site-packages/torch/random.py)"
        ),
        "stdlib-module-shadowed",
        {"module": "random"},
    ),
    ("使用requirements安装，PyTorch安装的是CPU版本", "cpu-build-told", {}),
    ("PySlice_Unpack在python3.6.1才被引入", "python-capi-symbol-named", {"symbol": "PySlice_Unpack"}),
    (
        "error: Distribution `markupsafe==3.0.2 @ registry+https://download.pytorch.org/whl/cu118` can't be installed",
        "dependency-from-torch-index",
        {"dependency": "markupsafe"},
    ),
    ("It can not run in Pycharm but it works in cmd", "works-outside-the-ide", {}),
    (
        "ImportError: libtorch_cpu.so: cannot enable executable stack as shared object requires: Invalid argument",
        "executable-stack",
        {"library": "libtorch_cpu.so"},
    ),
    (
        "ImportError: /e/lib/python3.9/site-packages/torch/lib/libtorch_cpu.so: invalid ELF header",
        "invalid-elf-header",
        {"library": "libtorch_cpu.so"},
    ),
    ("$ python3 -> import torch returns `Illegal instruction (core dumped)`", "illegal-instruction", {}),
    ("UserWarning: Failed to load image Python extension:", "torchvision-image-extension", {}),
    ("pip install torch==2.5.1 版本不支持50系显卡，需要更新到nightly", "gpu-not-supported-told", {}),
    (
        '  File "D:\\Python\\Lib\\site-packages\\torch\\__init__.py", line 264, in _load_dll_libraries\n',
        "torch-dll-preload-cut",
        {},
    ),
    (
        (
            '  File "/usr/local/lib/python2.7/dist-packages/torch/cuda/__init__.py", line 16, in <module>\n'
            "    from multiprocessing.util import register_after_fork\n"
            '  File "/home/u/pytorch-master/torch/multiprocessing/__init__.py", line 17, in <module>\n'
        ),
        "torch-from-two-places",
        {"torch_init": "/home/u/pytorch-master/torch/multiprocessing/__init__.py"},
    ),
    (
        "RuntimeError: module compiled against API version 0xa but this version of numpy is 0x9",
        "numpy-abi",
        {"built_api": "0xa", "numpy_api": "0x9"},
    ),
    (
        "整合包中runtime\\Lib\\site-packages\\torch\\lib\\路径下没有包含cudnn_ops_infer64_8.dll，导致asr失败",
        "dll-missing-named",
        {"dll": "cudnn_ops_infer64_8.dll"},
    ),
    # an issue title: the reason after "while importing _ext" is cut off
    ("ImportError: DLL load failed while importing _ext 不支持cuda121", "import-dll-failed", {"module": "_ext"}),
    ("RuntimeError: HIP error: invalid device function", "hip-invalid-device-function", {}),
    (
        "ERROR: Could not find a version that satisfies the requirement TorchCodec==0.2.1 (from versions: 0.0.0.dev0)",
        "dependency-no-matching-distribution",
        {"dependency": "TorchCodec", "versions": "0.0.0.dev0"},
    ),
    ("version is `torchcodec              0.0.0.dev0`", "placeholder-release-installed", {"dependency": "torchcodec"}),
    (
        "torch-1.0.0-cp37-cp37m-win_amd64.whl is not a supported wheel on this platform.",
        "unsupported-wheel",
        {"wheel_python": "cp37", "wheel_platform": "win_amd64"},
    ),
    # blind sets d009 / d010: a mirror's URL and anaconda.org's, read apart by the cause rules
    (
        "UnavailableInvalidChannel: HTTP 404 NOT FOUND for channel nvidia <http://mirrors.tuna.tsinghua.edu.cn/anaconda/nvidia>",
        "conda-channel-not-found",
        {"channel": "nvidia", "channel_url": "http://mirrors.tuna.tsinghua.edu.cn/anaconda/nvidia"},
    ),
    (
        'Exception: You tried to install "pytorch". The package named for PyTorch is "torch"',
        "pypi-pytorch-placeholder",
        {},
    ),
    (
        "ImportError: cannot import name 'return_and_correct_aliasing' from 'torch.utils._python_dispatch'",
        "torch-name-missing",
        {"attribute": "return_and_correct_aliasing", "module": "torch.utils._python_dispatch"},
    ),
    ("RuntimeError: CUDA error: all CUDA-capable devices are busy or unavailable", "cuda-devices-unavailable", {}),
    (
        "RuntimeError: Unable to find torch_shm_manager at /home/u/dist/test/torch/lib/torch_shm_manager",
        "torch-shm-manager-missing",
        {"library_path": "/home/u/dist/test/torch/lib/torch_shm_manager"},
    ),
    (
        (
            "PackagesNotFoundError: The following packages are not available from current channels:\n\n  - pytorch\n\n"
            "Current channels:\n\n  - https://conda.anaconda.org/pytorch/osx-arm64\n"
        ),
        "conda-packages-not-found",
        {"requirement": "pytorch", "subdir": "osx-arm64"},
    ),
    (
        "This program is tested with 3.10.6 Python, but you have 3.11.2.",
        "app-python-version-check",
        {"tested_python": "3.10", "python": "3.11"},
    ),
    # messages the torch family raises itself (error_patterns/raised.toml), as their raise sites write them
    (
        (
            "RuntimeError: Detected that PyTorch and TorchAudio were compiled with different CUDA versions. PyTorch "
            "has CUDA version 11.8 whereas TorchAudio has CUDA version 11.7. Please install the TorchAudio version"
        ),
        "torchaudio-cuda-mismatch",
        {"torch_cuda": "11.8", "audio_cuda": "11.7"},
    ),
    ('"hipErrorNoBinaryForGpu: Unable to find code object for all current devices!"', "hip-no-binary-for-gpu", {}),
    (
        (
            "RuntimeError:\nThe detected CUDA version (11.5) mismatches the version that was used to compile\n"
            "PyTorch (12.1). Please make sure to use the same CUDA versions."
        ),
        "cpp-extension-cuda-mismatch",
        {"system_cuda": "11.5", "torch_cuda": "12.1"},
    ),
    (
        "OSError: CUDA_HOME environment variable is not set. Please set it to your CUDA install root.",
        "cpp-extension-no-cuda-home",
        {},
    ),
    ("ImportError: FFmpeg libraries are not found. Please install FFmpeg.", "ffmpeg-not-found", {}),
    (
        (
            "UserWarning: CUDA initialization: CUDA unknown error - this may be due to an incorrectly set up "
            "environment, e.g. changing env variable CUDA_VISIBLE_DEVICES after program start."
        ),
        "cuda-unknown-error",
        {},
    ),
    (
        "ValueError: libcublas.so.*[0-9] not found in the system path ['/home/u/venv/lib/python3.10/site-packages']",
        "preload-cuda-deps-not-found",
        {"library": "libcublas.so.*[0-9]"},
    ),
    (
        (
            "UserWarning: CUDA initialization: Unexpected error from cudaGetDeviceCount(). Did you run some cuda "
            "functions before calling NumCudaDevices() that might have already set an error? Error 803: system has "
            "unsupported display driver / cuda driver combination"
        ),
        "cuda-driver-mismatch-803",
        {},
    ),
    (
        (
            "RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling "
            "NumCudaDevices() that might have already set an error? Error 804: forward compatibility was attempted on "
            "non supported HW"
        ),
        "cuda-forward-compat-804",
        {},
    ),
    ("RuntimeError: No HIP GPUs are available", "no-gpus-available", {"backend": "HIP"}),
    (
        "RuntimeError: CUDA driver initialization failed, you might not have a CUDA gpu.",
        "cuda-driver-init-failed",
        {},
    ),
    ("RuntimeError: Numpy is not available", "numpy-not-available", {}),
    (
        "RuntimeError: CUDA error: the provided PTX was compiled with an unsupported toolchain.",
        "ptx-unsupported-toolchain",
        {},
    ),
    (
        "AttributeError: module 'torch.utils._pytree' has no attribute 'register_pytree_node'",
        "torch-api-missing",
        {"module": "torch.utils._pytree", "attribute": "register_pytree_node"},
    ),
    ("ModuleNotFoundError: No module named 'torch._six'", "torch-api-removed", {"module": "torch._six"}),
    (
        "RuntimeError: cuda runtime error (802) : system not yet initialized at /opt/conda/THCGeneral.cpp:50",
        "cuda-system-not-ready",
        {},
    ),
    (
        (
            "ImportError: cannot import name 'stack' from partially initialized module 'torch' (most likely due "
            "to a circular import) (/x/sahi/utils/torch.py)"
        ),
        "module-attribute-missing",
        {"module": "torch", "attribute": "stack"},
    ),
    (
        "RuntimeError: use_libuv was requested but PyTorch was build without libuv support",
        "tcpstore-without-libuv",
        {},
    ),
    ("RuntimeError: Distributed package doesn't have NCCL built in", "nccl-not-built-in", {}),
    (
        "OSError: /usr/lib/aarch64-linux-gnu/libgomp.so.1: cannot allocate memory in static TLS block",
        "static-tls-exhausted",
        {"library": "libgomp.so.1"},
    ),
    (
        (
            "[WinError 4551] An Application Control policy has blocked this file. "
            'Error loading "C:\\P\\torch\\lib\\torch.dll" or one of its dependencies.'
        ),
        "winerror-4551",
        {"dll": "torch.dll"},
    ),
    (
        "ImportError: cannot import name 'string_classes' from 'torch._six' (/x/torch/_six.py)",
        "torch-api-removed",
        {"module": "torch._six"},
    ),
    (
        (
            "RuntimeError: This function was deprecated since version 1.9 and is now removed. Please use the "
            "torch.linalg.solve function instead."
        ),
        "torch-api-removed",
        {},
    ),
    (
        "ModuleNotFoundError: No module named 'torchvision.transforms.functional_tensor'",
        "torchvision-module-removed",
        {"module": "torchvision.transforms.functional_tensor"},
    ),
    (
        "ImportError: cannot import name 'packaging' from 'pkg_resources' (/u/venv/lib/python3.10/site-packages/pkg_resources/__init__.py)",  # noqa: E501
        "setuptools-api-removed",
        {},
    ),
    (
        "RuntimeError: Cannot find a working triton installation. Either the package is not installed or it is too old.",  # noqa: E501
        "triton-not-working",
        {},
    ),
    (
        (
            "NotImplementedError: The operator 'aten::upsample_bicubic2d.out' is not currently implemented for the "
            "MPS device. If you want this op to be added in priority during the prototype phase of this feature, "
            "please comment on https://github.com/pytorch/pytorch/issues/77764."
        ),
        "mps-op-not-implemented",
        {"op": "aten::upsample_bicubic2d.out"},
    ),
    (
        "TypeError: Cannot convert a MPS Tensor to float64 dtype as the MPS framework doesn't support float64. Please use float32 instead.",  # noqa: E501
        "mps-float64",
        {},
    ),
    (
        (
            "ERROR: Could not install packages due to an OSError: [Errno 2] No such file or directory: "
            "'C:\\\\Users\\\\me\\\\AppData\\\\Local\\\\torch\\\\lib\\\\x.dll'"
        ),
        "pip-path-too-long",
        {"path_too_long": "no"},
    ),
    (
        "The user requested torch==1.13.0\ntorchvision 0.15.2 depends on torch==2.0.1",
        "companion-requires-other-torch",
        {"package": "torchvision", "version": "0.15.2", "needs": "2.0.1", "have_torch": "torch==1.13.0"},
    ),
    (
        "ERROR: No matching distribution found for nvidia-cudnn-cu12==8.9.2.26",
        "nvidia-wheel-not-for-platform",
        {"requirement": "nvidia-cudnn-cu12"},
    ),
    (
        (
            "Virtual package '__cuda' does not match any of the available virtual packages on your machine: "
            "[__archspec=1=zen2, __glibc=2.39=0, __unix=0=0, __linux=6.11.0=0]"
        ),
        "virtual-package-missing",
        {"virtual": "__cuda", "available": "__archspec=1=zen2, __glibc=2.39=0, __unix=0=0, __linux=6.11.0=0"},
    ),
    (
        (
            "RuntimeError: Unable to read repodata JSON file "
            "'https://mirrors.example.org/anaconda/cloud/pytorch/noarch', "
            "error was: repository does not start with an object"
        ),
        "conda-repodata-unreadable",
        {"channel_url": "https://mirrors.example.org/anaconda/cloud/pytorch/noarch"},
    ),
    (
        "  └─ __glibc >=2.28, which is missing on the system.",
        "virtual-package-missing",
        {"virtual": "__glibc"},
    ),
    (
        "  - nothing provides cuda-cudart >=12.1,<12.2 needed by pytorch-cuda-12.1-ha16c6d3_5",
        "conda-unsatisfiable",
        {"requirement": "cuda-cudart", "needed_by": "pytorch-cuda-12.1-ha16c6d3_5"},
    ),
    (
        (
            "ERROR: THESE PACKAGES DO NOT MATCH THE HASHES FROM THE REQUIREMENTS FILE.\n"
            "    torch==2.1.0 from https://files.pythonhosted.org/packages/x/torch-2.1.0-cp310-cp310-linux_x86_64.whl:"
        ),
        "pip-hash-mismatch",
        {"requirement": "torch==2.1.0"},
    ),
    (
        "ERROR: Could not install packages due to an OSError: [Errno 28] No space left on device",
        "install-disk-full",
        {},
    ),
    (
        "torchvision 0.15.2 requires torch==2.0.1, but you have torch 2.1.0 which is incompatible.",
        "companion-requires-other-torch",
        {"package": "torchvision", "needs": "2.0.1", "have_torch": "torch 2.1.0"},
    ),
    (
        "Because torchvision (0.15.2) depends on torch (2.0.1)\n and your project depends on torch (2.1.0)",
        "companion-requires-other-torch",
        {"package": "torchvision", "version": "0.15.2", "needs": "2.0.1"},
    ),
    ("import lightgbm, torch\nzsh: segmentation fault  python repro.py", "segfault-told", {}),
    ("$ nvidia-smi\nFailed to initialize NVML: Driver/library version mismatch", "nvml-driver-mismatch", {}),
    (
        "NotImplementedError: Could not run 'torchvision::nms' with arguments from the 'CUDA' backend.",
        "operator-missing-for-backend",
        {"namespace": "torchvision", "backend": "CUDA", "op": "torchvision::nms"},
    ),
    ("ModuleNotFoundError: No module named 'mmcv._ext'", "compiled-ops-module-missing", {"package": "mmcv"}),
    ("ModuleNotFoundError: No module named 'amp_C'", "compiled-ops-module-missing", {"module": "amp_C"}),
    (
        "ERROR: Package 'torch' requires a different Python: 3.12.0 not in '>=3.8,<3.12'",
        "pip-requires-different-python",
        {"package": "torch", "python": "3.12", "range": ">=3.8,<3.12"},
    ),
    (
        "Because torch==2.5.1 has no wheels with a matching Python ABI tag (e.g., `cp313t`) and you require torch",
        "uv-no-wheel-for-python-abi",
        {"abi": "cp313t"},
    ),
    (
        "SafetyError: The package for pytorch located at /opt/conda/pkgs/pytorch-2.1.0\nappears to be corrupted.",
        "conda-package-corrupted",
        {"package": "pytorch"},
    ),
    ("ClobberError: This transaction has incompatible packages due to a shared path.", "conda-clobber", {}),
    (
        "AttributeError: module 'torch._C' has no attribute 'BFloat16StorageBase'",
        "torch-c-attribute-missing",
        {"attribute": "BFloat16StorageBase"},
    ),
    (
        (
            "PackagesNotFoundError: The following packages are not available from current channels:\n\n"
            "  - pytorch-cpu=1.0.1 -> cudatoolkit=None"
        ),
        "conda-packages-not-found",
        {"dependency_none": "cudatoolkit"},
    ),
    (
        "There is no such file `graphbolt_pytorch_2.4.1.dll`.",
        "dgl-graphbolt-for-other-torch",
        {"torch_version": "2.4.1"},
    ),
    (
        (
            "pytorch                   0.4.1           py37_cuda0.0_cudnn0.0_1    pytorch\n"
            "pytorch-nightly           1.0.0.dev20180921         py3.7_0    pytorch"
        ),
        "two-conda-torch-packages",
        {"other": "pytorch-nightly"},
    ),
    ("System Info: 2.0.0+cpu Autocast half, the generation runs on the CPU", "cpu-build-shown", {"version": "2.0.0"}),
    (
        "`cutlassF-pt` is not supported because:\n    xFormers wasn't build with CUDA support",
        "xformers-without-its-extensions",
        {},
    ),
    (
        (
            "CondaHTTPError: HTTP 404 NOT FOUND for url"
            " https://conda.anaconda.org/pytorch/noarch/pytorch-mutex-1.0-cuda.tar.bz2"
        ),
        "conda-package-file-404",
        {"package": "pytorch-mutex", "version": "1.0"},
    ),
    (
        "ModuleNotFoundError: No module named 'torch.utils.data._utils'",
        "torch-submodule-missing",
        {"module": "torch.utils.data._utils"},
    ),
    (
        "Collecting pytorch\n  Using cached pytorch-0.1.tar.gz",
        "pip-fell-back-to-placeholder-sdist",
        {"sdist": "pytorch-0.1"},
    ),
    (
        "  pytorch            pytorch::pytorch-1.7.1-py3.8_cuda10.2~ --> pkgs/main::pytorch-1.7.1-cpu_py38h6a09485_0",
        "conda-plan-cpu-build",
        {"replaced": "-->"},
    ),
]


@pytest.mark.parametrize(("text", "pattern", "fields"), CASES, ids=[f"{c[1]}-{i}" for i, c in enumerate(CASES)])
def test_known_texts(text, pattern, fields):
    matches = recognise(text)
    assert [m.pattern_id for m in matches] == [pattern]
    for key, value in fields.items():
        assert matches[0].fields.get(key) == value, (key, matches[0].fields)


def test_every_pattern_has_an_example():
    from conda_torchcheck.explain.patterns import table
    from tests.explain.test_torch_messages import MESSAGES

    covered = {c[1] for c in CASES} | {m["pattern"] for m in MESSAGES} | {"import-dll-failed"}
    assert {p.id for p in table().patterns} <= covered


def test_log_line_prefixes_and_escaped_backticks_are_undone():
    journald = (
        "Aug 12 10:38:34 fileserver unsloth[4073658]: WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. "
        "xFormers was built for:\n"
        "Aug 12 10:38:34 fileserver unsloth[4073658]:     PyTorch 2.10.0+cu128 with CUDA 1208 (you have 2.11.0+cu130)\n"
    )
    assert [m.pattern_id for m in recognise(journald)] == ["extension-built-for-torch"]
    ci = (
        "2024-05-01T10:00:00.1234567Z ImportError: libc10.so: cannot open shared object file: No such file or directory"
    )
    assert normalize_text(ci).startswith("ImportError: libc10.so")
    escaped = "torch>=2.6.0 has no wheels with a matching platform tag (e.g., \\`macosx_26_0_x86_64\\`)"
    assert recognise(escaped)[0].fields["platform_tag"] == "macosx_26_0_x86_64"


def test_unknown_reason_language_falls_back_without_hiding_known_ones():
    text = "ImportError: DLL load failed while importing _C: Une erreur inconnue est survenue."
    [m] = recognise(text)
    assert m.pattern_id == "import-dll-failed"
    assert m.fields["reason"].startswith("Une erreur")
    # a known reason is never also reported by the fallback
    [m] = recognise("ImportError: DLL load failed while importing _C: 找不到指定的模块。")
    assert m.pattern_id == "import-126"


def test_failing_package_is_read_from_the_traceback():
    text = r"""Traceback (most recent call last):
  File "C:\proj\app.py", line 3, in <module>
    import torchvision
  File "C:\env\Lib\site-packages\torchvision\__init__.py", line 10, in <module>
    from .extension import _HAS_OPS
  File "C:\env\Lib\site-packages\torchvision\extension.py", line 5, in <module>
    from . import _C
ImportError: DLL load failed while importing _C: The specified procedure could not be found."""
    [m] = recognise(text)
    assert m.pattern_id == "import-127"
    assert m.fields["package"] == "torchvision"


def test_package_is_not_taken_from_an_earlier_error():
    text = (
        "ImportError: /x/envs/a/lib/python3.11/site-packages/torch/lib/libtorch_cpu.so: undefined symbol: iJIT_x\n"
        "ImportError: DLL load failed while importing _C: 找不到指定的模块。"
    )
    ms = recognise(text)
    assert [m.pattern_id for m in ms] == ["undefined-symbol", "import-126"]
    assert "package" not in ms[1].fields


def test_seed_articles():
    seeds = sorted(SEEDS.glob("*.txt"))
    if not seeds:
        pytest.skip("seed articles not available")
    found = {p.name: [m.pattern_id for m in recognise(p.read_text(encoding="utf-8"))] for p in seeds}
    assert found["000_72e60d64c1d62f44.txt"] == ["import-126"]
    assert found["004_d4d4e6a86b7e2b24.txt"] == ["winerror-126"]
    [m] = recognise((SEEDS / "004_d4d4e6a86b7e2b24.txt").read_text(encoding="utf-8"))
    assert m.fields["dll"] == "shm.dll"  # quotes were lost by the web page: still found


NOISY_THREAD = """\
### 🐛 Describe the bug

I installed with `pip install torch` and get:

> Traceback (most recent call last):
>   File "C:\\\\Users\\\\me\\\\app.py", line 1, in <module>
>     import torch
>   File "C:\\\\Users\\\\me\\\\venv\\\\Lib\\\\site-packages\\\\torch\\\\__init__.py", line 148, in <module>
>     raise err
> OSError: [WinError 126] The specified module could not be found. Error loading "C:\\\\Users\\\\me\\\\venv\\\\Lib\
\\\\site-packages\\\\torch\\\\lib\\\\fbgemm.dll" or one of its dependencies.

Then I tried conda and now:\r
\x1b[31mOMP: Error #15: Initializing libiomp5md.dll, but found libiomp5md.dll already initialized.\x1b[0m\r
OMP: Hint This means that multiple copies of the OpenMP runtime have been linked into the program.

Same again (second run):
OSError: [WinError 126] The specified module could not be found. Error loading &quot;C:\\\\Users\\\\me\\\\venv\\\\Lib\
\\\\site-packages\\\\torch\\\\lib\\\\fbgemm.dll&quot; or one of its dependencies.
"""


def test_whole_thread_with_noise_and_several_errors():
    ms = recognise(NOISY_THREAD)
    assert [m.pattern_id for m in ms] == ["winerror-126", "omp-error-15"]
    assert ms[0].fields["dll"] == "fbgemm.dll"
    assert ms[0].count == 2  # the repeated error is one diagnosis
    assert "\x1b" not in ms[1].excerpt


def test_issue_title_without_dll_folds_into_the_full_error():
    text = (
        "OSError: [WinError 126] 找不到指定的模块。\n\nTraceback ...\n"
        'OSError: [WinError 126] 找不到指定的模块。 Error loading "E:\\x\\lib\\site-packages\\torch\\lib\\fbgemm.dll" '
        "or one of its dependencies."
    )
    [m] = recognise(text)
    assert m.fields["dll"] == "fbgemm.dll"
    assert m.count == 2


def test_json_escaped_paste():
    text = r'"message": "[WinError 126] The specified module could not be found. Error loading \"c:\\Users\\Noor\\anaconda3\\envs\\DL\\Lib\\site-packages\\torch\\lib\\fbgemm.dll\" or one of its dependencies."'  # noqa: E501
    [m] = recognise(text)
    assert m.fields["dll"] == "fbgemm.dll"


def test_two_different_dlls_are_two_errors():
    text = (
        'OSError: [WinError 126] x. Error loading "C:\\a\\torch\\lib\\shm.dll" or one of its dependencies.\n'
        'OSError: [WinError 126] x. Error loading "C:\\a\\torch\\lib\\c10.dll" or one of its dependencies.\n'
    )
    assert [m.fields["dll"] for m in recognise(text)] == ["shm.dll", "c10.dll"]


def test_normalize_text():
    assert normalize_text("> a\r\n> > b\r\n│ c │") == "a\nb\nc"
    assert normalize_text("\ufeff&quot;x&quot;") == '"x"'


def test_nothing_recognised():
    assert recognise("everything is fine\nTraceback (most recent call last):\nKeyError: 'x'") == []
    assert recognise("") == []


def test_adversarial_lines_stay_linear():
    """Pasted logs hold huge lines; an unbounded pattern here once took minutes for 20,000 characters.

    Not a speed benchmark (that is benchmarks/bench_explain.py): the bound is 100x what linear code needs.
    """
    import time

    for text in (" " * 50_000 + ":", "x/" * 25_000, "lib" + ".so" * 17_000, ": undefined symbol: x" * 3_000):
        start = time.monotonic()
        assert recognise(text) == []
        assert time.monotonic() - start < 10


def test_every_regex_of_the_table_compiles():
    """Regexes compile on first use (patterns.LazyRegex): compile them all here so a bad one fails a test."""
    from conda_torchcheck.explain.patterns import LazyRegex

    tbl = table()
    regexes = [r for p in tbl.patterns for r in (*p.anchors, *p.context, *p.context_before)]
    regexes += [r for c in tbl.clues for r in c.regexes]
    assert regexes and all(isinstance(r, LazyRegex) for r in regexes)
    for r in regexes:
        assert r.compiled.pattern == r.pattern


def test_distinct_errors_past_the_cap_are_said_not_dropped():
    import importlib

    # the module, not the function of the same name that conda_torchcheck.explain exports
    rec = importlib.import_module("conda_torchcheck.explain.recognise")

    lines = "\n".join(
        f'OSError: [WinError 126] The specified module could not be found. Error loading "C:\\\\e\\\\lib\\\\d{i}.dll" '
        "or one of its dependencies."
        for i in range(rec.DISTINCT_PER_PATTERN + 7)
    )
    matches = recognise(lines)
    assert len(matches) == rec.DISTINCT_PER_PATTERN
    assert matches[-1].more_distinct == 7 and all(m.more_distinct == 0 for m in matches[:-1])
    assert matches[-1].to_dict()["more_distinct"] == 7


def test_a_winerror_127_from_another_packages_load_library_is_that_package_first():
    from conda_torchcheck.explain import explain

    text = (
        "Traceback (most recent call last):\n"
        '  File "C:\\Users\\me\\venv\\lib\\site-packages\\torch_scatter\\__init__.py", line 16, in <module>\n'
        "    torch.ops.load_library(spec.origin)\n"
        '  File "C:\\Users\\me\\venv\\lib\\site-packages\\torch\\_ops.py", line 1295, in load_library\n'
        "    ctypes.CDLL(path)\n"
        "OSError: [WinError 127] The specified procedure could not be found"
    )
    [d] = explain(text).diagnoses
    assert d.match.fields["loader_package"] == "torch_scatter"
    assert d.causes[0].id == "extension-for-other-torch"


def test_an_extensions_torch_symbol_leaves_import_order_open():
    """An extension's undefined torch symbol: built for another torch, or imported before torch (the symbols every
    torch has are found only once `import torch` loaded its libraries); the text alone does not decide."""
    from conda_torchcheck.explain import explain

    expl = explain(
        "/home/u/anaconda3/lib/python3.6/site-packages/ext-0.0.0-py3.6-linux-x86_64.egg/"
        "lltm_cpp.cpython-36m-x86_64-linux-gnu.so: undefined symbol: THPVariableClass"
    )
    assert expl.likely_causes[:2] == ["extension-for-other-torch", "extension-imported-before-torch"]
    assert not expl.decision.decided


def test_a_companion_path_cut_before_site_packages_still_names_it():
    from conda_torchcheck.explain import explain

    expl = explain("torchvision/_C.cpython-36m-x86_64-linux-gnu.so: undefined symbol: _ZN2at7getTypeERKNS_6TensorE")
    assert expl.diagnoses[0].match.fields["package"] == "torchvision"
    assert expl.likely_causes[0] == "torchvision-torch-mismatch"
