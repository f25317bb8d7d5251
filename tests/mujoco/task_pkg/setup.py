from Cython.Build import cythonize
from setuptools import Extension, setup

import cypool.api
import cypool.mujoco

ext = Extension("orbit._orbit", ["orbit/_orbit.pyx"], **cypool.mujoco.extension_kwargs())
setup(ext_modules=cythonize([ext], include_path=cypool.mujoco.extension_kwargs()["include_dirs"],
                            compiler_directives=cypool.api.cython_directives()))
