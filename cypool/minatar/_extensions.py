# The MinAtar extension, gathered by setup.py: (builder, module, sources, options).
EXTENSIONS = [
    ("core", "cypool.minatar._minatar", ["cypool/minatar/_minatar.pyx"], dict(random=True)),
]
