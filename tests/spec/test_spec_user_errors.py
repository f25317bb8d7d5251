"""What a user's spec gets told and given (docs/custom_envs.md): a Dict observation whose
pool writes its keys in another order than the space's (gymnasium's Dict sorts a plain
dict's keys), a pool module whose package is imported from its unbuilt source folder, and
the render hook's kwargs, which are those of the envs it draws. On tests/spec/_counter.pyx."""
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import cypool
import cypool.api
from cypool.api import FamilySpec, Kwarg

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parent))
from _buildext import build_extension, import_built  # noqa: E402

ACT = gym.spaces.MultiDiscrete([3, 4])
BOX = gym.spaces.Box(-np.inf, np.inf, (2,), np.float32)


@pytest.fixture(scope="module")
def counter():
    out = build_extension("_counter", HERE / "_counter.pyx", cypool.api.extension_kwargs(),
                          Path.home() / ".cache" / "cypool" / "test-spec")
    return import_built("_counter", out)


@pytest.fixture
def register():
    made = []

    def reg(spec):
        cypool.api.register_spec(spec)
        made.append(spec.env_id)
        return spec.env_id

    yield reg
    for env_id in made:
        cypool.api.unregister_env(env_id)


def test_gymnasium_dict_sorts_a_plain_dicts_keys():
    """The fact the docs state (gymnasium 1.4): a plain dict is sorted; pairs, an
    OrderedDict, keywords and sort_keys=False keep their order."""
    from collections import OrderedDict
    d = gym.spaces.Discrete(2)
    assert list(gym.spaces.Dict({"z": d, "a": d}).spaces) == ["a", "z"]
    assert list(gym.spaces.Dict([("z", d), ("a", d)]).spaces) == ["z", "a"]
    assert list(gym.spaces.Dict(OrderedDict([("z", d), ("a", d)])).spaces) == ["z", "a"]
    assert list(gym.spaces.Dict(z=d, a=d).spaces) == ["z", "a"]
    assert list(gym.spaces.Dict({"z": d, "a": d}, sort_keys=False).spaces) == ["z", "a"]


def test_dict_in_another_order_than_the_pools_says_gymnasium_sorted_it(counter, register):
    # the pool writes z (an int64 count) to "obs" and the box to "obs.1": a plain dict
    # {"z": ..., "1": ...} is sorted to ("1", "z"), whose first key is the box
    obs = gym.spaces.Dict({"z": gym.spaces.Discrete(7), "1": BOX})
    assert list(obs.spaces) == ["1", "z"]
    env_id = register(FamilySpec("SpecDictOrder-v0", counter.CounterPool, obs, ACT,
                                 kwargs={"n": Kwarg(7, scope="pool")}))
    with pytest.raises(TypeError, match="sorts the keys of a plain dict") as info:
        cypool.make_vec(env_id, 2)
    msg = str(info.value)
    assert "'1' -> 'obs', 'z' -> 'obs.z'" in msg
    assert 'declares an output "obs.1", so it puts another key first' in msg
    assert "list of (key, space) pairs" in msg


def test_dict_of_pairs_keeps_the_pools_order(counter, register):
    obs = gym.spaces.Dict([("z", gym.spaces.Discrete(7)), ("1", BOX)])
    env_id = register(FamilySpec("SpecDictPairs-v0", counter.CounterPool, obs, ACT,
                                 kwargs={"n": Kwarg(7, scope="pool")}))
    env = cypool.make_vec(env_id, 2)
    o, _ = env.reset(seed=0)
    assert list(o) == ["z", "1"] and o["z"].dtype == np.int64 and o["1"].shape == (2, 2)
    assert np.array_equal(o["1"][:, 0], o["z"])       # reset writes [c, -c]
    env.close()


def test_pool_module_imported_from_its_unbuilt_source_folder(tmp_path, monkeypatch, register):
    pkg = tmp_path / "mygrid_src_only"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "_grid.pyx").write_text("# the extension's source, never built here\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    env_id = register(FamilySpec("SpecUnbuilt-v0", "mygrid_src_only._grid:GridPool",
                                 gym.spaces.Discrete(3), gym.spaces.Discrete(2)))
    with pytest.raises(ModuleNotFoundError, match="is not built here") as info:
        cypool.make_vec(env_id, 1)
    msg = str(info.value)
    assert str(pkg / "_grid.pyx") in msg and "build_ext --inplace" in msg
    assert "outside the source folder" in msg
    assert info.value.name == "mygrid_src_only._grid"
    # no source there: the plain error, unchanged
    (pkg / "_grid.pyx").unlink()
    with pytest.raises(ModuleNotFoundError, match="No module named 'mygrid_src_only._grid'"):
        cypool.make_vec(env_id, 1)
    sys.modules.pop("mygrid_src_only", None)


def _render(engine, ids, mode, kwargs):
    return [f"env {i}: unused={kwargs['unused']}" for i in ids]


def _no_op_configure(fam, ids, kw):
    """Envs may have their own kwargs (the counter reads only the pool-scope n)."""


def test_render_hook_gets_each_envs_own_kwargs(counter, register):
    obs = gym.spaces.Tuple((gym.spaces.Discrete(7), BOX))
    env_id = register(FamilySpec("SpecRenderKw-v0", counter.CounterPool, obs, ACT,
                                 kwargs={"n": Kwarg(7, scope="pool"), "unused": Kwarg(0.5)},
                                 configure=_no_op_configure, render=_render,
                                 render_modes=("ansi",)))
    env = cypool.make_vec(env_id, 3, render_mode="ansi", unused=0.25,
                          env_kwargs=[{"unused": 0.75}, None, {"unused": 1.5}])
    env.reset(seed=0)
    assert env.render() == ("env 0: unused=0.75", "env 1: unused=0.25", "env 2: unused=1.5")
    assert env.render(env_ids=[2, 0]) == ("env 2: unused=1.5", "env 0: unused=0.75")
    env.set_attr("unused", [0.125, 0.125, 0.25])
    assert env.render() == ("env 0: unused=0.125", "env 1: unused=0.125", "env 2: unused=0.25")
    env.close()
    env = cypool.make_vec(env_id, 2, render_mode="ansi")     # no env of its own: the pool's
    env.reset(seed=0)
    assert env.render() == ("env 0: unused=0.5", "env 1: unused=0.5")
    env.close()


def test_render_hook_is_called_once_per_distinct_setting(counter, register):
    calls = []

    def render(engine, ids, mode, kwargs):
        calls.append((ids.tolist(), kwargs["unused"]))
        return [str(kwargs["unused"])] * len(ids)

    obs = gym.spaces.Tuple((gym.spaces.Discrete(7), BOX))
    env_id = register(FamilySpec("SpecRenderCalls-v0", counter.CounterPool, obs, ACT,
                                 kwargs={"n": Kwarg(7, scope="pool"), "unused": Kwarg(0.5)},
                                 configure=_no_op_configure, render=render,
                                 render_modes=("ansi",)))
    # equal settings in distinct dicts: one call; envs 1 and 3 share another
    env = cypool.make_vec(env_id, 4, render_mode="ansi",
                          env_kwargs=[{"unused": 1.0}, None, {"unused": 1.0}, None])
    env.reset(seed=0)
    assert env.render() == ("1.0", "0.5", "1.0", "0.5")
    assert sorted(calls) == [([0, 2], 1.0), ([1, 3], 0.5)]
    env.close()
