#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tlbprof plot: SVGs of a fixture size sweep, a real tlbsize, stride and pagefault run and real tlbprof run reports,
parsed and checked against their reports and for their geometry (ticks at the measured values, a y range that holds
every point, labels clear of whiskers and of each other, distinct bands, a legend of what is drawn, the provenance
footer), well-formed for xmllint; PNGs of the size asked for; bad inputs exit 2 or 4 with one line and write
nothing."""
import json
import math
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report_check import Failures  # noqa: E402

TLBPROF = sys.argv[1]
BENCHMARKS = sys.argv[2] if len(sys.argv) > 2 else None
# Whether this build has PNG support (librsvg found by meson): tests/meson.build says.
PNG = (sys.argv[3] if len(sys.argv) > 3 else "png") == "png"
DATA = os.environ.get("TLBPROF_TEST_DATA_DIR", os.path.join(os.path.dirname(__file__), "..", "data"))
EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "reports")
SVG = "{http://www.w3.org/2000/svg}"
fail = Failures()
tmp = tempfile.mkdtemp(prefix="tlbprof-plot-")


def close(a, b, rel=1e-9):
    return math.isclose(float(a), float(b), rel_tol=rel, abs_tol=1e-9)


def measure(args, name):
    """Run tlbprof and return its report (a check may warn on this shared VM: exit 1 is fine)."""
    path = os.path.join(tmp, name)
    p = subprocess.run([TLBPROF, *args, "--quiet", "--json", path], capture_output=True, text=True, timeout=300)
    if p.returncode not in (0, 1):
        fail(f"{args}: exit {p.returncode}: {p.stderr}")
        return None, None
    with open(path) as f:
        return path, json.load(f)


def plot(report, out):
    """tlbprof plot REPORT -o OUT; the parsed SVG root (its geometry checked), or None after a failure."""
    p = subprocess.run([TLBPROF, "plot", report, "-o", out], capture_output=True, text=True, timeout=60)
    if p.returncode != 0 or p.stderr or p.stdout:
        fail(f"plot {report}: exit {p.returncode}, stdout {p.stdout[:80]!r}, stderr {p.stderr!r}")
        return None
    xmllint(out, report)
    try:
        root = ET.parse(out).getroot()
    except ET.ParseError as e:
        fail(f"plot {report}: not well-formed XML: {e}")
        return None
    with open(report) as f:
        check_geometry(root, json.load(f), os.path.basename(report))
    return root


def xmllint(path, what):
    """libxml2's own parser agrees the file is well-formed XML."""
    if not shutil.which("xmllint"):
        fail("xmllint is not installed (libxml2-utils)")
        return
    p = subprocess.run(["xmllint", "--noout", path], capture_output=True, text=True, timeout=60)
    if p.returncode != 0 or p.stderr:
        fail(f"{what}: xmllint: exit {p.returncode}: {p.stderr[:300]}")


def classes(el):
    return (el.get("class") or "").split()


def find(root, cls, tag=None):
    return [e for e in root.iter() if cls in classes(e) and (tag is None or e.tag == SVG + tag)]


def text_of(el):
    return "".join(el.itertext())


def check_document(root, what):
    """Standalone SVG 1.1: root svg in the SVG namespace, viewBox, a title, fonts, no scripts or links."""
    if root.tag != SVG + "svg":
        fail(f"{what}: root is {root.tag}")
    vb = (root.get("viewBox") or "").split()
    if len(vb) != 4 or float(vb[2]) <= 0 or float(vb[3]) <= 0:
        fail(f"{what}: viewBox {root.get('viewBox')!r}")
    title = root.find(SVG + "title")
    if title is None or "tlbprof" not in (title.text or ""):
        fail(f"{what}: no <title> naming tlbprof")
    if "sans-serif" not in (root.get("font-family") or ""):
        fail(f"{what}: no font-family on the root")
    for e in root.iter():
        if e.tag in (SVG + "script", SVG + "image", SVG + "foreignObject") or \
                any(k.endswith("href") for k in e.attrib):
            fail(f"{what}: external or scripted content: {e.tag} {e.attrib}")


def check_chart(chart, what, x_label, y_label="ns per access", x_ticks=2):
    """Axis labels with units, tick labels on both axes, a legend entry per series and one for the spread."""
    labels = [text_of(e) for e in find(chart, "axis-label")]
    if not any(x_label in t for t in labels) or not any(y_label in t for t in labels):
        fail(f"{what}: axis labels {labels}, want '{x_label}' and '{y_label}'")
    for axis in ("x-axis", "y-axis"):
        ax = find(chart, axis)
        if len(ax) != 1 or len(find(ax[0], "tick-label")) < (x_ticks if axis == "x-axis" else 2):
            fail(f"{what}: {axis} without tick labels")
    legend = find(chart, "legend")
    keys = {e.get("data-series") for e in find(chart, "series")}
    entries = {e.get("data-series") for e in find(legend[0], "legend-entry")} if legend else set()
    if not keys or not keys <= entries:
        fail(f"{what}: legend entries {entries} miss series {keys - entries}")
    spread = [e for e in find(legend[0], "legend-entry") if e.get("data-kind") == "spread"] if legend else []
    drawn = find(chart, "band") + find(chart, "whisker")
    if drawn and (not spread or "IQR" not in text_of(spread[0])):
        fail(f"{what}: the legend does not say what the spread is")
    if not drawn and spread:
        fail(f"{what}: the legend explains a spread that is not drawn")


def charts(root):
    return find(root, "chart", "g")

# ---- Geometry: what a reader sees, checked in the SVG's own coordinates ----
TOL = 0.5   # px


def num(el, k):
    return float(el.get(k))


def rect_of(el):
    return (num(el, "x"), num(el, "y"), num(el, "x") + num(el, "width"), num(el, "y") + num(el, "height"))


def boxes_overlap(a, b):
    return a[0] < b[2] - TOL and b[0] < a[2] - TOL and a[1] < b[3] - TOL and b[1] < a[3] - TOL


def path_segments(d):
    """The straight segments of a path made of M, L, V and H commands (whiskers, lines)."""
    segs, x, y = [], 0.0, 0.0
    tokens = re.findall(r"[MLVHZ]|-?[0-9.]+(?:e-?[0-9]+)?", d)
    i, cmd = 0, None
    while i < len(tokens):
        if tokens[i] in "MLVHZ":
            cmd = tokens[i]
            i += 1
            continue
        if cmd in ("M", "L"):
            nx, ny = float(tokens[i]), float(tokens[i + 1])
            i += 2
            if cmd == "L":
                segs.append((x, y, nx, ny))
            x, y = nx, ny
            cmd = "L" if cmd == "M" else cmd
        elif cmd == "V":
            ny = float(tokens[i])
            i += 1
            segs.append((x, y, x, ny))
            y = ny
        elif cmd == "H":
            nx = float(tokens[i])
            i += 1
            segs.append((x, y, nx, y))
            x = nx
        else:
            i += 1
    return segs


def segment_hits_box(s, b):
    """Whether an axis-parallel segment passes through the inside of box b."""
    x0, y0, x1, y1 = s
    if abs(x0 - x1) < 1e-9:
        return b[0] + TOL < x0 < b[2] - TOL and min(y0, y1) < b[3] - TOL and max(y0, y1) > b[1] + TOL
    if abs(y0 - y1) < 1e-9:
        return b[1] + TOL < y0 < b[3] - TOL and min(x0, x1) < b[2] - TOL and max(x0, x1) > b[0] + TOL
    return False


def line_hits_box(s, b):
    """Whether a segment at any angle passes through the inside of box b (Liang-Barsky clipping)."""
    x0, y0, x1, y1 = s
    dx, dy = x1 - x0, y1 - y0
    t0, t1 = 0.0, 1.0
    for p, q in ((-dx, x0 - (b[0] + TOL)), (dx, (b[2] - TOL) - x0), (-dy, y0 - (b[1] + TOL)), (dy, (b[3] - TOL) - y0)):
        if abs(p) < 1e-12:
            if q < 0:
                return False
            continue
        t = q / p
        if p < 0:
            t0 = max(t0, t)
        else:
            t1 = min(t1, t)
        if t0 > t1:
            return False
    return True


def pattern_angle(root, ref):
    m = re.fullmatch(r"url\(#([^)]+)\)", ref or "")
    pats = [e for e in root.iter(SVG + "pattern") if m and e.get("id") == m.group(1)]
    if not pats:
        return None
    r = re.fullmatch(r"rotate\(([-0-9.e]+)\)", pats[0].get("patternTransform") or "")
    return float(r.group(1)) if r else 0.0


def check_geometry(root, rep, what):
    """Every chart of a document: ticks, y range, labels, bands, legend; then the footer."""
    version = rep.get("tool", {}).get("version", "")
    for i, c in enumerate(charts(root)):
        check_chart_geometry(root, c, f"{what} chart {i} ({c.get('data-chart')})")
    check_footer(root, rep, what, version)


def check_chart_geometry(root, c, what):
    area = rect_of(find(c, "plot-area", "rect")[0])
    xa, ya = find(c, "x-axis")[0], find(c, "y-axis")[0]
    pts = find(c, "point", "circle") + find(c, "bar", "rect")
    ys = [num(p, "data-y") for p in pts]
    # Ticks at the measured values: on a log x axis (what was chosen: sizes, strides, pages) every tick is a
    # measured x, the first and last among them. A linear x axis is time (run -I): round ticks from 0 that hold
    # every point.
    xs = sorted({num(p, "data-x") for p in pts}) if xa.get("data-scale") != "band" else []
    if xa.get("data-scale") == "linear":
        ticks = [float(t.get("data-value")) for t in find(xa, "tick", "g")]
        if not ticks or ticks[0] != 0 or ticks[-1] < xs[-1] or ticks != sorted(ticks):
            fail(f"{what}: linear x ticks {ticks} do not start at 0 and hold the last point {xs[-1]}")
    elif xa.get("data-scale") != "band":
        ticks = [float(t.get("data-value")) for t in find(xa, "tick", "g")]
        off = [t for t in ticks if not any(math.isclose(t, x, rel_tol=1e-9) for x in xs)]
        if off or not ticks or not math.isclose(ticks[0], xs[0]) or not math.isclose(ticks[-1], xs[-1]):
            fail(f"{what}: x ticks {ticks} are not at the measured values {xs} (first and last included)")
        if ticks != sorted(ticks):
            fail(f"{what}: x ticks out of order: {ticks}")
    # The y range holds every point, between two ticks: the top tick above the highest point, the lowest below.
    yticks = sorted(float(t.get("data-value")) for t in find(ya, "tick", "g"))
    if ys and (not yticks or yticks[-1] < max(ys) or yticks[0] > min(ys)):
        fail(f"{what}: y ticks {yticks[:1]}..{yticks[-1:]} do not hold the points {min(ys)}..{max(ys)}")
    if ys and (num(ya, "data-min") > min(ys) or num(ya, "data-max") < max(ys)):
        fail(f"{what}: y axis {ya.get('data-min')}..{ya.get('data-max')} misses points {min(ys)}..{max(ys)}")
    for p in find(c, "point", "circle"):
        if not (area[0] - TOL <= num(p, "cx") <= area[2] + TOL and area[1] - TOL <= num(p, "cy") <= area[3] + TOL):
            fail(f"{what}: point at {p.get('cx')},{p.get('cy')} outside the plotting area {area}")
    for b in find(c, "bar", "rect"):
        if num(b, "y") < area[1] - TOL:
            fail(f"{what}: a bar rises past the top of the area: {b.attrib}")
    # Labels: their boxes (the white backings) inside the area, clear of every whisker and of each other.
    labels = [(rect_of(r), text_of(t)) for g in c.iter() for r, t in zip(
        [e for e in g if "label-backing" in classes(e)],
        [e for e in g if e.tag == SVG + "text" and set(classes(e)) & {"value", "step", "knee-label", "cpuid-label"}])]
    if len(labels) != len(find(c, "value")) + len(find(c, "step")) + len(find(c, "knee-label")) + \
            len(find(c, "cpuid-label")):
        fail(f"{what}: a label without its backing box")
    whiskers = [s for w in find(c, "whisker", "path") for s in path_segments(w.get("d"))]
    # The series' lines too, for the labels placed among them (a stride chart's step labels).
    lines = [s for ln in find(c, "line", "path") for s in path_segments(ln.get("d"))]
    steps = {text_of(t) for t in find(c, "step", "text")}
    for box, text in labels:
        if box[0] < area[0] - TOL or box[2] > area[2] + TOL or box[1] < area[1] - TOL or box[3] > area[3] + TOL:
            fail(f"{what}: label {text!r} at {box} leaves the plotting area {area}")
        for s in whiskers:
            if segment_hits_box(s, box):
                fail(f"{what}: a whisker {s} crosses label {text!r} at {box}")
        for s in lines if text in steps else ():
            if line_hits_box(s, box):
                fail(f"{what}: a series line {s} crosses step label {text!r} at {box}")
    for i, (a, ta) in enumerate(labels):
        for b, tb in labels[i + 1:]:
            if boxes_overlap(a, b):
                fail(f"{what}: labels {ta!r} {a} and {tb!r} {b} overlap")
    # Bands: each series' own hatching, at an angle no other band has; no translucent solid fill to blend.
    angles = []
    for band in find(c, "band", "path"):
        ang = pattern_angle(root, band.get("fill"))
        if ang is None:
            fail(f"{what}: band fill {band.get('fill')!r} is not a hatch pattern")
        angles.append(ang)
    if len(set(angles)) != len(angles):
        fail(f"{what}: two bands share a hatching angle: {angles}")
    # The legend: an entry per drawn series and nothing else; the spread, knee and capacity entries iff drawn.
    legend = find(c, "legend")[0]
    entries = find(legend, "legend-entry", "g")
    keys = sorted(e.get("data-series") for e in entries if e.get("data-series"))
    series = sorted(s.get("data-series") for s in find(c, "series", "g") if len(list(s)))
    if keys != series:
        fail(f"{what}: legend series {keys}, drawn series {series}")
    kinds = {e.get("data-kind") for e in entries if e.get("data-kind")}
    want = {k for k, cls in (("spread", "band"), ("spread", "whisker"), ("knee", "knee"), ("cpuid-ref", "cpuid-ref"))
            if find(c, cls)}
    if kinds != want:
        fail(f"{what}: legend entries {sorted(kinds)}, want {sorted(want)} for what is drawn")
    for e in find(legend, "legend-label", "text"):
        if num(e, "x") + text_w(text_of(e), 11) > page_w(root) + TOL:
            fail(f"{what}: legend label {text_of(e)!r} runs past the right edge")


# DejaVu Sans advance widths, thousandths of an em, of printable ASCII (its hmtx table, 2048 units, rounded up):
# how wide the first font the SVG names draws a text, to check it stays on the page.
DEJAVU = [318, 401, 461, 838, 637, 951, 780, 276, 391, 391, 500, 838, 318, 361, 318, 337, 637, 637, 637, 637, 637, 637,
          637, 637, 637, 637, 337, 337, 838, 838, 838, 531, 1000, 685, 687, 699, 771, 633, 576, 776, 753, 295, 295, 657,
          558, 864, 749, 788, 604, 788, 695, 635, 612, 733, 685, 990, 686, 612, 686, 391, 337, 391, 838, 500, 500, 613,
          636, 550, 636, 616, 353, 636, 634, 278, 278, 580, 278, 975, 634, 613, 636, 636, 412, 521, 393, 634, 592, 818,
          592, 592, 526, 637, 337, 637, 838]


def text_w(text, font_px):
    return sum(DEJAVU[ord(ch) - 32] if 32 <= ord(ch) < 127 else 800 for ch in text) / 1000 * font_px


def page_w(root):
    return float(root.get("viewBox").split()[2])


def check_footer(root, rep, what, version):
    """Provenance on the picture: machine, kernel, command, report, date, version, under the last chart."""
    foot = find(root, "footer", "g")
    if len(foot) != 1:
        fail(f"{what}: {len(foot)} footers, want one")
        return
    lines = [text_of(t) for t in find(foot[0], "footer-line", "text")]
    text = "\n".join(lines)
    env = rep["environment"]
    cpu = env.get("cpu", {}).get("model_name") or ""
    need = [("Machine: ", "the machine"), ("kernel ", "the kernel"), ("Command: ", "the command"),
            (f"tlbprof {version}" if version else "tlbprof ", "the version")]
    for piece, why in need:
        if piece not in text:
            fail(f"{what}: the footer does not give {why} ({piece!r}): {lines}")
    if cpu and cpu[:20] not in text:
        fail(f"{what}: the footer does not name the CPU {cpu!r}: {lines}")
    if not re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC", text):
        fail(f"{what}: the footer has no date: {lines}")
    # The report's own date and writer where it has them (a file's date is lost on a copy); else the file's.
    at, by = rep.get("measured_at"), rep.get("tool", {}).get("version")
    if at and f"measured {at[:10]} {at[11:16]} UTC by tlbprof {by}" not in text:
        fail(f"{what}: the footer does not give measured_at {at} and the writer {by}: {lines}")
    if not at and ("file dated" not in text or (by and f"written by tlbprof {by}" not in text)):
        fail(f"{what}: a report without measured_at: its file's date and its writer: {lines}")
    if rep.get("command") and os.path.basename(rep["command"][-1])[:12] not in text:
        fail(f"{what}: the footer does not hold the command {rep['command']}: {lines}")
    bottom = max((num(r, "y") + num(r, "height") for r in find(root, "plot-area", "rect")), default=0)
    h = float(root.get("viewBox").split()[3])
    for t in find(foot[0], "footer-line", "text"):
        if not bottom < num(t, "y") <= h or num(t, "x") + text_w(text_of(t), 10) > page_w(root):
            fail(f"{what}: footer line {text_of(t)!r} at y {t.get('y')} not on the picture under the charts")



def ok_measured(rep, workload):
    return [p for p in rep["phases"] if p["status"] == "ok" and p["workload"] == workload and p["role"] == "measure"]


# 1. The fixture size sweep: a line per page size on a log working-set axis, points at the report's medians.
sweep = os.path.join(DATA, "cloud-xeon-size-sweep.json")
root = plot(sweep, os.path.join(tmp, "sweep.svg"))
if root is not None:
    check_document(root, "sweep")
    with open(sweep) as f:
        rep = json.load(f)
    ch = charts(root)
    if len(ch) != 1 or ch[0].get("data-chart") != "size-sweep":
        fail(f"sweep: one size-sweep chart, got {[c.get('data-chart') for c in ch]}")
    else:
        c = ch[0]
        check_chart(c, "sweep", "working set")
        phases = ok_measured(rep, "chase")
        want = {p["page"]["requested"] for p in phases}
        series = {s.get("data-series"): s for s in find(c, "series", "g")}
        if set(series) != want:
            fail(f"sweep: series {set(series)}, want one per page size {want}")
        for p in phases:
            pts = [e for e in find(series.get(p["page"]["requested"], c), "point", "circle")
                   if int(float(e.get("data-x"))) == p["params"]["size_bytes"]]
            if len(pts) != 1 or not close(pts[0].get("data-y"), p["ns_per_access"]["median"]):
                fail(f"sweep: {p['name']}: point {[e.attrib for e in pts]}, want median {p['ns_per_access']['median']}")
        xa = find(c, "x-axis")[0]
        ticks = [text_of(t) for t in find(xa, "tick-label")]
        if xa.get("data-scale") != "log2" or "64 MiB" not in ticks or "1 GiB" not in ticks:
            fail(f"sweep: x axis {xa.get('data-scale')} ticks {ticks}")
        # On a log axis equal ratios are equal distances: 64M -> 128M as far as 512M -> 1G.
        cx = {int(float(e.get("data-x"))): float(e.get("cx")) for e in find(series["4k"], "point")}
        if not close(cx[128 << 20] - cx[64 << 20], cx[1 << 30] - cx[512 << 20], rel=1e-3):
            fail(f"sweep: points are not spaced logarithmically: {cx}")
        ya = find(c, "y-axis")[0]
        if ya.get("data-scale") != "linear" or float(ya.get("data-min")) != 0:
            fail(f"sweep: y axis {ya.attrib}")

# 2. A real tlbsize run: a point per measured page count, the report's knees, CPUID capacities or the note.
path, rep = measure(["--workload", "tlbsize", "--max-pages", "512", "--iters", "20k", "--repeat", "3"], "tlbsize.json")
root = plot(path, os.path.join(tmp, "tlbsize.svg")) if rep else None
if root is not None:
    check_document(root, "tlbsize")
    c = charts(root)[0]
    check_chart(c, "tlbsize", "pages touched")
    phases = ok_measured(rep, "tlbsize")
    pts = find(c, "point", "circle")
    got = {int(float(e.get("data-x"))): float(e.get("data-y")) for e in pts}
    want = {p["params"]["slots"]: p["ns_per_access"]["median"] for p in phases}
    if len(pts) != len(want) or set(got) != set(want):
        fail(f"tlbsize: {len(pts)} points at {sorted(got)}, want {sorted(want)}")
    for x, y in want.items():
        if x in got and not close(got[x], y):
            fail(f"tlbsize: {x} pages: {got[x]}, report median {y}")
    xs = [float(e.get("data-x")) for e in pts]
    if xs != sorted(xs):
        fail("tlbsize: the curve is not drawn in page order")
    line = find(c, "line", "path")
    if len(line) != 1 or line[0].get("d").count("L") != len(want) - 1:
        fail("tlbsize: one line through every point")
    knees = sorted(float(k.get("data-pages")) for k in find(c, "knee"))
    report_knees = sorted(k["pages"] for k in rep["analysis"]["knees"])
    if knees != report_knees:
        fail(f"tlbsize: knees in the SVG {knees}, in the report {report_knees}")
    levels = {k["pages"]: k["level"] or "unknown" for k in rep["analysis"]["knees"]}
    for k in find(c, "knee"):
        pages = float(k.get("data-pages"))
        if text_of(k).strip() != f"knee {pages:.0f} ({levels.get(pages)})":
            fail(f"tlbsize: knee label {text_of(k)!r} does not give its page count and level {levels.get(pages)}")
    # The capacities drawn: CPUID's where it reports any, else the identified core's documented ones; in a VM whose
    # CPUID is more than 1.25 times apart from the row at the L1 or L2 (bhyve on a Zen 5 host: L2 128 against 4096),
    # the row's.
    tlb = rep["environment"]["tlb"]
    caps = sorted(v for v in (tlb.get("l1d_4k_entries"), tlb.get("l2d_4k_entries")) if v)
    documented = rep["environment"]["cpu"].get("identification", {}).get("documented_tlb") or {}
    def apart(c, d):
        return bool(c and d and (c > 1.25 * d or d > 1.25 * c))
    disagrees = bool(rep["environment"].get("hypervisor")) and any(
        apart(tlb.get(k), documented.get(k)) for k in ("l1d_4k_entries", "l2d_4k_entries"))
    if not caps or (disagrees and documented.get("l1d_4k_entries")):
        caps = sorted(v for v in (documented.get("l1d_4k_entries"), documented.get("l2d_4k_entries")) if v)
    refs = sorted(float(r.get("data-entries")) for r in find(c, "cpuid-ref"))
    notes = " ".join(text_of(n) for n in find(c, "note"))
    if refs != caps:
        fail(f"tlbsize: capacity lines {refs}, report {caps}")
    if not caps and "Neither CPUID nor a documented core" not in notes:
        fail(f"tlbsize: nothing gives the TLB here and the chart must say so: {notes!r}")
    if caps and not (tlb.get("l1d_4k_entries") or tlb.get("l2d_4k_entries")) and "documented" not in notes:
        fail(f"tlbsize: the capacities are documented ones and the chart must say so: {notes!r}")
    if disagrees and "hypervisors invent these leaves" not in notes:
        fail(f"tlbsize: CPUID disagrees with the documented row and the chart must say so: {notes!r}")

# 3. A stride run: the step labels of the report's analysis, on the right series.
path, rep = measure(["--workload", "stride", "--pages", "4k,2m", "--size", "8M", "--iters", "100k", "--repeat", "3"],
                    "stride.json")
root = plot(path, os.path.join(tmp, "stride.svg")) if rep else None
if root is not None:
    check_document(root, "stride")
    c = charts(root)[0]
    check_chart(c, "stride", "stride")
    by_name = {p["name"]: p for p in rep["phases"]}
    want = sorted((by_name[s["from"]]["page"]["requested"], s["from_stride_bytes"], s["to_stride_bytes"], s["label"])
                  for s in rep["analysis"]["stride_steps"])
    got = sorted((t.get("data-series"), int(float(t.get("data-from"))), int(float(t.get("data-to"))), text_of(t))
                 for t in find(c, "step", "text"))
    if not want or got != want:
        fail(f"stride: step labels {got}, want {want}")
    tlb_step = [g[3] for g in got if g[0] == "4k" and g[1:3] == (512, 4096)]
    if tlb_step not in (["tlb"], ["none"]):
        fail(f"stride: the 512 B -> 4 KiB step on 4 KiB pages is labelled tlb, or none without a rise: {tlb_step}")

# 4. The default chase run (one working set): a bar per page size and the packed control.
example = os.path.join(EXAMPLES, "kvm-intel-no-pmu.json")
root = plot(example, os.path.join(tmp, "bars.svg"))
if root is not None:
    check_document(root, "bars")
    c = charts(root)[0]
    if c.get("data-chart") != "page-bars":
        fail(f"bars: chart {c.get('data-chart')}")
    check_chart(c, "bars", "page size")
    with open(example) as f:
        rep = json.load(f)
    bars = {b.get("data-x"): float(b.get("data-y")) for b in find(c, "bar", "rect")}
    for p in rep["phases"]:
        key = p["page"]["requested"] + (":packed" if p["role"] == "control" else "")
        if key not in bars or not close(bars[key], p["ns_per_access"]["median"]):
            fail(f"bars: {key}: {bars.get(key)}, want {p['ns_per_access']['median']}")

# 5. A small pagefault run to stdout (-o -): bars of ns per page per case and page size.
path, rep = measure(["--workload", "pagefault", "--pages", "4k", "--size", "8M", "--processes", "1", "--repeat", "2",
                     "--cases", "anon_cold,anon_prefault"], "pf.json")
if rep:
    p = subprocess.run([TLBPROF, "plot", path, "-o", "-"], capture_output=True, text=True, timeout=60)
    try:
        root = ET.fromstring(p.stdout) if p.returncode == 0 else None
    except ET.ParseError as e:
        root = None
        fail(f"pagefault: stdout is not well-formed: {e}")
    if root is None:
        fail(f"plot -o -: exit {p.returncode}: {p.stderr}")
    else:
        check_document(root, "pagefault")
        check_geometry(root, rep, "pagefault")
        c = charts(root)[0]
        check_chart(c, "pagefault", "page-fault case", "ns per page")
        bars = {(b.get("data-x")): float(b.get("data-y")) for b in find(c, "bar", "rect")}
        want = {q["case"]: q["ns_per_page"]["median"] for q in rep["phases"] if q["status"] == "ok"}
        if set(bars) != set(want) or any(not close(bars[k], v) for k, v in want.items()):
            fail(f"pagefault: bars {bars}, want {want}")


# 6. tlbprof run reports: marked phases with declared accesses are bars of ns per access per phase name; phases
# that declared none (and an unmarked command) are bars of wall time per occurrence in ms, with the IQR.
def run_report(args, name, opts=()):
    path = os.path.join(tmp, name)
    p = subprocess.run([TLBPROF, "run", "--quiet", "--json", path, *opts, "--", *args], capture_output=True, text=True,
                       timeout=300)
    if p.returncode not in (0, 1):
        fail(f"run {args}: exit {p.returncode}: {p.stderr}")
        return None, None
    with open(path) as f:
        return path, json.load(f)


def median(v):
    v = sorted(v)
    return (v[(len(v) - 1) // 2] + v[len(v) // 2]) / 2


def quantile(v, q):
    v = sorted(v)
    h = q * (len(v) - 1)
    i = int(h)
    return v[i] + (h - i) * (v[i + 1] - v[i]) if i + 1 < len(v) else v[-1]


def bars_of(chart):
    return {b.get("data-x"): b for b in find(chart, "bar", "rect")}


def check_wall_chart(c, rep, names, what):
    """A wall-time chart: a bar per phase name at the median ms per occurrence, the IQR over occurrences."""
    check_chart(c, what, "phase", "ms per occurrence", x_ticks=len(names))
    bars = bars_of(c)
    if set(bars) != set(names):
        fail(f"{what}: bars {set(bars)}, want {set(names)}")
    for p in rep["phases"]:
        if p["name"] not in names or p["name"] not in bars:
            continue
        ms = [w / 1e6 for w in p["declared"]["wall_ns"]]
        b = bars[p["name"]]
        if not close(b.get("data-y"), median(ms)) or not close(b.get("data-lo"), quantile(ms, 0.25)) or \
                not close(b.get("data-hi"), quantile(ms, 0.75)) or int(b.get("data-samples")) != len(ms):
            fail(f"{what}: {p['name']}: bar {b.attrib}, want median {median(ms)} of {len(ms)} occurrences")
        tip = text_of(b)
        if " ms (IQR " not in tip or "occurrence" not in tip:
            fail(f"{what}: {p['name']}: tooltip {tip!r} should give ms over occurrences")


if BENCHMARKS:
    # The example benchmark: two marked phases with accesses, a bar of ns per access each, coloured by page.
    path, rep = run_report([os.path.join(BENCHMARKS, "example-correct"), "8"], "run-correct.json")
    root = plot(path, os.path.join(tmp, "run-correct.svg")) if rep else None
    if root is not None:
        check_document(root, "run")
        ch = charts(root)
        if [c.get("data-chart") for c in ch] != ["run-phases"]:
            fail(f"run: one run-phases chart, got {[c.get('data-chart') for c in ch]}")
        else:
            check_chart(ch[0], "run", "phase")
            bars = bars_of(ch[0])
            want = {p["name"]: p for p in rep["phases"] if p["status"] == "ok"}
            if set(bars) != set(want) or len(want) < 2:
                fail(f"run: bars {set(bars)}, want a bar per phase name {set(want)}")
            for name, p in want.items():
                if name in bars and not close(bars[name].get("data-y"), p["ns_per_access"]["median"]):
                    fail(f"run: {name}: {bars[name].get('data-y')}, want {p['ns_per_access']['median']}")
            series = {s.get("data-series") for s in find(ch[0], "series", "g")}
            pages = {p["declared"]["page"] for p in want.values()}
            if series != pages:
                fail(f"run: series {series}, want one per declared page {pages}")

    # An unmarked command: its one phase declared nothing; drawn as its wall time, not refused.
    path, rep = run_report(["sleep", "0.1"], "run-sleep.json")
    root = plot(path, os.path.join(tmp, "run-sleep.svg")) if rep else None
    if root is not None:
        ch = charts(root)
        if [c.get("data-chart") for c in ch] != ["wall-time"]:
            fail(f"run sleep: one wall-time chart, got {[c.get('data-chart') for c in ch]}")
        else:
            check_wall_chart(ch[0], rep, {"command"}, "run sleep")
            b = bars_of(ch[0]).get("command")
            if b is not None and not 100 <= float(b.get("data-y")) < 10000:
                fail(f"run sleep: sleep 0.1 drawn as {b.get('data-y')} ms")

    # A benchmark (the marker protocol spoken by a script) with phases of several names: two without accesses,
    # repeated, and one with accesses: a run-phases chart and a wall-time chart.
    bench = os.path.join(tmp, "bench.py")
    with open(bench, "w") as f:
        f.write("""import os, sys, time
ctl = open(os.environ["TLBPROF_MARKER_CTL"], "w", buffering=1)
ack = open(os.environ["TLBPROF_MARKER_ACK"], "r")
def say(line):
    ctl.write(line + "\\n")
    if not ack.readline().startswith("ack"):
        sys.exit(3)
for i in range(4):
    say("phase begin load"); time.sleep(0.004 + 0.002 * i); say("phase end")
    say("phase begin scan"); time.sleep(0.002); say("phase end")
say("phase begin walk accesses=1000000"); sum(range(200000)); say("phase end")
""")
    path, rep = run_report([sys.executable, bench], "run-names.json")
    root = plot(path, os.path.join(tmp, "run-names.svg")) if rep else None
    if root is not None:
        ch = {c.get("data-chart"): c for c in charts(root)}
        if set(ch) != {"run-phases", "wall-time"}:
            fail(f"run names: charts {set(ch)}, want run-phases and wall-time")
        else:
            check_wall_chart(ch["wall-time"], rep, {"load", "scan"}, "run names")
            walk = [p for p in rep["phases"] if p["name"] == "walk"]
            bars = bars_of(ch["run-phases"])
            if set(bars) != {"walk"} or not walk or \
                    not close(bars["walk"].get("data-y"), walk[0]["ns_per_access"]["median"]):
                fail(f"run names: run-phases bars {set(bars)}, want walk at its ns per access")
            notes = " ".join(text_of(n) for n in find(ch["wall-time"], "note"))
            if "declared no accesses" not in notes:
                fail(f"run names: the wall-time chart does not say why: {notes!r}")


    # run -I: one more chart, each counter's rate per interval over time, with the same geometry rules.
    path, rep = run_report([sys.executable, "-c",
                            "import time; b = bytearray(16 << 20); time.sleep(0.2); b = bytearray(16 << 20)"],
                           "run-intervals.json", opts=("-I", "50"))
    root = plot(path, os.path.join(tmp, "run-intervals.svg")) if rep else None
    if root is not None:
        ch = {c.get("data-chart"): c for c in charts(root)}
        iv = rep["target"]["intervals"]
        drawn = sum(1 for c in iv["counters"].values() for v in c["values"] if v > 0)
        if "intervals" not in ch or len(find(ch["intervals"], "point", "circle")) != drawn:
            fail(f"run -I: charts {set(ch)}, want an intervals chart with a point per interval that counted ({drawn})")


# 7. A PNG through librsvg, at the width asked for, the height in the SVG's proportion; without librsvg, exit 2.
def png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    if head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
        return None
    return struct.unpack(">II", head[16:24])


svg_root = ET.parse(os.path.join(tmp, "sweep.svg")).getroot() if os.path.exists(os.path.join(tmp, "sweep.svg")) \
    else None
png = os.path.join(tmp, "sweep.png")
# librsvg's fonts come through fontconfig, whose caches live until exit by design: under ASan (.ci/run) the leak
# checker would fail the render on them, which are not tlbprof's.
no_lsan = dict(os.environ, ASAN_OPTIONS=(os.environ.get("ASAN_OPTIONS", "") + ":detect_leaks=0").lstrip(":"))
p = subprocess.run([TLBPROF, "plot", sweep, "-o", png, "--width", "480"], capture_output=True, text=True, timeout=60,
                   env=no_lsan)
if PNG:
    size = png_size(png) if p.returncode == 0 else None
    vb = [float(v) for v in svg_root.get("viewBox").split()] if svg_root is not None else None
    if not size or size[0] != 480 or (vb and abs(size[1] - vb[3] * 480 / vb[2]) > 1.5):
        fail(f"plot -o sweep.png --width 480: exit {p.returncode}, PNG {size}, SVG viewBox {vb}: {p.stderr.strip()}")
elif p.returncode != 2 or "librsvg" not in p.stderr or os.path.exists(png):
    fail(f"plot -o .png without librsvg: exit {p.returncode}, {p.stderr.strip()!r}")


# 8. Bad inputs: one line on stderr, the exit status, nothing written.
def bad(args, status, out, needle):
    p = subprocess.run([TLBPROF, "plot", *args], capture_output=True, text=True, timeout=60)
    lines = p.stderr.splitlines()
    if p.returncode != status or len(lines) != 1 or not lines[0].startswith("tlbprof: ") or needle not in lines[0]:
        fail(f"plot {args}: exit {p.returncode} (want {status}), stderr {p.stderr!r} (want one line with {needle!r})")
    if p.stdout:
        fail(f"plot {args}: wrote to stdout: {p.stdout[:80]!r}")
    if out and os.path.exists(out):
        fail(f"plot {args}: {out} was written")
    leftovers = [n for n in os.listdir(tmp) if n.startswith(".tlbprof")]
    if leftovers:
        fail(f"plot {args}: temporary files left: {leftovers}")


out = os.path.join(tmp, "never.svg")
bad([], 2, None, "give the report")
bad([sweep], 2, None, "-o FILE is required")
bad([sweep, "-o"], 2, None, "'-o' needs a value")
bad([sweep, "-o", ""], 2, None, "-o ''")
bad([sweep, sweep, "-o", out], 2, out, "unexpected argument")
bad([sweep, "-o", out, "--pages", "4k"], 2, out, "--pages")
bad([os.path.join(tmp, "missing.json"), "-o", out], 2, out, "missing.json")
trunc = os.path.join(tmp, "truncated.json")
with open(sweep) as f, open(trunc, "w") as g:
    g.write(f.read()[:500])
bad([trunc, "-o", out], 2, out, "truncated.json")
other = os.path.join(tmp, "other.json")
with open(other, "w") as g:
    json.dump({"schema": "something/9"}, g)
bad([other, "-o", out], 2, out, "schema")
with open(sweep) as f:
    rep = json.load(f)
for p in rep["phases"]:
    p["status"], p["reason"] = "failed", "hugetlb pool empty"
none_ok = os.path.join(tmp, "none-ok.json")
with open(none_ok, "w") as g:
    json.dump(rep, g)
bad([none_ok, "-o", out], 2, out, "no phase finished ok")
rep["phases"] = rep["phases"][:1]
with open(none_ok, "w") as g:
    json.dump(rep, g)
bad([none_ok, "-o", out], 2, out, "no phase finished ok (1 phase)")
bad([sweep, "-o", os.path.join(tmp, "no-such-dir", "x.svg")], 4, None, "does not exist")
bad([sweep, "-o", tmp], 4, None, "a directory")
bad([sweep, "-o", "/dev/full"], 4, None, "/dev/full")
# The report itself as the output: refused, the report intact.
copy = os.path.join(tmp, "copy.json")
with open(sweep) as f, open(copy, "w") as g:
    g.write(f.read())
bad([copy, "-o", copy], 2, None, "the report being drawn")
with open(copy) as f:
    if json.load(f).get("schema") != "tlbprof.report/1":
        fail("the report was overwritten")
# An earlier SVG survives an unreadable report.
keep = os.path.join(tmp, "keep.svg")
with open(keep, "w") as g:
    g.write("<svg/>")
bad([trunc, "-o", keep], 2, None, "truncated.json")
with open(keep) as f:
    if f.read() != "<svg/>":
        fail("an earlier SVG was replaced although nothing was drawn")

# 9. Help: the command's own and the main list.
p = subprocess.run([TLBPROF, "plot", "--help"], capture_output=True, text=True, timeout=30)
if p.returncode != 0 or "Usage: tlbprof plot REPORT.json -o FILE.svg" not in p.stdout:
    fail(f"plot --help: {p.returncode} {p.stdout[:100]!r}")
p = subprocess.run([TLBPROF, "--help"], capture_output=True, text=True, timeout=30)
if "  plot " not in p.stdout:
    fail("tlbprof --help lists plot")

shutil.rmtree(tmp, ignore_errors=True)
fail.finish("plot: all checks passed")
