"""The draws the MinAtar pool makes (MT19937 through numpy's C distributions) equal
RandomState's rand/randint, one by one and interleaved, from a stream installed as the seed
hook installs it."""
import numpy as np

from cypool.minatar._minatar import _draws_check


def _stream(seed):
    bg = np.random.MT19937()
    bg.state = np.random.RandomState(seed).get_state(legacy=False)
    return bg


def test_rand_randint_interleaved_equal_randomstate():
    # kinds: 0 rand(), 1 randint(2), 2 randint(1, 9), 3 randint(n) for n in 1..8,
    # 4 randint(1, 6, 8) (8 values), 5 rand(8)
    kinds = np.random.default_rng(1).integers(0, 6, 400)
    ns = np.random.default_rng(2).integers(1, 9, 400)
    for seed in (0, 1, 12345, 2**32 - 1):
        rs = np.random.RandomState(seed)
        want = []
        for k, n in zip(kinds, ns):
            if k == 0:
                want.append(rs.rand())
            elif k == 1:
                want.append(float(rs.randint(2)))
            elif k == 2:
                want.append(float(rs.randint(low=1, high=9)))
            elif k == 3:
                want.append(float(rs.randint(int(n))))
            elif k == 4:
                want.extend(float(v) for v in rs.randint(1, 6, 8))
            else:
                want.extend(rs.rand(8).tolist())
        got = _draws_check(_stream(seed), kinds.astype(np.int64), ns.astype(np.int64))
        assert np.array_equal(np.array(want), got)
