"""check.py SVG JSON LABEL [measured] - structural check of one `txc --emit=svg`
picture against the `--emit=json` report of the same compile (used by
tests/scripts/svg.sh). Exit 1 with a line per problem."""
import json
import sys
import xml.etree.ElementTree as ET

NS = "{http://www.w3.org/2000/svg}"


def main():
    svg_path, json_path, label = sys.argv[1:4]
    measured = sys.argv[4:5] == ["measured"]
    problems = []
    try:
        root = ET.parse(svg_path).getroot()
    except ET.ParseError as e:
        print(f"FAIL {label}: not well-formed XML: {e}")
        return 1
    rep = json.load(open(json_path))
    kernels = rep["kernels"]
    concrete = rep["totals"]["predicted_us"] is not None
    if root.tag != NS + "svg":
        problems.append(f"root element is {root.tag}")
    by_class = {}
    for el in root.iter():
        c = el.get("class")
        if c:
            by_class.setdefault(c, []).append(el)
    texts = [("".join(el.itertext())) for el in root.iter(NS + "text")]
    fused = by_class.get("pf", [])
    unfused = by_class.get("pu", [])
    bars = by_class.get("bar", [])
    if concrete:
        if len(fused) != len(kernels):
            problems.append(f"{len(fused)} fused points for {len(kernels)} kernels")
        if len(unfused) != rep["totals"]["unfused_kernels"]:
            problems.append(f"{len(unfused)} unfused points for {rep['totals']['unfused_kernels']} unfused kernels")
        if not measured and len(bars) != len(kernels) + rep["totals"]["unfused_kernels"]:
            problems.append(f"{len(bars)} timeline bars for {len(kernels)} + {rep['totals']['unfused_kernels']} kernels")
        if measured:
            pm = by_class.get("pm", [])
            want = len(kernels) + rep["totals"]["unfused_kernels"]
            if len(pm) != want:
                problems.append(f"{len(pm)} measured points for {want} kernels")
            if len(bars) != 2 * want:
                problems.append(f"{len(bars)} timeline bars for 2 x {want} kernels (predicted and measured)")
        elif by_class.get("pm"):
            problems.append("measured points without measurements")
        names = sorted(el.findtext(NS + "title") for el in fused)
        if names != sorted(k["name"] for k in kernels):
            problems.append(f"fused points are {names}")
        for el in fused + unfused:
            for a, dim in (("cx", "width"), ("cy", "height")):
                v = float(el.get(a))
                if not 0 <= v <= float(root.get(dim)):
                    problems.append(f"point {el.findtext(NS + 'title')} off the canvas ({a}={v})")
    else:
        if fused or bars:
            problems.append("symbolic sizes but points or bars were drawn")
        if not any("symbolic" in t for t in texts):
            problems.append("symbolic sizes are not said")
    for k in kernels:
        if k["name"] not in texts:
            problems.append(f"kernel {k['name']} missing from the table")
    for p in problems:
        print(f"FAIL {label}: {p}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
