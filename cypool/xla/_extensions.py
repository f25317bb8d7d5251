# The xla extension, gathered by setup.py: (builder, module, sources, options). It needs no
# jax (the FFI handler that calls it is compiled on the first env.xla(), see _build.py).
EXTENSIONS = [
    ("core", "cypool.xla._native", ["cypool/xla/_native.pyx"], {}),
]
