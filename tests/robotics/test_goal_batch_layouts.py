"""compute_reward's fast path (HER's C-contiguous (n, g) float64 batch, read in place by the
kernels) and the general path it hands everything else to (strided, Fortran-ordered,
byte-swapped, read-only, one-row and empty batches), bit for bit against the reference's own
compute_reward: same dtype, shape and bytes (-0.0 included). NaN or infinite goals are
refused in either argument, at any position, with the general path's message."""
import numpy as np
import pytest

import cypool

from _fetch_ref import reference  # noqa: E402  (patches the reference: PR #330)

IDS = ["FetchPush-v4", "FetchReachDense-v4", "PointMaze_UMaze-v3", "PointMaze_OpenDense-v3",
       "HandReach-v3", "HandReachDense-v3", "HandManipulateBlockRotateZ-v1",
       "HandManipulateEggDense-v1", "HandManipulateBlockFull-v1"]


def bits_equal(x, y):
    assert type(x) is type(y), (type(x), type(y))
    x, y = np.asarray(x), np.asarray(y)
    assert x.dtype == y.dtype and x.shape == y.shape, (x.dtype, y.dtype, x.shape, y.shape)
    assert x.tobytes() == y.tobytes()


def layouts(a, d):
    """(name, achieved, desired): the fast path's layout first, then the general path's."""
    yield "c-contiguous", a, d
    wide = np.zeros((a.shape[0], 2 * a.shape[1]))
    wide[:, ::2] = a
    yield "strided", wide[:, ::2], d
    yield "fortran", np.asfortranarray(a), np.asfortranarray(d)
    yield "byteswapped", a.astype(">f8"), d
    ro = a.copy()
    ro.setflags(write=False)
    yield "read-only", ro, d
    yield "one row", a[:1], d[:1]
    yield "empty", a[:0], d[:0]
    yield "one pair", a[0], d[0]


@pytest.fixture(scope="module", params=IDS)
def pair(request):
    env_id = request.param
    mine = cypool.make_vec(env_id, 2)
    ref = reference(env_id, 1)
    obs, _ = mine.reset(seed=3)
    ref.reset(seed=3)
    yield env_id, mine, ref.envs[0].unwrapped, obs
    mine.close()
    ref.close()


def goals_near(obs, rng, n=300):
    """Goal pairs around the envs' own goals, at scales around every threshold."""
    g = obs["desired_goal"][rng.integers(0, len(obs["desired_goal"]), n)]
    scale = np.exp(rng.uniform(np.log(1e-4), np.log(1.0), (n, 1)))
    a = g + rng.normal(0, 1, g.shape) * scale
    if g.shape[1] == 7:                     # unit quaternions, as the envs' goals
        a[:, 3:] /= np.linalg.norm(a[:, 3:], axis=-1, keepdims=True)
    return np.ascontiguousarray(a), np.ascontiguousarray(g)


def test_every_layout_is_the_references(pair):
    env_id, mine, ref, obs = pair
    rng = np.random.default_rng(0)
    a, d = goals_near(obs, rng)
    want0 = ref.compute_reward(a, d, {})
    if "Dense" not in env_id:                   # the batch has successes and failures
        assert 0 < np.count_nonzero(want0 == want0.max()) < len(want0)
    for name, x, y in layouts(a, d):
        got = mine.call("compute_reward", x, y, {})
        want = ref.compute_reward(x, y, {})
        assert len(got) == 2
        for g in got:
            bits_equal(g, want)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_nonfinite_goals_refused_in_either_argument(pair, bad):
    _, mine, _, obs = pair
    a, d = goals_near(obs, np.random.default_rng(1), 64)
    for which, pos in (("achieved_goal", (0, 0)), ("desired_goal", (63, -1)),
                       ("achieved_goal", (31, 1))):
        x, y = a.copy(), d.copy()
        (x if which == "achieved_goal" else y)[pos] = bad
        with pytest.raises(ValueError, match=f"{which} contains NaN or infinite"):
            mine.call("compute_reward", x, y, {})
        with pytest.raises(ValueError, match=f"{which} contains NaN or infinite"):
            mine.call("compute_reward", np.asfortranarray(x), np.asfortranarray(y), {})


def test_huge_finite_goals_are_not_refused(pair):
    """Finite values whose squares overflow give the reference's inf distances, not an
    error (the finiteness check is on the inputs)."""
    _, mine, ref, obs = pair
    a = np.full((4, obs["desired_goal"].shape[1]), 1e300)
    d = -a
    got = mine.call("compute_reward", a, d, {})[0]
    with np.errstate(over="ignore", invalid="ignore"):
        want = ref.compute_reward(a, d, {})
    bits_equal(got, want)
