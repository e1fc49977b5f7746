#!/usr/bin/env python3
"""Writes docs/scenarios.md: every shipped scenario with its points, from the regression baseline.

Each scenario's section is its `description:`, the leading comment of its file (what it studies and what its
points show) and a table of its points from scenarios/baseline.json (point, GPUs, step time, efficiency), so the
page says what `cclab regress` holds. In the leading comment a line of only "#" starts a new paragraph, and
lines that start with "|" (a markdown table) or "- " (a list item) are kept as lines.

Usage: scripts/scenarios-doc.py [--check] [REPO_ROOT]
  (no option)  rewrite docs/scenarios.md
  --check      write to a temporary file and compare: exit 1, with a diff, when docs/scenarios.md is stale
               (after `cclab regress --update`, or an edit of a scenario's description or leading comment)
Python 3 standard library only: the scenario files are read as text (their top-level `name:`, `description:`
and `backend:` lines and the comment above the first field).
"""
import difflib
import json
import os
import re
import sys
import tempfile
import textwrap

WIDTH = 110  # the project's line length, for the paragraphs this page writes

HEADER = """# Shipped scenarios

<!-- Written by scripts/scenarios-doc.py from scenarios/baseline.json and scenarios/*.yaml; do not edit by hand. -->

The scenarios in `scenarios/`, each with its points as the regression baseline (`scenarios/baseline.json`)
holds them: the GPU count, the predicted step time and the scaling efficiency (speedup over one GPU running the
same per-GPU batch, divided by the GPUs). `build/cclab predict scenarios/<name>.yaml` prints them with the rest
of each point's columns (`--out DIR` for CSV, JSON and plots); `cclab regress` fails when one of them drops
([usage.md](usage.md#cclab-regress)). Every figure includes the default 1.5 % variation of compute between GPUs
(`compute.jitter`): a step waits for the slowest. The file format is in
[scenario-format.md](scenario-format.md). To regenerate this page after `cclab regress --update`:
`python3 scripts/scenarios-doc.py`.
"""


def read_scenario(path):
    """(name, description, backend, leading comment lines) of a scenario file, read as text."""
    name = description = backend = None
    comment = []
    in_header = True
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if in_header and line.startswith("#"):
                comment.append(line[1:][1:] if line.startswith("# ") else line[1:])
                continue
            in_header = False
            m = re.match(r"^(name|description|backend):\s*(.*?)\s*$", line)
            if m:
                value = m.group(2)
                if m.group(1) == "name":
                    name = value
                elif m.group(1) == "description":
                    description = value
                else:
                    backend = value
    return name, description, backend, comment


def paragraphs(comment):
    """Markdown from a leading comment: lines joined into paragraphs; a line starting with "- " starts a list
    item (its indented lines continue it), a line starting with "|" is a table row, kept as it is."""
    blocks = []  # (kind, text): kind "p" paragraph, "li" list item, "tr" table row, "" blank
    for line in comment:
        s = line.strip()
        if not s:
            blocks.append(("", ""))
        elif s.startswith("|"):
            blocks.append(("tr", s))
        elif s.startswith("- "):
            blocks.append(("li", s))
        elif blocks and blocks[-1][0] in ("p", "li"):
            blocks[-1] = (blocks[-1][0], blocks[-1][1] + " " + s)
        else:
            blocks.append(("p", s))
    out = []
    previous = ""
    for kind, text in blocks:
        # A paragraph, a list and a table are separated by a blank line; list items and table rows follow
        # their own kind directly.
        if kind and previous and kind != previous or kind == "p" and previous == "p":
            out.append("")
        if kind == "tr":
            out.append(text)
        elif kind:
            out.extend(textwrap.wrap(text, WIDTH, break_long_words=False, break_on_hyphens=False,
                                     subsequent_indent="  " if kind == "li" else ""))
        elif out and out[-1]:
            out.append("")
        previous = kind
    return "\n".join(out).strip()


def natural_key(text):
    return [(0, int(t), "") if t.isdigit() else (1, 0, t) for t in re.split(r"(\d+)", text)]


def render(root):
    with open(os.path.join(root, "scenarios", "baseline.json"), encoding="utf-8") as f:
        baseline = json.load(f)
    points = {}
    for p in baseline["points"]:
        points.setdefault(p["scenario"], []).append(p)

    files = sorted(f for f in os.listdir(os.path.join(root, "scenarios")) if f.endswith(".yaml"))
    scenarios = []
    for f in files:
        name, description, backend, comment = read_scenario(os.path.join(root, "scenarios", f))
        scenarios.append((name or f[:-5], f, description, backend, comment))
    # The default first, then the others by name.
    scenarios.sort(key=lambda s: (s[0] != "default", s[0]))

    out = [HEADER]
    out.append("| scenario | what it studies | points |")
    out.append("|---|---|---:|")
    for name, f, description, _, _ in scenarios:
        out.append(f"| [`{name}`](#{name}) | {description or ''} | {len(points.get(name, []))} |")
    out.append("")
    for name, f, description, backend, comment in scenarios:
        out.append(f"## {name}")
        out.append("")
        if description:
            out.extend(textwrap.wrap(f"*{description}.*", WIDTH, break_long_words=False,
                                     break_on_hyphens=False))
            out.append("")
        text = paragraphs(comment)
        if text:
            out.append(text)
            out.append("")
        times = "SimGrid, by pattern" if backend == "sim" else "the α-β model"
        out.extend(textwrap.wrap(f"[`scenarios/{f}`](../scenarios/{f}); collective times from {times}; "
                                 f"`build/cclab predict scenarios/{f}`.", WIDTH, break_long_words=False,
                                 break_on_hyphens=False))
        out.append("")
        rows = sorted(points.get(name, []), key=lambda p: (p["gpus"], natural_key(p["point"])))
        if not rows:
            out.append("No points in the baseline.")
            out.append("")
            continue
        out.append("| point | GPUs | step (ms) | efficiency |")
        out.append("|---|---:|---:|---:|")
        for p in rows:
            out.append(f"| {p['point']} | {p['gpus']} | {1000 * p['step_s']:.2f} | {100 * p['efficiency']:.1f}% |")
        out.append("")
    unknown = sorted(set(points) - {s[0] for s in scenarios})
    if unknown:
        raise SystemExit(f"scenarios-doc: baseline points of scenarios without a file: {', '.join(unknown)}")
    return "\n".join(out).rstrip() + "\n"


def main(argv):
    check = "--check" in argv
    args = [a for a in argv if a != "--check"]
    root = os.path.abspath(args[0] if args else os.path.join(os.path.dirname(__file__), ".."))
    target = os.path.join(root, "docs", "scenarios.md")
    text = render(root)
    if not check:
        with open(target, "w", encoding="utf-8") as f:
            f.write(text)
        return 0
    with tempfile.NamedTemporaryFile("w", suffix=".md", delete=False, encoding="utf-8") as tmp:
        tmp.write(text)
    try:
        try:
            with open(target, encoding="utf-8") as f:
                current = f.read()
        except OSError:
            current = ""
        if current == text:
            print("scenarios-doc: docs/scenarios.md is up to date")
            return 0
        sys.stdout.writelines(difflib.unified_diff(current.splitlines(True), text.splitlines(True),
                                                   "docs/scenarios.md", "regenerated"))
        print("scenarios-doc: docs/scenarios.md is stale: run python3 scripts/scenarios-doc.py")
        return 1
    finally:
        os.unlink(tmp.name)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
