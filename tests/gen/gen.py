#!/usr/bin/python3
"""gen.py - random well-typed tx programs for differential testing.

usage: gen.py SEED OUTFILE.tx     writes one program; prints the -D flags to
                                  bind its symbolic dims (one line)

Programs mix elementwise ops (unary, binary with NumPy broadcasting, where,
comparisons, casts between f32/f16/bf16), reductions over random axes with
and without keepdim, views (transpose, permute, reshape, slice, concat,
broadcast_to) and the softmax/log_softmax composites, then return one to
three of the values. Values are kept in a moderate range (tanh/sigmoid
squashing, guarded log/sqrt/division) so that comparisons with a tolerance
are meaningful. Deterministic for a given SEED.
"""
import random
import sys

UNARY = ["neg", "abs", "exp", "tanh", "sigmoid", "relu", "gelu", "gelu_tanh", "silu", "erf", "sin", "cos",
         "exp2"]
STEP = ["floor", "ceil"]  # discontinuous: applied to parameters only (exact inputs)
GUARDED = {"log": "log(abs({}) + 0.5)", "log2": "log2(abs({}) + 0.5)", "sqrt": "sqrt(abs({}))",
           "rsqrt": "rsqrt(abs({}) + 0.25)", "recip": "recip(abs({}) + 0.5)", "pow": "pow(abs({}) + 0.5, 1.5)"}
BINARY = ["+", "-", "*", "maximum", "minimum", "/"]
CMP = ["<", "<=", ">", ">=", "!="]
REDUCE = ["sum", "mean", "max", "min"]


def bcast(a, b):
    """NumPy broadcast of two shapes (tuples of int or str); None if invalid."""
    out = []
    for i in range(max(len(a), len(b))):
        x = a[len(a) - 1 - i] if i < len(a) else 1
        y = b[len(b) - 1 - i] if i < len(b) else 1
        if x == y or y == 1:
            out.append(x)
        elif x == 1:
            out.append(y)
        else:
            return None
    return tuple(reversed(out))


def shape_str(s):
    return "[" + ", ".join(str(d) for d in s) + "]"


class Gen:
    def __init__(self, seed):
        self.r = random.Random(seed)
        self.lines = []
        self.vals = []  # (name, shape, dtype)
        self.n = 0
        self.dims = {}

    def fresh(self):
        self.n += 1
        return "v%d" % self.n

    def add(self, expr, shape, dt):
        name = self.fresh()
        self.lines.append("  %s = %s" % (name, expr))
        self.vals.append((name, shape, dt))
        return name

    def pick(self, pred=lambda v: True):
        c = [v for v in self.vals if pred(v)]
        return self.r.choice(c) if c else None

    def params(self):
        r = self.r
        rank = r.choice([1, 2, 2, 3])
        names = ["M", "N", "K"][:rank]
        base = []
        for nm in names:
            if r.random() < 0.6:
                self.dims[nm] = r.choice([1, 2, 3, 5, 7, 16, 33, 64, 100, 129, 257])
                base.append(nm)
            else:
                base.append(r.choice([1, 3, 4, 8, 17, 31, 128]))
        self.base = tuple(base)
        ps = []
        for i in range(r.randint(1, 4)):
            s = list(self.base)
            mode = r.random() if i else 1.0   # the first parameter has the base shape
            if mode < 0.2 and len(s) > 1:
                s = s[1:]                      # leading dims dropped
            elif mode < 0.35:
                j = r.randrange(len(s))
                s[j] = 1                       # a unit dim
            elif mode < 0.4:
                s = []                         # scalar
            dt = r.choice(["f32", "f32", "f32", "f16", "bf16"])
            nm = "x%d" % i
            ps.append("%s: %s%s" % (nm, dt, shape_str(s)))
            self.vals.append((nm, tuple(s), dt))
        return ps

    def step(self):
        r = self.r
        k = r.random()
        v = self.pick()
        name, s, dt = v
        if k < 0.22:
            op = r.choice(UNARY + list(GUARDED) + STEP)
            if op in STEP:
                name, s, dt = v = self.pick(lambda u: u[0].startswith("x"))
                self.add("%s(%s * 3)" % (op, name), s, dt)
                return
            if op in GUARDED:
                self.add(GUARDED[op].format(name), s, dt)
            elif op in ("exp", "exp2"):
                self.add("%s(tanh(%s))" % (op, name), s, dt)
            else:
                self.add("%s(%s)" % (op, name), s, dt)
        elif k < 0.45:
            w = self.pick(lambda u: bcast(u[1], s) is not None)
            out = bcast(w[1], s)
            op = r.choice(BINARY)
            dto = dt if dt == w[2] else "f32"
            if op == "/":
                self.add("%s / (abs(%s) + 1)" % (name, w[0]), out, dto)
            elif op in ("maximum", "minimum"):
                self.add("%s(%s, %s)" % (op, name, w[0]), out, dto)
            else:
                self.add("%s %s %s" % (name, op, w[0]), out, dto)
        elif k < 0.52:
            # comparisons are discontinuous: only between parameters (exact inputs)
            name, s, dt = v = self.pick(lambda u: u[0].startswith("x"))
            w = self.pick(lambda u: u[0].startswith("x") and bcast(u[1], s) is not None)
            z = self.pick(lambda u: u[2] == dt and bcast(u[1], bcast(w[1], s)) is not None)
            if z is None:
                return
            out = bcast(z[1], bcast(w[1], s))
            self.add("where(%s %s %s, %s, %s)" % (name, r.choice(CMP), w[0], name, z[0]), out, dt)
        elif k < 0.57:
            to = r.choice(["f32", "f16", "bf16"])
            self.add("%s(%s)" % (to, name), s, to)
        elif k < 0.72 and len(s) >= 1:
            op = r.choice(REDUCE)
            if r.random() < 0.3 and len(s) > 1:
                axes = sorted(r.sample(range(len(s)), r.randint(1, len(s))))
                ax = "(" + ", ".join(str(a) for a in axes) + ("," if len(axes) == 1 else "") + ")"
            else:
                axes = [r.randrange(len(s))]
                ax = str(axes[0] - len(s) if r.random() < 0.5 else axes[0])
            keep = r.random() < 0.5
            if keep:
                out = tuple(1 if i in axes else d for i, d in enumerate(s))
            else:
                out = tuple(d for i, d in enumerate(s) if i not in axes)
            self.add("%s(%s, axis=%s, keepdim=%s)" % (op, name, ax, "true" if keep else "false"), out, dt)
            if keep and r.random() < 0.6:   # broadcast back: the normalisation pattern
                last = self.vals[-1][0]
                self.add("(%s - %s) * 0.5" % (name, last), s, dt)
        elif k < 0.77 and len(s) >= 1:
            ax = r.choice([-1, len(s) - 1])
            self.add("%s(%s, axis=%d)" % (r.choice(["softmax", "log_softmax"]), name, ax), s, dt)
        elif k < 0.83 and len(s) >= 2:
            a, b = r.sample(range(len(s)), 2)
            t = list(s)
            t[a], t[b] = t[b], t[a]
            self.add("transpose(%s, %d, %d)" % (name, a, b), tuple(t), dt)
        elif k < 0.86 and len(s) >= 2:
            p = list(range(len(s)))
            r.shuffle(p)
            self.add("permute(%s, (%s))" % (name, ", ".join(map(str, p))), tuple(s[i] for i in p), dt)
        elif k < 0.90 and len(s) >= 1 and all(isinstance(d, int) for d in s):
            n = 1
            for d in s:
                n *= d
            if n % 2 == 0 and r.random() < 0.5:
                t = (2, n // 2)
            else:
                t = (n,)
            self.add("reshape(%s, (%s))" % (name, ", ".join(map(str, t)) + ("," if len(t) == 1 else "")), t, dt)
        elif k < 0.94 and len(s) >= 1:
            ax = r.randrange(len(s))
            d = s[ax]
            if isinstance(d, int) and d >= 2:
                a = r.randrange(d - 1)
                b = r.randint(a + 1, d)
                t = list(s)
                t[ax] = b - a
                self.add("slice(%s, axis=%d, start=%d, stop=%d)" % (name, ax, a, b), tuple(t), dt)
        elif k < 0.97 and len(s) >= 1:
            ax = r.randrange(len(s))
            if isinstance(s[ax], int):
                t = list(s)
                t[ax] = 2 * s[ax]
                self.add("concat((%s, %s * 2), axis=%d)" % (name, name, ax), tuple(t), dt)
        else:
            t = self.base
            if bcast(s, t) == tuple(t):
                self.add("broadcast_to(%s, (%s))" % (name, ", ".join(map(str, t)) + ("," if len(t) == 1 else "")),
                         tuple(t), dt)

    def program(self):
        ps = self.params()
        for _ in range(self.r.randint(3, 10)):
            self.step()
        made = [v for v in self.vals if v[0].startswith("v")]
        if not made:
            name, s, dt = self.vals[0]
            self.add("%s * 2 + 1" % name, s, dt)
            made = [self.vals[-1]]
        rets = [made[-1][0]]
        for v in self.r.sample(made, min(len(made), self.r.randint(0, 2))):
            if v[0] not in rets:
                rets.append(v[0])
        src = "# generated by tests/gen/gen.py\nfn gen(%s) {\n%s\n  return %s\n}\n" % (
            ", ".join(ps), "\n".join(self.lines), ", ".join(rets))
        flags = " ".join("-D %s=%d" % kv for kv in sorted(self.dims.items()))
        return src, flags


def main():
    if len(sys.argv) != 3:
        sys.stderr.write("usage: gen.py SEED OUT.tx\n")
        return 2
    src, flags = Gen(int(sys.argv[1])).program()
    with open(sys.argv[2], "w") as f:
        f.write(src)
    print(flags)
    return 0


if __name__ == "__main__":
    sys.exit(main())
