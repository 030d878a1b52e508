#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""
check_layout.py - the tree's layering, checked on every test run:

1. Includes point one way (DESIGN.md, "Layers"): each #include "x.h" of a
   source file is resolved to the one header of that name in the tree, and
   the header's layer must be the file's own or one below it. Within
   transport/, datapath/ reaches nothing of engine/, and nothing reaches api/.
2. Every header name outside tests/ is unique, so -I order never decides
   which one a file gets.
3. Circles of files (files that reach each other's symbols by name, read off
   the build's object files with nm) are only those listed in ALLOWED_CIRCLES
   below, each with the reason it is one concept; none spans two top-level
   directories, and a listed circle that no longer exists must be removed.

Usage: check_layout.py SOURCE_ROOT BUILD_DIR
"""
import collections
import json
import os
import re
import subprocess
import sys

# Lower index = lower layer. A file may include headers of its own layer or
# of a lower one.
LAYERS = [
    ('libpcm/', 0),
    ('policies/', 1),
    ('pcmd-abi/', 1),
    ('libpcmprog/', 1),
    ('transport/base/', 2),
    ('transport/core/', 3), ('transport/uet/', 3),
    ('transport/datapath/', 4),
    ('transport/engine/', 5),
    ('transport/api/', 6),
    ('daemon/', 7), ('examples/', 7), ('engines/', 7),
    ('cli/', 8), ('bench/', 8),
]

# Circles that remain, each one concept (see the directory's README). None today.
ALLOWED_CIRCLES = {
}

INCLUDE_RE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def layer_of(path):
    best = None
    for prefix, rank in LAYERS:
        if path.startswith(prefix) and (best is None or len(prefix) > len(best[0])):
            best = (prefix, rank)
    return best


def tracked_files(root):
    try:
        out = subprocess.run(['git', '-C', root, 'ls-files'], capture_output=True, text=True)
    except FileNotFoundError:  # no git on this machine
        out = None
    if out is None or out.returncode != 0:  # not a checkout (an unpacked tarball): walk the tree
        files = []
        for d, _, names in os.walk(root):
            if '/.git' in d or os.path.relpath(d, root).startswith('build'):
                continue
            files += [os.path.relpath(os.path.join(d, n), root) for n in names]
        return files
    return out.stdout.split()


def check_headers(files):
    errors = []
    by_name = collections.defaultdict(list)
    for f in files:
        if f.endswith('.h') and not f.startswith('tests/'):
            by_name[os.path.basename(f)].append(f)
    for name, paths in sorted(by_name.items()):
        if len(paths) > 1:
            errors.append(f'header name {name} is used by {len(paths)} files: ' + ', '.join(paths))
    return errors, {n: p[0] for n, p in by_name.items()}


def check_includes(root, files, header_at):
    errors = []
    for f in files:
        if not f.endswith(('.c', '.h')) or f.startswith('tests/'):
            continue
        mine = layer_of(f)
        if mine is None:
            continue
        text = open(os.path.join(root, f), errors='replace').read()
        for inc in INCLUDE_RE.findall(text):
            target = header_at.get(os.path.basename(inc))
            if target is None:
                continue  # generated, system or package header
            theirs = layer_of(target)
            if theirs is None or theirs[0] == mine[0]:
                continue
            if theirs[1] >= mine[1]:
                errors.append(f'{f} includes {target}: {theirs[0]} is not below {mine[0]}')
    return errors


def circles(root, build):
    db = json.load(open(os.path.join(build, 'compile_commands.json')))
    root = os.path.realpath(root)
    defs, refs, nodes = {}, collections.defaultdict(set), []
    seen = set()
    for e in db:
        src = os.path.relpath(os.path.realpath(os.path.join(e['directory'], e['file'])), root)
        obj = os.path.join(e['directory'], e['output'])
        if src.startswith(('tests/', '..')) or not src.endswith('.c') or src in seen:
            continue
        if not os.path.exists(obj):
            continue
        seen.add(src)
        nodes.append(src)
        nm = subprocess.run(['nm', obj], capture_output=True, text=True).stdout
        for line in nm.splitlines():
            p = line.split()
            if len(p) == 3 and p[1] in 'TDBRCGSV':
                defs.setdefault(p[2], src)
            elif len(p) == 2 and p[0] == 'U':
                refs[src].add(p[1])
    graph = {n: sorted({defs[s] for s in refs[n] if s in defs and defs[s] != n}) for n in nodes}
    index, low, stack, on, comps, counter = {}, {}, [], set(), [], [0]

    def visit(v):  # Tarjan, iterative enough for this tree's depth
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(tuple(sorted(comp)))

    sys.setrecursionlimit(100000)
    for n in sorted(nodes):
        if n not in index:
            visit(n)
    return comps, graph


def check_circles(root, build):
    errors = []
    comps, graph = circles(root, build)
    found = set(comps)
    for c in comps:
        tops = {p.split('/')[0] for p in c}
        edges = ' '.join(f'{a}->{b}' for a in c for b in graph[a] if b in c)
        if len(tops) > 1:
            errors.append(f'circle spans {sorted(tops)}: {edges}')
        elif c not in ALLOWED_CIRCLES:
            errors.append(f'circle of {len(c)} files not in ALLOWED_CIRCLES: {edges}')
    for c in ALLOWED_CIRCLES:
        if c not in found:
            errors.append(f'ALLOWED_CIRCLES lists {c}, which is no longer a circle: remove it')
    return errors, comps


def main():
    root, build = sys.argv[1], sys.argv[2]
    files = sorted(set(tracked_files(root)))
    errors, header_at = check_headers(files)
    errors += check_includes(root, files, header_at)
    circle_errors, comps = check_circles(root, build)
    errors += circle_errors
    for e in errors:
        print('layout: ' + e)
    print(f'layout: {len(comps)} circle(s) of files, {len(errors)} problem(s)')
    return 1 if errors else 0


if __name__ == '__main__':
    sys.exit(main())
