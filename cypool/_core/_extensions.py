# The core extensions, gathered by setup.py as each family folder's are: (builder, module,
# sources, options). The engine, OpenMP's facts, and the front ends' compiled call().
EXTENSIONS = [
    ("core", "cypool._core._openmp", ["cypool/_core/_openmp.pyx"], {}),
    ("core", "cypool._core._engine", ["cypool/_core/_engine.pyx"], {}),
    ("core", "cypool._core._call", ["cypool/_core/_call.pyx"], {}),
]
