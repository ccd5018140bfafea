#!/usr/bin/env python3
"""The public items of a crate from rustdoc's JSON (see scripts/public-api.sh): one line per
item, `kind path`, with a type's own methods and a trait's items as `kind Type::name`."""
import json, sys
d = json.load(open(sys.argv[1]))
idx = d['index']
get = lambda i: idx.get(str(i))
out = set()
seen = set()

def walk_module(mod_id, prefix):
    m = get(mod_id)
    for i in m['inner']['module']['items']:
        visit(i, prefix)

def visit(i, prefix, name=None):
    it = get(i)
    if it is None:
        return
    kind = next(iter(it['inner']))
    inner = it['inner'][kind]
    if kind == 'use':
        if inner.get('is_glob'):
            if inner.get('id') is not None and get(inner['id']) and 'module' in get(inner['id'])['inner']:
                walk_module(inner['id'], prefix)
            return
        if inner.get('id') is not None:
            visit(inner['id'], prefix, inner['name'])
        return
    if it.get('visibility') != 'public' and kind not in ('impl',):
        return
    nm = name or it.get('name')
    path = f"{prefix}::{nm}" if prefix else nm
    key = (kind, path)
    if key in seen:
        return
    seen.add(key)
    if kind == 'module':
        out.add(f"mod {path}")
        walk_module(i, path)
        return
    out.add(f"{kind} {path}")
    if kind in ('struct', 'enum', 'union'):
        for impl_id in inner.get('impls', []):
            impl = get(impl_id)['inner']['impl']
            if impl.get('trait') is None:
                for m in impl['items']:
                    mi = get(m)
                    if mi and mi.get('visibility') == 'public':
                        out.add(f"{next(iter(mi['inner']))} {path}::{mi['name']}")
        if kind == 'enum':
            pass
    if kind == 'trait':
        for m in inner['items']:
            mi = get(m)
            if mi:
                out.add(f"{next(iter(mi['inner']))} {path}::{mi['name']}")

walk_module(d['root'], '')
for line in sorted(out):
    print(line)
