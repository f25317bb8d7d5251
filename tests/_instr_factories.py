"""Step factories that tests/test_instructions.py counts under valgrind. A module of their own
so that the valgrind child imports only numpy, not pytest or cypool."""
import numpy as np


def multiply_step(n=100_000):
    """One numpy multiply over n float64s per call."""
    a = np.ones(n)

    def step():
        np.multiply(a, 1.0, out=a)
    return step


def multiply_step_5pc_more():
    """multiply_step's work plus 5%: what the CLI test's check must catch."""
    return multiply_step(105_000)
