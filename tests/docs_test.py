#!/usr/bin/env python3
"""The documentation's promises, checked (CTest entry docs_links).

  1. Every relative link in README.md and docs/*.md resolves to a file or folder of the repository, and an
     #anchor, where a link has one, to a heading of the file it points to (GitHub's slugs).
  2. README.md has at most 200 lines, and keeps the two set-up commands on lines of their own in a sh block.
  3. No file of the repository (tracked, or new and not ignored) names a repository path that does not
     exist: every token such as engine/ir/compact.hpp (a top-level folder of this repository, then a file
     name with one of the extensions below) resolves relative to the repository root or to the folder of
     the file that names it. shared/ is outside the repository: naming it is an error too.
  4. A section cited by name — docs/design.md, "Rooms"; README, "Usage" — is a heading of that file (the
     quoted text is the heading or the start of it, backticks aside).

Usage: tests/docs_test.py [REPO_ROOT]   (default: the parent of this file's folder). Prints file:line for
every problem and exits 1 if there is one. Python 3 standard library only.
"""
import os
import re
import subprocess
import sys

README_MAX_LINES = 200
SETUP_COMMANDS = ("./scripts/run.sh", "./scripts/test.sh")

# Top-level folders a cited path may start with, and the extensions that make a token a file name.
PREFIXES = ("docs", "scripts", "engine", "cli", "sim", "real", "topology", "common", "bench", "tests",
            "scenarios", "topologies", "fuzz", "cmake", "shared")
EXTENSIONS = ("md", "sh", "py", "hpp", "cpp", "h", "cu", "cuh", "yaml", "json", "txt", "cmake")
# A token starts after a character that cannot be part of a path, or right after "}/" (a CMake variable:
# ${PROJECT_SOURCE_DIR}/scenarios/default.yaml); it ends at its extension, not followed by more of a name.
PATH_TOKEN = re.compile(
    r"(?:(?<=\}/)|(?<![A-Za-z0-9_./\-]))"
    r"((?:" + "|".join(PREFIXES) + r")/[A-Za-z0-9_./\-]*?\.(?:" + "|".join(EXTENSIONS) + r"))"
    r"(?![A-Za-z0-9_\-]|\.[A-Za-z0-9])")
# Characters next to a token that make it a pattern, not a path (engine/ir/*.hpp, real/{mpi,nccl}/x.hpp).
PATTERN_NEIGHBOURS = set("*{}<>$")

# Tracked trees whose content is data, not prose: their paths are other machines' or fuzzer inputs.
SKIPPED_TREES = ("tests/data/", "fuzz/corpus/", "bench/logs/")
# Tokens allowed although no such file exists, each with its reason. Build outputs are not matched at all
# (build/ and out/ are not among the prefixes).
ALLOWED_TOKENS = {
}
# Files whose tokens are not citations.
SKIPPED_FILES = {
    "tests/docs_test.py",  # this checker: its docstring describes tokens
}


def read_text(path):
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    if b"\0" in data[:8192]:
        return None  # binary
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def tracked_files(root):
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard"], check=True, capture_output=True).stdout
        files = [f for f in out.decode("utf-8").split("\0") if f]
        if files:
            return sorted(f for f in files if os.path.isfile(os.path.join(root, f)))
    except (OSError, subprocess.CalledProcessError):
        pass
    files = []
    for top, dirs, names in os.walk(root):
        rel_top = os.path.relpath(top, root)
        dirs[:] = [d for d in dirs if not (d.startswith(".") or (rel_top == "." and
                                                                 (d.startswith("build") or d == "out")))]
        for name in names:
            files.append(os.path.normpath(os.path.join(rel_top, name)))
    return sorted(files)


# --- Markdown: links and headings -------------------------------------------------------------------------

FENCE = re.compile(r"^\s*(```|~~~)")
LINK = re.compile(r"(?<!\!)\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def prose_lines(text):
    """(line number, line) outside fenced code blocks, with inline code spans blanked out."""
    fenced = False
    for number, line in enumerate(text.splitlines(), 1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if fenced:
            continue
        yield number, re.sub(r"`[^`]*`", lambda m: " " * len(m.group(0)), line)


def github_slug(heading):
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link's text only
    text = text.strip().lower()
    text = "".join(c for c in text if c.isalnum() or c in " -_")
    return text.replace(" ", "-")


def anchors_of(text):
    seen = {}
    anchors = set()
    fenced = False
    for line in text.splitlines():
        if FENCE.match(line):
            fenced = not fenced
            continue
        if fenced:
            continue
        m = HEADING.match(line)
        if not m:
            continue
        slug = github_slug(m.group(2))
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        anchors.add(slug if n == 0 else f"{slug}-{n}")
    return anchors


def check_links(root, problems):
    docs = ["README.md"] + sorted(os.path.join("docs", f) for f in os.listdir(os.path.join(root, "docs"))
                                  if f.endswith(".md"))
    for rel in docs:
        text = read_text(os.path.join(root, rel))
        if text is None:
            problems.append(f"{rel}: cannot be read")
            continue
        for number, line in prose_lines(text):
            for m in LINK.finditer(line):
                target = m.group(1)
                if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto:
                    continue
                path, _, anchor = target.partition("#")
                if path:
                    resolved = os.path.normpath(os.path.join(os.path.dirname(rel), path))
                    full = os.path.join(root, resolved)
                    if resolved.startswith("..") or not os.path.exists(full):
                        problems.append(f"{rel}:{number}: link to {target}: {resolved} does not exist")
                        continue
                else:
                    full = os.path.join(root, rel)
                if anchor:
                    linked = read_text(full) if os.path.isfile(full) else None
                    if linked is None or not full.endswith(".md"):
                        problems.append(f"{rel}:{number}: link to {target}: an anchor into a file that is "
                                        "not markdown")
                    elif anchor not in anchors_of(linked):
                        problems.append(f"{rel}:{number}: link to {target}: no heading with anchor #{anchor}")


def check_readme(root, problems):
    text = read_text(os.path.join(root, "README.md")) or ""
    lines = text.splitlines()
    if len(lines) > README_MAX_LINES:
        problems.append(f"README.md: {len(lines)} lines, more than {README_MAX_LINES}")
    in_sh = False
    found = set()
    for line in lines:
        if FENCE.match(line):
            in_sh = not in_sh and line.strip() in ("```sh", "```bash")
            continue
        if in_sh and line.strip() in SETUP_COMMANDS:
            found.add(line.strip())
    for command in SETUP_COMMANDS:
        if command not in found:
            problems.append(f"README.md: `{command}` is not on a line of its own in a ```sh block")


# --- Paths named anywhere ---------------------------------------------------------------------------------

def checked_texts(root):
    """(path, its directory, its text) of every file the path and section checks read."""
    for rel in tracked_files(root):
        if rel in SKIPPED_FILES or any(rel.startswith(t) for t in SKIPPED_TREES):
            continue
        text = read_text(os.path.join(root, rel))
        if text is not None:
            yield rel, os.path.dirname(rel), text


def check_paths(root, problems):
    for rel, here, text in checked_texts(root):
        for number, line in enumerate(text.splitlines(), 1):
            for m in PATH_TOKEN.finditer(line):
                token = m.group(1)
                before = line[m.start(1) - 1] if m.start(1) > 0 else ""
                after = line[m.end(1)] if m.end(1) < len(line) else ""
                if before in PATTERN_NEIGHBOURS or after in PATTERN_NEIGHBOURS:
                    continue
                if token in ALLOWED_TOKENS:
                    continue
                if token.startswith("shared/"):
                    problems.append(f"{rel}:{number}: names {token}: shared/ is outside the repository "
                                    "(cite docs/ instead)")
                    continue
                candidates = [os.path.normpath(token), os.path.normpath(os.path.join(here, token))]
                if not any(os.path.exists(os.path.join(root, c)) for c in candidates):
                    problems.append(f"{rel}:{number}: names {token}, which does not exist")


# A document and a quoted section name: `docs/design.md, "Rooms"`, `algorithms.md, "Protocols"`, `README
# "Usage"`. A quote may go on over the next line of a comment.
SECTION_CITATION = re.compile(r'(?<![A-Za-z0-9_./\-])((?:[A-Za-z0-9_-]+/)*[A-Za-z0-9_-]+\.md|README)\b,?[ \t]+"([^"\n]+)"')


COMMENT_LEADER = re.compile(r"^\s*(?://+|#+|\*|--|;+)?\s*")


def heading_texts(text):
    fenced = False
    out = []
    for line in text.splitlines():
        if FENCE.match(line):
            fenced = not fenced
            continue
        m = None if fenced else HEADING.match(line)
        if m:
            out.append(normalized(m.group(2)))
    return out


def normalized(text):
    return " ".join(text.replace("`", "").replace("*", "").lower().split())


def check_section_citations(root, problems):
    for rel, here, text in checked_texts(root):
        lines = text.splitlines()
        for number, line in enumerate(lines, 1):
            following = lines[number] if number < len(lines) else ""
            joined = line + " " + COMMENT_LEADER.sub("", following)
            for m in SECTION_CITATION.finditer(joined):
                if m.start() >= len(line):
                    continue  # the next line's own: checked there
                doc, section = m.group(1), normalized(m.group(2))
                doc = "README.md" if doc == "README" else doc
                candidates = [os.path.normpath(os.path.join(here, doc)), os.path.normpath(doc),
                              os.path.normpath(os.path.join("docs", doc))]
                target = next((c for c in candidates if os.path.isfile(os.path.join(root, c))), None)
                if target is None:
                    continue  # a missing file is check 3's, or another project's document
                headings = heading_texts(read_text(os.path.join(root, target)) or "")
                if not any(h.startswith(section) for h in headings):
                    problems.append(f'{rel}:{number}: cites {target}, "{m.group(2)}": no such heading there')


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
    problems = []
    check_links(root, problems)
    check_readme(root, problems)
    check_paths(root, problems)
    check_section_citations(root, problems)
    for p in problems:
        print(p)
    if problems:
        print(f"docs_test: {len(problems)} problem(s)")
        return 1
    print("docs_test: links, README length, cited paths and sections OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
