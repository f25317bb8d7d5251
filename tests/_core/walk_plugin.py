"""Importing this registers the Walk family (what a plugin package's module would do): the
module name a Ray actor imports to know the family (register_family(module=...))."""
from cypool.families import families

import walk_family

if "walk" not in {f.name for f in families()}:
    walk_family.register(walk_family.build_walk(walk_family.default_cache()))
