"""VectorEnv's API around stepping: get_attr/set_attr/call against gymnasium envs built with
those kwargs (call of a pool method is refused, pointing at it), per-env kwargs (env_kwargs),
and state snapshots: pickle, copy and get_state/set_state continue bit-identically; copies
that cannot be made and edited pickles that are inconsistent are refused."""
import copy
import pickle

import gymnasium as gym
import numpy as np
import pytest

import cypool


def _same(a, b):
    for k in range(4):
        assert np.array_equal(a[k], b[k]), k


def _actions(space, steps, seed=0):
    space.seed(seed)
    return [space.sample() for _ in range(steps)]


# ------------------------------------------------------------------ get_attr / set_attr
def test_set_attr_equals_gymnasium_envs_built_with_those_kwargs():
    weights = [0.0, 0.05, 0.3, 1.0]
    scales = [0.005, 0.01, 0.1, 0.02]
    env = cypool.make_vec("Hopper-v5", 4, num_threads=2)
    ref = gym.vector.SyncVectorEnv([
        (lambda w=w, s=s: gym.make("Hopper-v5", ctrl_cost_weight=w, reset_noise_scale=s))
        for w, s in zip(weights, scales)])
    try:
        env.set_attr("ctrl_cost_weight", weights)
        env.set_attr("reset_noise_scale", scales)
        assert env.get_attr("ctrl_cost_weight") == tuple(weights)
        assert env.get_attr("reset_noise_scale") == tuple(scales)
        o, _ = env.reset(seed=3)
        o_ref, _ = ref.reset(seed=3)
        assert np.array_equal(o, o_ref)
        for a in _actions(env.action_space, 150):
            _same(env.step(a), ref.step(a))
    finally:
        env.close()
        ref.close()


def test_env_kwargs_equal_gymnasium_envs_built_with_them():
    own = [{"forward_reward_weight": 2.0}, None, {"healthy_reward": 0.5, "max_episode_steps": 30}]
    env = cypool.make_vec("Walker2d-v5", 3, num_threads=2, env_kwargs=own)
    ref = gym.vector.SyncVectorEnv([
        (lambda d=d: gym.make("Walker2d-v5", **(d or {}))) for d in own])
    try:
        assert env.get_attr("max_episode_steps") == (1000, 1000, 30)
        assert env.get_attr("forward_reward_weight") == (2.0, 1.0, 1.0)
        env.reset(seed=0)
        ref.reset(seed=0)
        for a in _actions(env.action_space, 120):
            _same(env.step(a), ref.step(a))
    finally:
        env.close()
        ref.close()


def test_atari_set_attr_equals_a_pool_built_with_it():
    env = cypool.make_vec("Breakout-v5", 3, num_threads=2)
    ref = cypool.make_vec("Breakout-v5", 3, num_threads=2, env_kwargs=[
        {"frame_skip": 2}, {"reward_clip": False}, {"noop_max": 5}])
    try:
        env.set_attr("frame_skip", [2, 4, 4])
        env.set_attr("reward_clip", False, env_ids=[1])
        env.set_attr("noop_max", [5], env_ids=[2])
        assert env.get_attr("frame_skip") == (2, 4, 4)
        env.reset(seed=1)
        ref.reset(seed=1)
        for a in _actions(env.action_space, 200):
            _same(env.step(a), ref.step(a))
    finally:
        env.close()
        ref.close()


def test_attribute_errors_change_nothing():
    env = cypool.make_vec("Hopper-v5", 3, num_threads=1)
    try:
        with pytest.raises(AttributeError, match="ctrl_cost_weight.*max_episode_steps"):
            env.get_attr("no_such_thing")
        with pytest.raises(AttributeError, match="settable"):
            env.set_attr("spec", None)
        with pytest.raises(ValueError, match="3 envs"):
            env.set_attr("ctrl_cost_weight", [0.1, 0.2])
        # env 1's value is bad: envs 0 and 2 keep theirs (all or nothing)
        with pytest.raises((TypeError, ValueError)):
            env.set_attr("ctrl_cost_weight", [0.5, "x", 0.5])
        assert env.get_attr("ctrl_cost_weight") == (1e-3,) * 3
        with pytest.raises(ValueError, match="xml_file"):
            env.set_attr("xml_file", ["hopper.xml", "walker2d.xml", "hopper.xml"])
        with pytest.raises(ValueError, match="observation"):
            env.set_attr("exclude_current_positions_from_observation", False, env_ids=[0])
        assert env.get_attr("xml_file") == ("hopper.xml",) * 3
        assert env.call("max_episode_steps") == (1000,) * 3
        with pytest.raises(TypeError, match="no arguments"):
            env.call("ctrl_cost_weight", 1)
        for bad in ([{}, {}], {"ctrl_cost_weight": 1.0}, [{}, {1: 2}, {}]):
            with pytest.raises((TypeError, ValueError), match="env_kwargs"):
                cypool.make_vec("Hopper-v5", 3, env_kwargs=bad)
        with pytest.raises(ValueError, match="observation"):
            cypool.make_vec("Hopper-v5", 2, env_kwargs=[
                {}, {"exclude_current_positions_from_observation": False}])
    finally:
        env.close()
    async_env = cypool.make_vec("Hopper-v5", 4, num_threads=2, batch_size=2)
    pop = cypool.make_population("Hopper-v5", 2, 2)
    try:
        async_env.async_reset(seed=0)
        with pytest.raises(ValueError, match="in flight"):
            async_env.set_attr("ctrl_cost_weight", 0.5)
        with pytest.raises(ValueError, match="set_member_kwargs"):
            pop.vec.set_attr("ctrl_cost_weight", 0.5)
        pop.set_member_kwargs(1, ctrl_cost_weight=0.25)
        assert pop.vec.get_attr("ctrl_cost_weight") == (1e-3, 1e-3, 0.25, 0.25)
    finally:
        async_env.close()
        pop.close()


def test_np_random_and_spec():
    env = cypool.make_vec("Hopper-v5", 2, num_threads=1, env_kwargs=[{}, {"healthy_reward": 2}])
    try:
        assert env.get_attr("np_random") == (None, None)       # not seeded before a reset
        env.reset(seed=5)
        g = env.get_attr("np_random")[1]
        ref = np.random.Generator(np.random.PCG64(np.random.SeedSequence(6)))
        ref.uniform(-0.005, 0.005, 6), ref.uniform(-0.005, 0.005, 6)   # the reset's draws
        assert g.random() == ref.random()                      # the env's own stream
        spec = env.get_attr("spec")[1]
        assert spec.kwargs["healthy_reward"] == 2 and spec.max_episode_steps == 1000
        assert gym.make_vec(spec.id, num_envs=1).get_attr("healthy_reward") == (1.0,)
    finally:
        env.close()


# ------------------------------------------------------------------ call
@pytest.mark.parametrize("name, args", [
    ("step", (np.zeros(2, np.int64),)), ("step", ()), ("reset", ()), ("reset", (0,)),
    ("close", ()),
])
def test_call_of_a_pool_method_points_at_it(name, args):
    """SyncVectorEnv.call runs a method of each sub-env; a cypool pool steps and resets all
    its envs at once, so call("step", ...) is refused naming env.step (nothing moves)."""
    env = cypool.make_vec("CartPole-v1", 2)
    try:
        env.reset(seed=0)
        before = env.pool.engine.obs.copy()
        with pytest.raises(ValueError, match=f"env\\.{name}\\("):
            env.call(name, *args)
        assert np.array_equal(env.pool.engine.obs, before) and not env._closed
    finally:
        env.close()


def test_call_of_an_unknown_name_with_arguments_is_an_attribute_error():
    env = cypool.make_vec("CartPole-v1", 2)
    try:
        with pytest.raises(AttributeError, match="no attribute 'nothing'"):
            env.call("nothing", 1)
        with pytest.raises(TypeError, match="takes no arguments"):
            env.call("max_episode_steps", 1)
        assert env.call("max_episode_steps") == (500, 500)
    finally:
        env.close()


# ------------------------------------------------------------------ snapshots
CASES = [("Hopper-v5", "next_step", {}), ("Ant-v5", "same_step", {}),
         ("Breakout-v5", "next_step", {"repeat_action_probability": 0.25}),
         ("Pong-v5", "same_step", {"episodic_life": True, "max_episode_steps": 100})]


@pytest.mark.parametrize("how", ["pickle", "deepcopy", "copy"])
@pytest.mark.parametrize("env_id,mode,kw", CASES, ids=[c[0] for c in CASES])
def test_a_copied_pool_continues_bit_identically(env_id, mode, kw, how):
    n = 3
    env = cypool.make_vec(env_id, n, num_threads=2, autoreset_mode=mode, **kw)
    acts = _actions(env.action_space, 520)
    try:
        env.reset(seed=11)
        for a in acts[:20]:
            env.step(a)
        twin = {"pickle": lambda e: pickle.loads(pickle.dumps(e)),
                "deepcopy": copy.deepcopy, "copy": copy.copy}[how](env)
        try:
            assert twin is not env and twin.pool.engine is not env.pool.engine
            ends = 0
            for a in acts[20:]:
                x, y = env.step(a), twin.step(a)
                _same(x, y)
                ends += int((x[2] | x[3]).sum())
                if mode == "same_step" and "final_obs" in x[4]:
                    for i in np.flatnonzero(x[4]["_final_obs"]):
                        assert np.array_equal(x[4]["final_obs"][i], y[4]["final_obs"][i])
            assert ends > 0                       # the 500 steps crossed auto-resets
            s1, s2 = env.episode_statistics(), twin.episode_statistics()
            for k in s1:
                assert np.array_equal(s1[k], s2[k])
        finally:
            twin.close()
        env.step(acts[0])                         # the original is independent of the copy
    finally:
        env.close()


def test_an_async_pool_pickles_once_nothing_is_in_flight():
    n, batch = 4, 2
    env = cypool.make_vec("Hopper-v5", n, num_threads=2, batch_size=batch)
    def run(e, steps):
        """Step every env `steps` times; each env's actions depend only on its own count."""
        count = np.zeros(n, np.int64)
        out = {i: [] for i in range(n)}
        e.send(np.zeros((n, 3)), np.arange(n))
        while count.min() < steps:
            obs, rew, term, trunc, info = e.recv(timeout=30)
            ids = info["env_id"]
            for r, i in enumerate(ids):
                out[int(i)].append((obs[r].copy(), rew[r], term[r], trunc[r]))
                count[i] += 1
            e.send(np.stack([np.full(3, np.sin(count[i] + i)) for i in ids]), ids)
        while e.pool.in_flight.any():                 # n in flight: drain in whole batches
            e.recv(timeout=30)
        return {i: v[:steps] for i, v in out.items()}

    try:
        env.async_reset(seed=2)
        with pytest.raises(ValueError, match="in flight"):
            pickle.dumps(env)
        env.recv(timeout=30), env.recv(timeout=30)
        run(env, 10)
        twin = pickle.loads(pickle.dumps(env))
        try:
            assert twin.is_async and twin.batch_size == batch
            a, b = run(env, 500), run(twin, 500)
            for i in range(n):
                for x, y in zip(a[i], b[i]):
                    assert np.array_equal(x[0], y[0]) and x[1:] == y[1:]
        finally:
            twin.close()
    finally:
        env.close()


def test_copies_that_cannot_be_made_are_refused_clearly():
    """Copies are independent pools (above); a pool not made by make_vec,
    a closed one and one with envs in flight are refused, and the original is untouched."""
    from cypool.families import family_for

    fam = family_for("Hopper-v5").make("Hopper-v5", 2, 1, 1000, {})
    bare = cypool.VectorEnv(fam, env_id="Hopper-v5")
    flying = cypool.make_vec("Hopper-v5", 4, batch_size=2)
    closed = cypool.make_vec("Hopper-v5", 2)
    closed.close()
    try:
        for how in (copy.copy, copy.deepcopy, pickle.dumps):
            with pytest.raises(TypeError, match="make_vec"):
                how(bare)
            with pytest.raises(cypool.ClosedEnvError):
                how(closed)
        flying.async_reset(seed=0)
        for how in (copy.copy, copy.deepcopy, pickle.dumps):
            with pytest.raises(ValueError, match="in flight"):
                how(flying)
        bare.reset(seed=0)             # the originals are untouched
        bare.step(np.zeros((2, 3)))
        flying.recv(timeout=30)
    finally:
        bare.close()
        flying.close()


def test_a_copied_population_continues_bit_identically():
    pop = cypool.make_population("Hopper-v5", 3, 2, num_threads=2, seed=0,
                                 member_kwargs=[{"ctrl_cost_weight": 0.5}, {}, {}])
    try:
        pop.reset()
        zero = np.zeros((3, 2, 3))
        for _ in range(30):
            pop.step(zero + 0.3)
        pop.set_member_kwargs(2, healthy_reward=3.0)
        twin = pickle.loads(pickle.dumps(pop))
        try:
            assert twin.member_kwargs(2)["healthy_reward"] == 3.0
            acts = np.random.default_rng(1).uniform(-1, 1, (500, 3, 2, 3))
            for a in acts:
                _same(pop.step(a), twin.step(a))
            r1, r2 = pop.recent_episodes(), twin.recent_episodes()
            assert r1["count"].sum() > 0
            assert np.array_equal(r1["count"], r2["count"])
            for k in ("return", "length"):   # envs ending in one step may claim slots in
                # either order (they run on different threads): compare as multisets
                assert np.array_equal(np.sort(r1[k], axis=1), np.sort(r2[k], axis=1),
                                      equal_nan=True), k
            twin.reset_member(1)                  # the seeding tree goes on identically
            pop.reset_member(1)
            _same(pop.step(acts[0]), twin.step(acts[0]))
        finally:
            twin.close()
    finally:
        pop.close()


def test_set_state_on_a_subset_leaves_the_others_untouched():
    env = cypool.make_vec("Ant-v5", 4, num_threads=2)
    acts = _actions(env.action_space, 60)
    try:
        env.reset(seed=0)
        for a in acts[:10]:
            env.step(a)
        saved = env.get_state([1, 2])
        for a in acts[10:40]:
            env.step(a)
        others = pickle.dumps(env.get_state([0, 3]))
        env.set_state(saved)                      # back into envs 1 and 2
        assert pickle.dumps(env.get_state([0, 3])) == others
        replay = cypool.make_vec("Ant-v5", 4, num_threads=1)
        replay.reset(seed=0)
        for a in acts[:10]:
            replay.step(a)
        for a in acts[40:60]:
            x, y = env.step(a), replay.step(a)
            for k in range(4):
                assert np.array_equal(x[k][1:3], y[k][1:3])
        replay.close()
        env.set_state(saved, env_ids=[3, 0])      # into other envs
        with pytest.raises(ValueError, match="1 env ids for a state of 2"):
            env.set_state(saved, env_ids=[0])
        with pytest.raises(ValueError, match="Ant-v5 envs cannot be given"):
            hop = cypool.make_vec("Hopper-v5", 2)
            hop.reset(seed=0)
            try:
                hop.set_state(saved)
            finally:
                hop.close()
        with pytest.raises(ValueError, match="not a state"):
            env.set_state({"envs": []})
    finally:
        env.close()


# ------------------------------------------------------------------ edited pickles
def _snapshot(obj):
    fn, (snap,) = obj.__reduce_ex__(4)
    return fn, snap


def _partial_state(snap, ids):
    st = snap["state"]
    return {**st, "env_ids": list(ids), "envs": [st["envs"][i] for i in ids],
            "seeded": [st["seeded"][i] for i in ids]}


POOL_EDITS = [
    ("reset without state", lambda s: {**s, "state": None, "has_reset": True}, "state"),
    ("state of env 0 only", lambda s: {**s, "state": _partial_state(s, [0])}, "every env"),
    ("state of envs 0 and 2", lambda s: {**s, "state": _partial_state(s, [0, 2])}, "every env"),
    ("state but not reset", lambda s: {**s, "has_reset": False}, "has_reset"),
    ("has_reset not a bool", lambda s: {**s, "has_reset": "yes"}, "has_reset"),
    ("seeded too short", lambda s: {**s, "state": {**s["state"], "seeded": [True, True]}},
     "seeded"),
    ("seeded not bools", lambda s: {**s, "state": {**s["state"],
                                                   "seeded": ["x", True, True, True]}},
     "seeded"),
    ("env_kw too short", lambda s: {**s, "env_kw": s["env_kw"][:2]}, "env_kw"),
    ("limits too short", lambda s: {**s, "limits": s["limits"][:2]}, "limits"),
    ("limit out of range", lambda s: {**s, "limits": [-5] * 4}, "max_episode_steps"),
    ("missing key", lambda s: {k: v for k, v in s.items() if k != "has_reset"}, "has_reset"),
]


@pytest.mark.parametrize("label,edit,match", POOL_EDITS, ids=[e[0] for e in POOL_EDITS])
def test_an_edited_pool_pickle_that_is_inconsistent_is_refused(label, edit, match):
    env = cypool.make_vec("CartPole-v1", 4, num_threads=1, seed=0)
    try:
        env.reset()
        env.step(np.zeros(4, np.int64))
        fn, snap = _snapshot(env)
        with pytest.raises((ValueError, TypeError), match=match):
            fn(edit(copy.deepcopy(snap)))
        twin = fn(copy.deepcopy(snap))            # the unedited snapshot restores
        try:
            _same(env.step(np.ones(4, np.int64)), twin.step(np.ones(4, np.int64)))
        finally:
            twin.close()
    finally:
        env.close()


def test_an_edited_population_pickle_that_is_inconsistent_is_refused():
    pop = cypool.make_population("CartPole-v1", 2, 2, num_threads=1, seed=0)
    try:
        fn, fresh = _snapshot(pop)                # never reset: no state
        seeder = (np.ones(4, np.bool_), fresh["seeder"][1])
        with pytest.raises(ValueError, match="seeder"):   # envs "seeded" with no stream
            fn({**copy.deepcopy(fresh), "seeder": seeder})
        with pytest.raises(ValueError, match="state"):
            fn({**copy.deepcopy(fresh), "has_reset": True})
        pop.reset()
        pop.step(np.zeros((2, 2), np.int64))
        fn, snap = _snapshot(pop)
        with pytest.raises(ValueError, match="has_reset"):
            fn({**copy.deepcopy(snap), "has_reset": False})
        with pytest.raises(ValueError, match="every env"):
            fn({**copy.deepcopy(snap), "state": _partial_state(snap, [0, 1])})
        twin = fn(copy.deepcopy(snap))
        try:
            a = np.ones((2, 2), np.int64)
            _same(pop.step(a), twin.step(a))
        finally:
            twin.close()
    finally:
        pop.close()
