#!/usr/bin/python3
"""Writes the .npy seed corpus of fuzz_npy into tests/fuzz/seeds/npy/ (run
with /usr/bin/python3, which has NumPy). Good files of every supported dtype,
rank 0..8, empty dims, format versions 1.0/2.0/3.0, and the nearest bad ones
(other dtypes, Fortran order, truncated or lying headers), so mutation
starts next to every branch of the reader."""
import io, os, struct, sys
import numpy as np

out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "seeds", "npy")
os.makedirs(out, exist_ok=True)


def save(name, arr, version=None):
    buf = io.BytesIO()
    if version is None:
        np.save(buf, arr)
    else:
        np.lib.format.write_array(buf, arr, version=version)
    write(name, buf.getvalue())


def write(name, data):
    with open(os.path.join(out, name + ".npy"), "wb") as f:
        f.write(data)


def header(d, version=1, pad=True):
    """A raw preamble + header for dict text d (no validation)."""
    text = d.encode("latin1")
    pre = 10 if version == 1 else 12
    if pad:
        text += b" " * ((64 - (pre + len(text) + 1) % 64) % 64)
    text += b"\n"
    n = struct.pack("<H", len(text)) if version == 1 else struct.pack("<I", len(text))
    return b"\x93NUMPY" + bytes([version, 0]) + n + text


rng = np.random.default_rng(1)
save("f32_scalar", np.float32(1.5))
save("f32_vec", np.arange(7, dtype="<f4"))
save("f32_mat", rng.standard_normal((3, 5)).astype("<f4"))
save("f16_mat", rng.standard_normal((2, 3)).astype("<f2"))
save("i32_vec", np.arange(-3, 5, dtype="<i4"))
save("bool_vec", np.array([True, False, True]))
save("f32_rank8", np.ones((1, 2, 1, 2, 1, 2, 1, 2), dtype="<f4"))
save("f32_empty", np.zeros((0, 4), dtype="<f4"))
save("f32_special", np.array([np.nan, np.inf, -np.inf, -0.0, 1e-45, 3.4e38], dtype="<f4"))
save("f32_v2", np.arange(4, dtype="<f4"), version=(2, 0))
save("f32_v3", np.arange(4, dtype="<f4"), version=(3, 0))
# Nearest bad files.
save("bad_f64", np.arange(3, dtype="<f8"))
save("bad_big_endian", np.arange(3, dtype=">f4"))
save("bad_i64", np.arange(3, dtype="<i8"))
save("bad_fortran", np.asfortranarray(np.ones((2, 3), dtype="<f4")))
good = open(os.path.join(out, "f32_vec.npy"), "rb").read()
write("bad_truncated_data", good[:-5])
write("bad_extra_data", good + b"\0\0\0\0")
write("bad_truncated_header", good[:40])
write("bad_magic", b"\x93NUMPZ" + good[6:])
write("bad_version", good[:6] + b"\x09\x00" + good[8:])
write("bad_hlen_past_eof", good[:8] + b"\xff\xff" + good[10:])
write("lie_shape_large", header("{'descr': '<f4', 'fortran_order': False, 'shape': (1000000,), }") + b"\0" * 16)
write("lie_shape_overflow", header("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 4), }"))
write("lie_rank9", header("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, 1, 1, 1, 1, 1, 1, 1), }") + b"\0" * 4)
write("lie_dim_huge", header("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999999,), }"))
write("bad_missing_key", header("{'descr': '<f4', 'shape': (2,), }") + b"\0" * 8)
write("bad_dup_key", header("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,), }") + b"\0" * 8)
write("bad_no_newline", header("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }")[:-1] + b" " + b"\0" * 8)
write("bad_shape_not_tuple", header("{'descr': '<f4', 'fortran_order': False, 'shape': (2), }") + b"\0" * 8)
write("ok_unpadded", header("{'descr':'<f4','fortran_order':False,'shape':(2,)}", pad=False) + b"\0" * 8)
write("ok_v2_raw", header("{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }", version=2) + b"\x01\x00\x02")
write("empty", b"")
print("wrote", len(os.listdir(out)), "seeds into", out)
