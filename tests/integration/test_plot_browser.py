#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tlbprof plot's SVGs as a browser draws them: every saved report that plots (tests/data, examples/reports) and
hostile variants of one (a long command, CPU name and phase names, CJK text) are laid out by headless Chromium,
whose own text boxes (its fonts, its layout) must stay on the picture, inside their label backings and clear of
each other. test_plot.py checks the geometry tlbprof computes, with DejaVu's widths; this checks what a reader
sees. Two altered copies (a text moved off the picture, one laid over another) must be caught, so that the
check cannot pass on boxes that were never measured."""
import atexit
import copy
import glob
import html
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report_check import Failures  # noqa: E402

TLBPROF = sys.argv[1]
SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
TOL = 0.5   # px: Chromium's boxes are fractional
fail = Failures()
tmp = tempfile.mkdtemp(prefix="tlbprof-plot-browser-")
atexit.register(shutil.rmtree, tmp, True)

# In the page: each SVG at its viewBox's size, so that a CSS pixel is a user unit; every text's box as laid out,
# and each label backing with the text drawn on it (its next sibling), in the picture's coordinates.
MEASURE_JS = r"""
const out = [];
for (const d of document.querySelectorAll('div.doc')) {
  const svg = d.querySelector('svg'), vb = svg.viewBox.baseVal;
  svg.setAttribute('width', vb.width); svg.setAttribute('height', vb.height); svg.style.display = 'block';
  const r0 = svg.getBoundingClientRect();
  const rel = b => [b.left - r0.left + vb.x, b.top - r0.top + vb.y, b.right - r0.left + vb.x, b.bottom - r0.top + vb.y];
  const texts = [...svg.querySelectorAll('text')].filter(t => t.textContent.trim())
    .map(t => ({text: t.textContent, cls: t.getAttribute('class') || '', box: rel(t.getBoundingClientRect())}));
  const labels = [...svg.querySelectorAll('rect.label-backing')]
    .filter(r => r.nextElementSibling && r.nextElementSibling.tagName === 'text')
    .map(r => ({text: r.nextElementSibling.textContent, backing: rel(r.getBoundingClientRect()),
                box: rel(r.nextElementSibling.getBoundingClientRect())}));
  out.push({file: d.dataset.file, w: vb.width, h: vb.height, texts, labels});
}
const pre = document.createElement('pre'); pre.id = 'out'; pre.textContent = JSON.stringify(out);
document.body.appendChild(pre);
"""


def browser():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return shutil.which(name)
    return None


def measure(svgs):
    """Lay out every SVG in one page of headless Chromium; its measurements, one dict per SVG."""
    parts = []
    for name, path in svgs:
        with open(path, encoding="utf-8") as f:
            body = re.sub(r"<\?xml[^>]*\?>", "", f.read())
        parts.append(f'<div class="doc" data-file="{html.escape(name)}">{body}</div>')
    page = os.path.join(tmp, "page.html")
    with open(page, "w", encoding="utf-8") as f:
        f.write("<!doctype html><html><head><meta charset='utf-8'></head><body>" + "".join(parts) +
                "<script>" + MEASURE_JS + "</script></body></html>")
    p = subprocess.run([browser(), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                        "--user-data-dir=" + os.path.join(tmp, "profile"), "--dump-dom", "file://" + page],
                       capture_output=True, text=True, timeout=180)
    m = re.search(r'<pre id="out">(.*?)</pre>', p.stdout, re.S)
    if not m:
        fail(f"chromium --dump-dom: exit {p.returncode}, no measurements: {p.stderr[-600:]!r}")
        return []
    return json.loads(html.unescape(m.group(1)))


def problems(doc):
    """What a reader would see wrong in one laid-out SVG: text off the picture, a label wider than its backing,
    two texts over each other."""
    out = []
    w, h = doc["w"], doc["h"]
    for t in doc["texts"]:
        b = t["box"]
        if b[0] < -TOL or b[1] < -TOL or b[2] > w + TOL or b[3] > h + TOL:
            out.append(f"text {t['text'][:60]!r} ({t['cls']}) at {[round(x, 1) for x in b]} leaves the {w}x{h} "
                       "picture")
    for lb in doc["labels"]:
        a, b = lb["backing"], lb["box"]
        if b[0] < a[0] - TOL or b[2] > a[2] + TOL:
            out.append(f"label {lb['text']!r} at x {b[0]:.1f}..{b[2]:.1f} is wider than its backing "
                       f"{a[0]:.1f}..{a[2]:.1f}")
    ts = doc["texts"]
    for i, a in enumerate(ts):
        for b in ts[i + 1:]:
            x = min(a["box"][2], b["box"][2]) - max(a["box"][0], b["box"][0])
            y = min(a["box"][3], b["box"][3]) - max(a["box"][1], b["box"][1])
            if x > TOL and y > TOL:
                out.append(f"texts {a['text'][:40]!r} ({a['cls']}) and {b['text'][:40]!r} ({b['cls']}) overlap by "
                           f"{x:.1f} x {y:.1f} px")
    return out


def hostile_reports(base):
    """Variants of one report with the strings a picture must fit: long, unbroken and not Latin."""
    with open(base) as f:
        rep = json.load(f)
    variants = {}
    v = copy.deepcopy(rep)
    v["command"] = ["tlbprof"] + ["--event=" + "W" * 30] * 20
    variants["long-command"] = v
    v = copy.deepcopy(rep)
    v["command"] = ["tlbprof", "W" * 400]
    variants["unbroken-command"] = v
    v = copy.deepcopy(rep)
    v["environment"]["cpu"]["model_name"] = "WWWWWWWWWW " * 30
    variants["long-cpu"] = v
    v = copy.deepcopy(rep)
    for ph in v["phases"]:
        ph["name"] = ph["name"] + "/" + "W" * 80
    variants["long-phases"] = v
    v = copy.deepcopy(rep)
    v["command"] = ["tlbprof", "漢字" * 100, "ÀÉÎ" * 50]
    variants["cjk-command"] = v
    out = []
    for name, v in variants.items():
        path = os.path.join(tmp, f"hostile-{name}.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump(v, f, ensure_ascii=False)
        out.append(path)
    return out


def draw(reports):
    """tlbprof plot each report that plots; (name, svg path) of those drawn."""
    svgs = []
    for i, rep in enumerate(reports):
        out = os.path.join(tmp, f"{i:03d}.svg")
        p = subprocess.run([TLBPROF, "plot", rep, "-o", out], capture_output=True, text=True, timeout=60)
        if p.returncode == 0:
            svgs.append((os.path.relpath(rep, SRC) if rep.startswith(SRC) else os.path.basename(rep), out))
        elif p.returncode not in (2, 4) or os.path.exists(out):
            fail(f"plot {rep}: exit {p.returncode} ({p.stderr.strip()[:200]!r}), or a file written all the same")
    return svgs


def altered(svg_path, name, how):
    """A copy of a drawn SVG with its last text moved: off the picture, or onto the first text."""
    with open(svg_path, encoding="utf-8") as f:
        s = f.read()
    texts = list(re.finditer(r'<text\b[^>]*\bx="([-0-9.]+)"[^>]*\by="([-0-9.]+)"', s))
    first, last = texts[0], texts[-1]
    if how == "off":
        new = last.group(0).replace(f'x="{last.group(1)}"', 'x="-400"', 1)
    else:
        new = last.group(0).replace(f'x="{last.group(1)}"', f'x="{first.group(1)}"', 1) \
                           .replace(f'y="{last.group(2)}"', f'y="{first.group(2)}"', 1)
    path = os.path.join(tmp, f"altered-{how}.svg")
    with open(path, "w", encoding="utf-8") as f:
        f.write(s[:last.start()] + new + s[last.end():])
    return (name, path)


if not browser():
    fail("no Chromium (package chromium): tools/bootstrap --test installs it")
    fail.finish("")
reports = sorted(p for p in glob.glob(os.path.join(SRC, "tests", "data", "**", "*.json"), recursive=True)
                 if os.sep + "outputs" + os.sep not in p and os.sep + "schema" + os.sep not in p)
reports += sorted(glob.glob(os.path.join(SRC, "examples", "reports", "*.json")))
reports += hostile_reports(os.path.join(SRC, "tests", "data", "vm-chase-16m-run1.json"))
svgs = draw(reports)
if len(svgs) < 15:
    fail(f"only {len(svgs)} of {len(reports)} reports plotted: {[n for n, _ in svgs]}")
controls = [altered(svgs[0][1], "control: a text off the picture", "off"),
            altered(svgs[0][1], "control: a text over another", "over")]
docs = {d["file"]: d for d in measure(svgs + controls)}
labels = 0
for name, _ in svgs:
    d = docs.get(name)
    if not d or not d["texts"] or any(t["box"][2] - t["box"][0] <= 0 for t in d["texts"]):
        fail(f"{name}: Chromium laid out no text, or a text of no width: {d and d['texts'][:3]}")
        continue
    labels += len(d["labels"])
    for msg in problems(d):
        fail(f"{name}: {msg}")
if svgs and labels == 0:
    fail("no label backing with its text in any picture: the backing check checked nothing")
for (name, _), want in zip(controls, ("leaves the", "overlap")):
    got = problems(docs[name]) if name in docs else []
    if not any(want in m for m in got):
        fail(f"{name}: not caught ({got})")
n_texts = sum(len(docs[n]["texts"]) for n, _ in svgs if n in docs)
fail.finish(f"ok: {len(svgs)} pictures as Chromium lays them out ({n_texts} texts, {labels} labels on their backings): "
            "on the picture, clear of each other; both altered copies caught")
