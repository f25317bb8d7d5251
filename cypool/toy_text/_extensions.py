# The toy-text extensions, gathered by setup.py: (builder, module, sources, options).
EXTENSIONS = [
    ("core", f"cypool.toy_text.{name}", [f"cypool/toy_text/{name}.pyx"], dict(random=True))
    for name in ("_frozen_lake", "_taxi", "_cliff_walking", "_blackjack")
]
