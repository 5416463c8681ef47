"""The Python package on the CPU: compiling, inspecting, NumPy calls against
the reference interpreter and NumPy, and the exceptions (docs/python.md).
Run: python3 -m unittest discover -s python/tests (TX_ROOT: the checkout)."""
import os
import threading
import unittest
import xml.etree.ElementTree as ET

import numpy as np

import tx

ROOT = os.environ.get("TX_ROOT") or os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RNG = np.random.default_rng(7)

BLOCK = """
fn mlp(x: f32[M, D], w: f32[D], w1: f32[D, F], b1: f32[F]) -> (f32[M, D], f32[M, F]) {
  n = rmsnorm(x, w, eps=1e-6)
  return n, gelu_tanh(n @ w1 + b1)
}
"""


def rand(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def close(a, b, rtol=1e-4, atol=1e-5):
    return np.allclose(np.asarray(a, np.float64), np.asarray(b, np.float64), rtol=rtol, atol=atol)


def gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(0.7978845608 * (x + 0.044715 * x ** 3)))


class Compile(unittest.TestCase):
    def test_file_with_dims(self):
        p = tx.compile(os.path.join(ROOT, "examples", "spec_block.tx"), dims={"M": 8})
        names = [i.name for i in p.inputs]
        self.assertEqual(names, ["x", "r", "w", "w1", "b1"])
        self.assertEqual(p.inputs[0].dtype, "bf16")
        self.assertEqual(p.inputs[0].shape[0], 8)
        self.assertEqual(len(p.outputs), 2)

    def test_unbound_dims_are_none(self):
        p = tx.compile_source(BLOCK, dims={"D": 16})
        self.assertEqual(p.inputs[0], tx.Param("x", "f32", (None, 16)))
        self.assertEqual(p.inputs[2].shape, (16, None))
        self.assertEqual(p.outputs[1].shape, (None, None))

    def test_inspection(self):
        p = tx.compile_source(BLOCK, dims={"M": 64, "D": 32, "F": 128})
        self.assertIn("region k0", p.ir())
        rep = p.report()
        for key in ("gpu", "kernels", "totals"):
            self.assertIn(key, rep)
        k = rep["kernels"][0]
        for key in ("name", "kind", "fusion", "ops", "flops", "bytes_read", "bytes_written", "intensity", "bound",
                    "predicted_us", "sram_bytes", "spilled_bytes"):
            self.assertIn(key, k)
        self.assertGreater(rep["totals"]["unfused_kernels"], rep["totals"]["kernels"])
        self.assertIsInstance(p.explain(), str)
        svg = ET.fromstring(p.report_svg())
        self.assertTrue(svg.tag.endswith("svg"))
        self.assertIn("cost report", p.report_text())
        self.assertIn("digraph", p.dot())

    def test_symbolic_report_is_null(self):
        p = tx.compile_source(BLOCK)
        self.assertIsNone(p.report()["totals"]["predicted_us"])

    def test_cache(self):
        a = tx.compile_source(BLOCK, dims={"D": 16})
        self.assertIs(a, tx.compile_source(BLOCK, dims={"D": 16}))
        self.assertIsNot(a, tx.compile_source(BLOCK, dims={"D": 32}))
        self.assertIsNot(a, tx.compile_source(BLOCK, dims={"D": 16}, no_fuse=True))

    def test_entry_and_no_fuse(self):
        src = "fn a(x: f32[N]) -> f32[N] { return exp(x) + 1 }\nfn b(x: f32[N]) -> f32[N] { return x * 2 }"
        p = tx.compile_source(src, entry="a", dims={"N": 1024})
        x = rand(1024)
        self.assertTrue(close(p(x), np.exp(x) + 1))
        q = tx.compile_source(src, entry="a", dims={"N": 1024}, no_fuse=True)
        self.assertGreater(q.report()["totals"]["kernels"], p.report()["totals"]["kernels"])
        self.assertTrue(close(tx.compile_source(src, dims={"N": 1024})(x), x * 2))


class Calls(unittest.TestCase):
    def test_cpu_matches_ref_and_numpy(self):
        p = tx.compile_source(BLOCK, dims={"D": 32})
        x, w, w1, b1 = rand(16, 32), rand(32), rand(32, 48), rand(48)
        n, y = p(x, w, w1, b1)
        rn, ry = p(x, w, w1, b1, device="ref")
        want_n = x / np.sqrt((x * x).mean(-1, keepdims=True) + 1e-6) * w
        self.assertTrue(close(n, rn) and close(y, ry))
        self.assertTrue(close(n, want_n, 1e-4, 1e-4))
        self.assertTrue(close(y, gelu_tanh(want_n @ w1 + b1), 1e-3, 1e-3))
        self.assertEqual(y.dtype, np.float32)
        self.assertEqual(y.shape, (16, 48))

    def test_symbolic_sizes_without_recompiling(self):
        p = tx.compile_source("fn s(x: f32[B, N]) -> f32[B, N] { return softmax(x, axis=-1) }")
        for shape in ((3, 7), (64, 1000)):
            x = rand(*shape)
            e = np.exp(x - x.max(-1, keepdims=True))
            self.assertTrue(close(p(x), e / e.sum(-1, keepdims=True)))

    def test_suite_program(self):
        suite = [os.path.join(ROOT, d, "shared", "bench", "suite") for d in ("..", "dist")]
        suite = [d for d in suite if os.path.isdir(d)]
        if not suite:
            self.skipTest("the public suite (../shared or dist/shared) is not here")
        p = tx.compile(os.path.join(suite[0], "layernorm.tx"))
        args = [rand(*[s or 24 for s in i.shape]) if i.dtype == "f32" else None for i in p.inputs]
        if None in args:  # bf16 parameters: f32 arrays rounded as in spec section 3
            args = [rand(*[s or 24 for s in i.shape]) for i in p.inputs]
        got, ref = p(*args), p(*args, device="ref")
        for g, r in zip(got if isinstance(got, tuple) else (got,), ref if isinstance(ref, tuple) else (ref,)):
            self.assertTrue(close(g, r, 1e-2, 1e-2))

    def test_bf16_rounding(self):
        p = tx.compile_source("fn f(x: bf16[N]) -> bf16[N] { return x * 3 }")
        x = rand(257)
        y = p(x)
        if tx.BF16 is not None:
            self.assertEqual(y.dtype, tx.BF16)
            y = y.astype(np.float32)
        else:
            self.assertEqual(y.dtype, np.float32)
        self.assertFalse((y.view(np.uint32) & 0xFFFF).any(), "bf16 results are bf16 values")
        xr = (((x.view(np.uint32) + 0x7FFF + ((x.view(np.uint32) >> 16) & 1)) >> 16) << 16).view(np.float32)
        self.assertTrue(close(y, xr * 3, 1e-2, 1e-2))
        self.assertTrue(close(y, p(x, device="ref"), 0, 0))

    def test_int_bool_and_scalars(self):
        p = tx.compile_source("fn f(a: i32[N], m: bool[N], s: f32[]) -> (f32[N], bool[N]) "
                              "{ return where(m, f32(a) * s, 0.0), a > 3 }")
        a = np.arange(10, dtype=np.int32)
        m = a % 3 == 0
        y, nm = p(a, m, np.float32(2.5))
        self.assertTrue(close(y, np.where(m, a * 2.5, 0)))
        self.assertEqual(nm.dtype, np.bool_)
        self.assertTrue((nm == (a > 3)).all())
        y2, _ = p(a, m, 2.5)
        self.assertTrue(close(y2, y))

    def test_non_contiguous_input(self):
        p = tx.compile_source("fn f(x: f32[M, N]) -> f32[M, N] { return x + 1 }")
        x = rand(8, 6).T
        self.assertTrue(close(p(x), x + 1))

    def test_threads(self):
        p = tx.compile_source("fn f(x: f32[N], y: f32[N]) -> f32[N] { return sigmoid(x) * y }")
        xs = [(rand(5000), rand(5000)) for _ in range(8)]
        out, errors = [None] * 8, []

        def work(i):
            try:
                for _ in range(3):
                    out[i] = p(*xs[i])
            except Exception as e:  # noqa: BLE001 - reported below
                errors.append(e)

        ts = [threading.Thread(target=work, args=(i,)) for i in range(8)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        self.assertEqual(errors, [])
        for (x, y), o in zip(xs, out):
            self.assertTrue(close(o, 1 / (1 + np.exp(-x)) * y))


class Errors(unittest.TestCase):
    def test_source_error(self):
        with self.assertRaises(tx.CompileError) as cm:
            tx.compile_source("fn f(x: f32[N]) -> f32[N] {\n  return x + q\n}", file="bad.tx")
        msg = str(cm.exception)
        self.assertTrue(msg.startswith("bad.tx:2:14: error: unknown name 'q'"), msg)
        self.assertIn("^", msg)

    def test_file_errors(self):
        with self.assertRaises(FileNotFoundError):
            tx.compile(os.path.join(ROOT, "no-such-file.tx"))
        bad = os.path.join(ROOT, "tests", "errors")
        files = sorted(f for f in os.listdir(bad) if f.endswith(".tx"))
        self.assertTrue(files)
        for f in files[:10]:
            with self.assertRaises(tx.CompileError, msg=f) as cm:
                tx.compile(os.path.join(bad, f))
            self.assertRegex(str(cm.exception).splitlines()[0], r":\d+:\d+: error: ")

    def test_bad_options(self):
        with self.assertRaises(tx.Error) as cm:
            tx.compile_source(BLOCK, target="sm_12")
        self.assertNotIsInstance(cm.exception, tx.CompileError)
        self.assertIn("unknown target", str(cm.exception))
        with self.assertRaises(tx.Error):
            tx.compile_source(BLOCK, dims={"M": 0})

    def test_wrong_dtype_names_parameter(self):
        p = tx.compile_source(BLOCK)
        x, w, w1, b1 = rand(4, 8), rand(8), rand(8, 16), rand(16)
        with self.assertRaisesRegex(tx.Error, r"parameter 'w1': expected f32\[D, F\].*float64"):
            p(x, w, w1.astype(np.float64), b1)

    def test_wrong_shape_names_parameter(self):
        p = tx.compile_source(BLOCK, dims={"D": 8})
        x, w, w1, b1 = rand(4, 8), rand(8), rand(8, 16), rand(16)
        with self.assertRaisesRegex(tx.Error, r"parameter 'b1': dim 0 \(F\) is 17, but F is 16 from 'w1'"):
            p(x, w, w1, rand(17))
        with self.assertRaisesRegex(tx.Error, r"parameter 'w': dim 0 must be 8"):
            p(x, rand(9), w1, b1)
        with self.assertRaisesRegex(tx.Error, r"parameter 'x': expected rank 2"):
            p(rand(8), w, w1, b1)
        with self.assertRaisesRegex(tx.Error, r"takes 4 inputs"):
            p(x, w, w1)

    def test_bad_device(self):
        p = tx.compile_source("fn f(x: f32[N]) -> f32[N] { return x }")
        with self.assertRaisesRegex(tx.Error, "unknown device"):
            p(rand(4), device="tpu")

    def test_gpu_without_driver(self):
        p = tx.compile_source("fn f(x: f32[N]) -> f32[N] { return x * 2 }")
        try:
            y = p(rand(4), device="gpu")
        except tx.Error as e:
            self.assertIn("CUDA", str(e))
        else:
            self.assertEqual(y.shape, (4,))


if __name__ == "__main__":
    unittest.main()
