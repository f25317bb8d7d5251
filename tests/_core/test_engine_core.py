"""The engine and its queue, tested with the Walk family (no simulator): the family is
compiled and registered from the test suite alone, and gets sync, async, gymnasium's three
autoreset modes, populations, thread slots, named outputs and state snapshots from the
engine, bit-identical to the same env written in Python under gymnasium's SyncVectorEnv."""
import pickle
import threading

import gymnasium as gym
import numpy as np
import pytest

import cypool
from cypool.vector import parse_autoreset_mode
from walk_family import pix_of, reference

MODES = ["next_step", "same_step", "disabled"]


def actions(steps, n, seed=0):
    return np.random.default_rng(seed).uniform(-1, 1, (steps, n, 1))


def compare(got, ref):
    for k in range(4):
        assert np.array_equal(got[k], ref[k]), k
    for key in ("x", "_x"):
        assert np.array_equal(got[4][key], ref[4][key]), key


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("threads", [1, 2])
def test_sync_matches_gymnasium_in_every_autoreset_mode(walk, mode, threads):
    n, steps = 5, 120
    env = cypool.make_vec("Walk-v0", n, num_threads=threads, autoreset_mode=mode,
                          max_episode_steps=30, bound=1.5)
    ref = reference(n, parse_autoreset_mode(mode), limit=30, bound=1.5)
    try:
        o, info = env.reset(seed=3)
        o_ref, info_ref = ref.reset(seed=3)
        assert np.array_equal(o, o_ref) and np.array_equal(info["x"], info_ref["x"])
        ends = 0
        for a in actions(steps, n):
            got, want = env.step(a), ref.step(a)
            compare(got, want)
            if mode == "same_step" and "final_obs" in want[4]:
                for i in np.flatnonzero(want[4]["_final_obs"]):
                    assert np.array_equal(got[4]["final_obs"][i], want[4]["final_obs"][i])
            done = got[2] | got[3]
            ends += int(done.sum())
            if mode == "disabled" and done.any():
                o, _ = env.reset(options={"reset_mask": done})
                o_ref, _ = ref.reset(options={"reset_mask": done})
                assert np.array_equal(o, o_ref)
        assert ends > n              # episodes ended, by termination and truncation
    finally:
        env.close()
        ref.close()


def test_async_batches_follow_each_envs_own_trajectory(walk):
    n, batch = 6, 2
    env = cypool.make_vec("Walk-v0", n, num_threads=2, batch_size=batch, bound=1.0)
    refs = [reference(1, gym.vector.AutoresetMode.NEXT_STEP, bound=1.0) for _ in range(n)]
    rng = np.random.default_rng(1)
    expect = {}              # env id -> what its next recv must return
    try:
        env.async_reset(seed=10)
        for i, r in enumerate(refs):
            expect[i] = (r.reset(seed=10 + i)[0][0],)
        received = 0
        for _ in range(300):
            obs, rew, term, trunc, info = env.recv(timeout=30)
            ids = info["env_id"]
            assert len(ids) == batch
            for r, i in enumerate(ids):
                want = expect.pop(int(i))
                assert np.array_equal(obs[r], want[0])
                if len(want) > 1:
                    assert (rew[r], term[r], trunc[r]) == want[1:]
                    received += 1
            a = rng.uniform(-1, 1, (len(ids), 1))
            env.send(a, ids)
            for r, i in enumerate(ids):
                out = refs[int(i)].step(a[r:r + 1])
                expect[int(i)] = (out[0][0], out[1][0], out[2][0], out[3][0])
        assert received >= 290 * batch
        assert env.pool.engine.episodes.sum() > 0
    finally:
        env.close()
        for r in refs:
            r.close()


def test_thread_slots_run_once_per_thread_and_are_unique(walk):
    for batch, threads in ((None, 2), (3, 2), (None, 1)):
        env = cypool.make_vec("Walk-v0", 6, num_threads=threads, batch_size=batch, seed=0)
        e = env.pool.engine
        async_ = batch is not None
        team = threads if async_ else threads - 1
        assert e.num_slots == 1 + team
        assert e.slot_inits[:e.num_slots].tolist() == [1] * e.num_slots
        assert not e.slot_inits[e.num_slots:].any()
        owners = e.slot_owner[1:e.num_slots]
        assert len(set(owners.tolist())) == team            # one OS thread per team slot
        if async_:
            env.async_reset(seed=0)
            for _ in range(100):
                _, _, _, _, info = env.recv(timeout=30)
                env.send(np.zeros((batch, 1)), info["env_id"])
        else:
            env.reset(seed=0)
            for _ in range(100):
                env.step(np.zeros((6, 1)))
        steps = e.slot_steps[:e.num_slots]
        assert not e.slot_foreign.any()                     # a team slot never moves threads
        # every env step and reset ran on exactly one slot (an ended episode's reset at most once)
        assert e.env_steps.sum() + 6 <= steps.sum() <= e.env_steps.sum() + 6 + e.episodes.sum()
        if async_:
            assert steps[1:].sum() > 0 and steps[0] == 0     # the caller only runs the policy
        env.close()
        assert e.slot_finis[:e.num_slots].tolist() == [1] * e.num_slots


@pytest.mark.parametrize("slot", [0, 1])
def test_a_failing_thread_init_refuses_the_pool_cleanly(walk, slot):
    before = threading.active_count()
    for _ in range(5):
        with pytest.raises(RuntimeError, match=f"slot {slot} refuses"):
            cypool.make_vec("Walk-v0", 4, num_threads=2, fail_slot=slot)
    assert threading.active_count() == before              # no team left running
    env = cypool.make_vec("Walk-v0", 4, num_threads=2)      # the process is fine
    env.reset(seed=0)
    env.close()


def test_named_outputs_and_their_final_twins(walk):
    env = cypool.make_vec("Walk-v0", 4, num_threads=2, autoreset_mode="same_step", bound=0.8,
                          copy=False)
    e = env.pool.engine
    assert e.output_names == ("obs", "pix")
    try:
        env.reset(seed=0)
        finals = 0
        for a in actions(60, 4, seed=2):
            obs, _, term, trunc, info = env.step(a)
            for i in range(4):
                assert np.array_equal(e.outputs["pix"][i], pix_of(obs[i, 0]))
            for i in np.flatnonzero(term | trunc):
                final = info["final_obs"][i]
                assert np.array_equal(e.final_outputs["pix"][i], pix_of(final[0]))
                assert np.array_equal(e.final_outputs["obs"][i], final)
                finals += 1
        assert finals > 0
    finally:
        env.close()


def test_state_round_trip_and_transfer(walk):
    n = 4
    env = cypool.make_vec("Walk-v0", n, num_threads=2, bound=1.2, max_episode_steps=20)
    other = cypool.make_vec("Walk-v0", n, num_threads=1, bound=1.2, max_episode_steps=20)
    a = actions(80, n, seed=5)
    try:
        env.reset(seed=1)
        for t in range(10):
            env.step(a[t])
        e = env.pool.engine
        snap = pickle.loads(pickle.dumps(e.get_state(None)))
        first = [env.step(a[t]) for t in range(10, 80)]
        e.set_state(None, snap)
        again = [env.step(a[t]) for t in range(10, 80)]
        for x, y in zip(first, again):
            compare(x, y)
        # into another pool (other thread count), envs permuted: each follows its source
        other.reset(seed=99)
        perm = [2, 0, 3, 1]
        other.pool.engine.set_state(perm, snap)
        moved = [other.step(a[t][np.argsort(perm)]) for t in range(10, 80)]
        for x, y in zip(first, moved):
            for k in range(4):
                assert np.array_equal(x[k], y[k][perm])
    finally:
        env.close()
        other.close()


def test_state_is_checked_before_any_env_changes(walk):
    env = cypool.make_vec("Walk-v0", 3, num_threads=1)
    hop = cypool.make_vec("Hopper-v5", 3, num_threads=1)
    try:
        env.reset(seed=0)
        hop.reset(seed=0)
        good = env.pool.engine.get_state(None)
        before = env.pool.engine.get_state(None)
        env.step(np.zeros((3, 1)))
        after = env.pool.engine.get_state(None)
        bad_sig = hop.pool.engine.get_state([0])[0]
        for states, err in (([after[0], after[1], bad_sig], "different kind of env"),
                            ([after[0], {"version": 0}, after[2]], "not an env state"),
                            (after[:2], "3 env ids but 2 states")):
            with pytest.raises(ValueError, match=err):
                env.pool.engine.set_state(None, states)
            now = env.pool.engine.get_state(None)
            assert pickle.dumps(now) == pickle.dumps(after)      # nothing changed
        with pytest.raises(ValueError, match="distinct"):
            env.pool.engine.set_state([0, 0, 1], good)
        with pytest.raises(IndexError):
            env.pool.engine.set_state([0, 1, 5], good)
        assert before != after
        fresh = cypool.make_vec("Walk-v0", 2, num_threads=1)
        with pytest.raises(ValueError, match="never reset"):
            fresh.pool.engine.get_state(None)
        fresh.close()
    finally:
        env.close()
        hop.close()


def test_population_of_walk_members(walk):
    pop = cypool.make_population("Walk-v0", 3, 2, num_threads=2,
                                 member_kwargs=[{"bound": 0.5}, {"bound": 1.0}, {"bound": 4.0}])
    try:
        assert pop.vec.pool.engine.bounds.tolist() == [0.5, 0.5, 1.0, 1.0, 4.0, 4.0]
        pop.reset(seed=0)
        for _ in range(100):
            pop.step(np.full((3, 2, 1), 0.3))
        eps = pop.vec.pool.engine.episodes.reshape(3, 2).sum(axis=1)
        assert eps[0] > eps[1] > eps[2]         # a tighter bound ends episodes sooner
    finally:
        pop.close()


def test_population_members_async(walk):
    pop = cypool.make_population("Walk-v0", 4, 3, num_threads=2, member_batch=2)
    try:
        pop.async_reset(seed=0)
        seen = set()
        for _ in range(50):
            obs, _, _, _, info = pop.recv(timeout=30)
            members = info["member_id"]
            assert obs.shape == (2, 3, 2)
            seen.update(int(m) for m in members)
            pop.send(np.zeros((len(members), 3, 1)), members)
        assert seen == {0, 1, 2, 3}
    finally:
        pop.close()


def test_engine_errors_and_queue_misuse(walk):
    env = cypool.make_vec("Walk-v0", 4, num_threads=2, batch_size=2)
    try:
        env.async_reset(seed=0)
        _, _, _, _, info = env.recv(timeout=30)
        ids = info["env_id"]
        with pytest.raises(ValueError, match="in flight"):       # overflow: sent twice
            others = np.setdiff1d(np.arange(4), ids)
            env.send(np.zeros((2, 1)), others)
        a = np.zeros((2, 1))
        a[0, 0] = np.nan
        env.send(a, ids)
        errors, got = [], []
        for _ in range(2):                       # four in flight: two batches of two
            try:
                got += env.recv(timeout=30)[4]["env_id"].tolist()
            except cypool.EngineError as e:
                errors.append(e)
                got += [] if e.result is None else e.result[4]["env_id"].tolist()
        assert len(errors) == 1 and errors[0].env_ids == [int(ids[0])]
        assert "NaN action" in str(errors[0])
        assert sorted(got + [int(ids[0])]) == [0, 1, 2, 3]      # nobody else lost
        env.send(np.zeros((4, 1)), np.arange(4))                # the failed env restarts
        env.recv(timeout=30)
    finally:
        env.close()                                             # stop with work in flight
    with pytest.raises(cypool.ClosedEnvError):
        env.recv(timeout=1)
