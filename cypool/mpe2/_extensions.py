# The mpe2 extensions, gathered by setup.py: (builder, module, sources, options).
EXTENSIONS = [
    ("core", "cypool.mpe2._mpe", ["cypool/mpe2/_mpe.pyx"], dict(random=True)),
]
