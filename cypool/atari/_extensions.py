# The Atari extension, gathered by setup.py: (builder, module, sources, options). ALE is C++17
# and GPL-2.0: it is linked into this one extension only.
EXTENSIONS = [
    ("atari", "cypool.atari._pool", ["cypool/atari/_pool.pyx", "cypool/atari/_ale_shim.cpp"],
     {}),
]
