# The MiniGrid extensions, gathered by setup.py: (builder, module, sources, options).
EXTENSIONS = [
    ("core", "cypool.minigrid._minigrid", ["cypool/minigrid/_minigrid.pyx"], dict(random=True)),
]
