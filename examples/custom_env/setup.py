from Cython.Build import cythonize
from setuptools import Extension, setup

import cypool.api

ext = Extension("corridor._corridor", ["corridor/_corridor.pyx"], **cypool.api.extension_kwargs())
setup(ext_modules=cythonize([ext], include_path=cypool.api.get_include(),
                            compiler_directives=cypool.api.cython_directives()))
