# The classic-control extensions, gathered by setup.py: (builder, module, sources, options).
EXTENSIONS = [
    ("core", "cypool.classic._cartpole", ["cypool/classic/_cartpole.pyx"], dict(random=True)),
    ("core", "cypool.classic._mountain_car", ["cypool/classic/_mountain_car.pyx"],
     dict(random=True)),
    # numpy's scalar ** calls libm's pow/powf, which gcc would fold into x * x
    ("core", "cypool.classic._pendulum", ["cypool/classic/_pendulum.pyx"],
     dict(random=True, flags=["-fno-builtin-pow", "-fno-builtin-powf"])),
    # gcc 12's SLP vectorizer drops the float32 rounding of a pair of doubles stored as
    # (double)(float)x (checked in assembly): the float32 states are built without it
    ("core", "cypool.classic._acrobot", ["cypool/classic/_acrobot.pyx"],
     dict(random=True, flags=["-fno-builtin-pow", "-fno-tree-slp-vectorize"])),
    ("core", "cypool.classic._mountain_car_continuous",
     ["cypool/classic/_mountain_car_continuous.pyx"],
     dict(random=True, flags=["-fno-builtin-pow", "-fno-tree-slp-vectorize"])),
]
