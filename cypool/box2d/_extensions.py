# The Box2D extensions, gathered by setup.py: (builder, module, sources, options). The "box2d"
# builder links Box2D's C++ core, built once from the box2d-py sdist into a cached static
# library (buildtools/box2d_build.py).
EXTENSIONS = [
    ("box2d", "cypool.box2d._lunar_lander", ["cypool/box2d/_lunar_lander.pyx"], {}),
    ("box2d", "cypool.box2d._bipedal_walker", ["cypool/box2d/_bipedal_walker.pyx"], {}),
    ("box2d", "cypool.box2d._car_racing", ["cypool/box2d/_car_racing.pyx"], {}),
]
