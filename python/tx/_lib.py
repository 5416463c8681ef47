"""_lib.py - loads libtx.so and declares the C API of include/tx.h to ctypes.

Where the library comes from, first found wins:
  1. $TX_LIBRARY (a path), e.g. dist/lib/libtx.so on a machine without LLVM;
  2. libtx.so inside this package (what `pip install ./python` puts there);
  3. build/lib/libtx.so or dist/lib/libtx.so of the checkout this file is in
     (running from a source tree with PYTHONPATH=python).
Nothing is compiled here."""
import ctypes
import os

API_VERSION = 2  # TX_API_VERSION of the include/tx.h these declarations follow
MAX_RANK = 8


class Tensor(ctypes.Structure):
    _fields_ = [("dtype", ctypes.c_int), ("rank", ctypes.c_int),
                ("dim", ctypes.c_int64 * MAX_RANK), ("data", ctypes.c_void_p)]


class Options(ctypes.Structure):
    _fields_ = [("entry", ctypes.c_char_p), ("defines", ctypes.POINTER(ctypes.c_char_p)),
                ("ndefines", ctypes.c_uint), ("target", ctypes.c_char_p), ("gpu", ctypes.c_char_p),
                ("no_fuse", ctypes.c_int)]


# tx_dtype and tx_text_kind, in the order of include/tx.h
DTYPES = ("f32", "f16", "bf16", "i32", "bool")
TEXT_IR, TEXT_REPORT, TEXT_JSON, TEXT_DOT, TEXT_SVG, TEXT_EXPLAIN = range(6)
ON_REF, ON_CPU, ON_GPU = range(3)


def _candidates():
    env = os.environ.get("TX_LIBRARY")
    if env:
        return [env]
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(os.path.dirname(here))
    return [os.path.join(here, "libtx.so"), os.path.join(root, "build", "lib", "libtx.so"),
            os.path.join(root, "dist", "lib", "libtx.so")]


def _declare(lib):
    P, VP, U, I, S = ctypes.POINTER, ctypes.c_void_p, ctypes.c_uint, ctypes.c_int, ctypes.c_size_t
    CP, U64 = ctypes.c_char_p, ctypes.c_uint64
    sigs = {
        "tx_api_version": (I, []),
        "tx_compile": (VP, [CP, CP, S, P(Options), CP, S]),
        "tx_program_free": (None, [VP]),
        "tx_program_num_inputs": (U, [VP]),
        "tx_program_num_outputs": (U, [VP]),
        "tx_program_input": (I, [VP, U, P(Tensor), P(CP)]),
        "tx_program_output": (I, [VP, U, P(Tensor)]),
        "tx_program_text": (CP, [VP, I, CP, S]),
        "tx_run": (I, [VP, I, P(Tensor), U, P(Tensor), U, CP, S]),
        "tx_tensor_release": (None, [P(Tensor)]),
        "tx_device_open_primary": (VP, [I, CP, S]),
        "tx_device_close": (None, [VP]),
        "tx_device_name": (CP, [VP]),
        "tx_device_error": (CP, [VP]),
        "tx_load": (VP, [VP, VP, P(Tensor), U, CP, S]),
        "tx_unload": (None, [VP]),
        "tx_loaded_output": (I, [VP, U, P(Tensor), P(S)]),
        "tx_bind_input": (I, [VP, U, U64]),
        "tx_bind_output": (I, [VP, U, U64]),
        "tx_launch_on": (I, [VP, U64]),
        "tx_loaded_num_kernels": (U, [VP]),
    }
    for name, (res, args) in sigs.items():
        f = getattr(lib, name)
        f.restype = res
        f.argtypes = args


def load():
    """The loaded library, its API version checked; OSError saying where it looked."""
    tried = []
    for path in _candidates():
        if not os.path.exists(path):
            tried.append(path + " (missing)")
            continue
        lib = ctypes.CDLL(path)
        try:
            _declare(lib)
        except AttributeError as e:
            raise OSError(f"{path} is not a tx library of API version {API_VERSION}: {e}") from None
        v = lib.tx_api_version()
        if v != API_VERSION:
            raise OSError(f"{path} implements tx API version {v}; this package needs {API_VERSION}")
        lib.path = path
        return lib
    raise OSError("libtx.so not found; tried " + ", ".join(tried) +
                  ". Install with `pip install ./python`, build it with `cmake --build build --target tx_shared`, "
                  "or point TX_LIBRARY at a prebuilt one (tools/make-dist.sh makes dist/lib/libtx.so)")
