"""Atari family: ALE's C++ core driven from nogil loops, with EnvPool's preprocessing options.

Importing this package is cheap: cypool.registration reads the ids from
cypool.atari.games; the compiled pool (cypool.atari._pool, GPL-2.0 through ALE) and
cypool.atari.family (the specs) are imported only when an Atari env is made.
"""
