"""examples/pbt_td3.py: the batched TD3 learner against P separate learners and against a
plain torch.nn / torch.optim.Adam TD3, per-member replay buffers, the exploit copy, and the
example's --quick run."""
import importlib.util
import math
import os
import subprocess
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLE = os.path.join(ROOT, "examples", "pbt_td3.py")


def _load():
    spec = importlib.util.spec_from_file_location("pbt_td3", EXAMPLE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


td3 = _load()
OBS, ACT = 5, 2
LOW, HIGH = np.array([-1.0, -2.0]), np.array([1.0, 0.5])     # scale and centre both matter


def hyperparams(P):
    return [{"lr_actor": 1e-3 * (k + 1), "lr_critic": 3e-3 / (k + 1), "expl_noise": 0.1,
             "target_noise": 0.1 + 0.15 * k, "gamma": 0.9 + 0.03 * k} for k in range(P)]


def filled(P=3, E=2, steps=40, seed=0, hidden=(16, 16), batch=8, capacity=64):
    """A TD3Population whose buffers hold random transitions, distinct per member."""
    torch.set_num_threads(1)
    ag = td3.TD3Population(P, OBS, LOW, HIGH, hyperparams(P), hidden=hidden,
                           batch_size=batch, capacity=capacity, seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        ag.add(rng.standard_normal((P, E, OBS)), rng.uniform(-1, 0.5, (P, E, ACT)),
               rng.standard_normal((P, E)), rng.standard_normal((P, E, OBS)),
               rng.random((P, E)) < 0.2)
    return ag


def member_view(ag, k, name):
    """Member k's slices of the stacked tensors `name` (critic side: entries k and P + k)."""
    P = ag.P
    out = []
    for t in getattr(ag, name):
        sel = [k] if t.shape[0] == P else [k, P + k]
        out.append(t.detach()[sel])
    return out


NETS = ("actor", "critic", "actor_target", "critic_target")


def opt_view(ag, k):
    P = ag.P
    out = []
    for part in ("actor", "critic"):
        st = ag.opt[part]
        for key in ("m", "v"):
            for t in st[key]:
                out.append(t[[k] if t.shape[0] == P else [k, P + k]])
        out.append(st["step"][[k]])
    return out


def _sub(batch, noise, k):
    return {n: v[k:k + 1] for n, v in batch.items()}, noise[k:k + 1]


# ---------------------------------------------------------------------- batched == separate
def test_batched_update_equals_p_separate_updates_bit_for_bit():
    """One batched update of P members equals, bit for bit, P one-member updates of the
    same members on the same minibatches and noise. Each member's slice of every baddbmm is
    its own GEMM (torch's CPU bmm runs the batch entries one by one), and every reduction
    (losses, bias gradients) runs within a member, so nothing is summed across members; the
    test also pins that, on this build, the sums inside a member are ordered the same way
    whatever P is. Six updates: three critic-only, three with the actor and the targets."""
    ag = filled(P=3)
    ones = [ag.member(k) for k in range(3)]
    before = [[t.clone() for t in member_view(ag, k, "actor")] for k in range(3)]
    for _ in range(6):
        batch, noise = ag.sample()
        losses = ag.update(batch, noise)
        for k, one in enumerate(ones):
            assert torch.equal(one.update(*_sub(batch, noise, k)), losses[k:k + 1])
    for k, one in enumerate(ones):
        for name in NETS:
            for a, b in zip(member_view(ag, k, name), getattr(one, name)):
                assert torch.equal(a, b.detach()), (k, name)
        for a, b in zip(opt_view(ag, k), opt_view(one, 0)):
            assert torch.equal(a, b), k
        # and the updates did something: the actors moved
        assert not all(torch.equal(a, b) for a, b in zip(member_view(ag, k, "actor"),
                                                         before[k]))
    # the members' hyperparameters differ, so their updates differ
    assert not torch.equal(ag.actor[0][0], ag.actor[0][1])


def test_batched_acting_equals_each_members_policy():
    ag = filled(P=4)
    obs = np.random.default_rng(1).standard_normal((4, 3, OBS))
    _, acts = ag.act(obs, explore=False)
    for k in range(4):
        _, a = ag.member(k).act(obs[k:k + 1], explore=False)
        assert torch.equal(acts[k:k + 1], a)
    assert torch.all(acts >= torch.tensor(LOW, dtype=torch.float32))
    assert torch.all(acts <= torch.tensor(HIGH, dtype=torch.float32))
    _, noisy = ag.act(obs, explore=True)
    assert not torch.equal(noisy, acts)
    assert torch.all(noisy >= torch.tensor(LOW, dtype=torch.float32))


class RefTD3:
    """Member k as a textbook TD3 (Fujimoto et al.'s reference code): nn.Linear layers,
    torch.optim.Adam per network, F.mse_loss, target networks updated by p.data.mul/add."""

    def __init__(self, ag, k):
        import torch.nn as nn

        self.ag, self.k = ag, k

        def net(params):
            layers = []
            for i in range(0, len(params), 2):
                w, b = params[i], params[i + 1]
                lin = nn.Linear(w.shape[0], w.shape[1])
                with torch.no_grad():
                    lin.weight.copy_(w.T)
                    lin.bias.copy_(b[0])
                layers += [lin, nn.ReLU()]
            return nn.Sequential(*layers[:-1])

        a, at = member_view(ag, k, "actor"), member_view(ag, k, "actor_target")
        c, ct = member_view(ag, k, "critic"), member_view(ag, k, "critic_target")
        self.actor, self.actor_t = net([t[0] for t in a]), net([t[0] for t in at])
        self.q = [net([t[i] for t in c]) for i in (0, 1)]
        self.q_t = [net([t[i] for t in ct]) for i in (0, 1)]
        hp = ag.hp[k]
        self.gamma, self.sigma = hp["gamma"], hp["target_noise"]
        self.opt_a = torch.optim.Adam(self.actor.parameters(), lr=hp["lr_actor"])
        self.opt_c = torch.optim.Adam([p for q in self.q for p in q.parameters()],
                                      lr=hp["lr_critic"])
        self.scale = torch.tensor((HIGH - LOW) / 2, dtype=torch.float32)
        self.center = torch.tensor((HIGH + LOW) / 2, dtype=torch.float32)
        self.low = torch.tensor(LOW, dtype=torch.float32)
        self.high = torch.tensor(HIGH, dtype=torch.float32)
        self.it = 0

    def pi(self, net, s):
        return torch.tanh(net(s)) * self.scale + self.center

    def update(self, batch, noise):
        import torch.nn.functional as F

        s, a, r = batch["obs"][0], batch["act"][0], batch["rew"][0][:, None]
        s2, d = batch["next_obs"][0], batch["term"][0][:, None]
        with torch.no_grad():
            eps = (noise[0] * self.sigma).clamp(-self.ag.noise_clip, self.ag.noise_clip)
            a2 = torch.max(torch.min(self.pi(self.actor_t, s2) + eps * self.scale,
                                     self.high), self.low)
            x2 = torch.cat([s2, a2], 1)
            y = r + self.gamma * (1 - d) * torch.min(self.q_t[0](x2), self.q_t[1](x2))
        x = torch.cat([s, a], 1)
        loss = F.mse_loss(self.q[0](x), y) + F.mse_loss(self.q[1](x), y)
        self.opt_c.zero_grad()
        loss.backward()
        self.opt_c.step()
        self.it += 1
        if self.it % self.ag.policy_delay == 0:
            actor_loss = -self.q[0](torch.cat([s, self.pi(self.actor, s)], 1)).mean()
            self.opt_a.zero_grad()
            actor_loss.backward()
            self.opt_a.step()
            tau = self.ag.tau
            for net, tgt in [(self.actor, self.actor_t)] + list(zip(self.q, self.q_t)):
                for p, tp in zip(net.parameters(), tgt.parameters()):
                    tp.data.copy_(tau * p.data + (1 - tau) * tp.data)

    def stacked(self, name):
        """This member's weights in the batched layout of `name`."""
        def flat(net):
            out = []
            for lin in net[::2]:
                out += [lin.weight.detach().T, lin.bias.detach()[None]]
            return out
        if name == "actor":
            return [t[None] for t in flat(self.actor)]
        if name == "actor_target":
            return [t[None] for t in flat(self.actor_t)]
        qs = self.q if name == "critic" else self.q_t
        return [torch.stack(pair) for pair in zip(*(flat(q) for q in qs))]


def test_batched_update_matches_a_plain_torch_td3_within_float_tolerance():
    """Against nn.Linear + torch.optim.Adam: the maths is TD3's and the optimiser is torch's
    Adam, with each member's own learning rates, discount and target noise. Not bit for bit:
    nn.Linear runs addmm on the transposed weight (a GEMM with another blocking, so another
    order of the sums over the input features) where the batched learner runs baddbmm, and
    the reference's mse_loss and Polyak formula round differently from the learner's
    mean/lerp. Float32 rounding of ~1e-7 relative per op, through 8 updates and Adam's
    division by sqrt(v) (which magnifies differences in tiny gradients), stays below 2e-5 in
    the weights; the Adam steps themselves are ~1e-3, so a wrong formula fails by far."""
    torch.manual_seed(0)
    ag = filled(P=3, hidden=(16, 16), batch=16)
    refs = [RefTD3(ag, k) for k in range(3)]
    start = [[t.clone() for t in member_view(ag, k, "actor")] for k in range(3)]
    for _ in range(8):
        batch, noise = ag.sample()
        ag.update(batch, noise)
        for k, ref in enumerate(refs):
            ref.update(*_sub(batch, noise, k))
    for k, ref in enumerate(refs):
        for name in NETS:
            for a, b in zip(member_view(ag, k, name), ref.stacked(name)):
                assert a.shape == b.shape
                torch.testing.assert_close(a, b, rtol=0, atol=1e-6, msg=f"{k} {name}")
        moved = max((a - b).abs().max().item()
                    for a, b in zip(member_view(ag, k, "actor"), start[k]))
        assert moved > 1e-3          # 4 actor steps of lr >= 1e-3
    # the reference is sensitive: one member's learning rate off by 10% is caught
    ag2 = filled(P=3, hidden=(16, 16), batch=16)
    hp = hyperparams(3)
    hp[1]["lr_critic"] *= 1.1
    ag2.set_hyperparams(hp)
    ref = RefTD3(filled(P=3, hidden=(16, 16), batch=16), 1)
    for _ in range(4):
        batch, noise = ag2.sample()
        ag2.update(batch, noise)
        ref.update(*_sub(batch, noise, 1))
    diff = max((a - b).abs().max().item()
               for a, b in zip(member_view(ag2, 1, "critic"), ref.stacked("critic")))
    assert diff > 1e-4


# ---------------------------------------------------------------------- replay buffers
def test_replay_buffers_stay_per_member():
    P, E, cap = 4, 2, 10
    ag = td3.TD3Population(P, OBS, LOW, HIGH, hyperparams(P), hidden=(8,), batch_size=32,
                           capacity=cap, seed=0)

    def mark(k, t, j):
        return 1000 * k + 10 * t + j                  # member k, step t, env j

    for t in range(7):                                # 14 transitions: the ring wraps
        obs = np.array([[[mark(k, t, j)] * OBS for j in range(E)] for k in range(P)])
        ag.add(obs, np.zeros((P, E, ACT)), obs[..., 0] + 0.5, obs + 0.25, np.zeros((P, E)))
    assert ag.size == cap
    for k in range(P):
        buf = ag.member_buffer(k)
        want = [mark(k, t, j) for t in range(2, 7) for j in range(E)]   # the newest 10
        assert buf["obs"][:, 0].tolist() == want
        assert torch.all(buf["obs"] == buf["obs"][:, :1])
        assert buf["rew"].tolist() == [w + 0.5 for w in want]
        assert buf["next_obs"][:, 0].tolist() == [w + 0.25 for w in want]
    for _ in range(20):
        batch, _ = ag.sample()
        owner = torch.div(batch["obs"][..., 0], 1000, rounding_mode="floor")
        assert torch.equal(owner, torch.arange(P)[:, None].expand(P, 32).float())
        # and each sampled transition is a stored one, fields kept together
        assert torch.equal(batch["rew"], batch["obs"][..., 0] + 0.5)
    # a bad batch is refused
    with pytest.raises(ValueError, match="P=4"):
        ag.add(np.zeros((3, E, OBS)), np.zeros((3, E, ACT)), np.zeros((3, E)),
               np.zeros((3, E, OBS)), np.zeros((3, E)))


# ---------------------------------------------------------------------- exploit
@pytest.mark.parametrize("buffer", ["keep", "copy"])
def test_exploit_copies_exactly_the_source_member(buffer):
    ag = filled(P=4)
    for _ in range(4):
        ag.update()
    # the members differ before the copy (own hyperparameters, own data)
    assert not torch.equal(ag.actor[0][1], ag.actor[0][3])
    nets = {k: {n: [t.clone() for t in member_view(ag, k, n)] for n in NETS}
            for k in range(4)}
    opts = {k: [t.clone() for t in opt_view(ag, k)] for k in range(4)}
    bufs = {k: ag.data[k].clone() for k in range(4)}
    ag.exploit(1, 3, buffer=buffer)
    for name in NETS:
        for a, b in zip(member_view(ag, 3, name), nets[1][name]):
            assert torch.equal(a, b), name
    for a, b in zip(opt_view(ag, 3), opts[1]):
        assert torch.equal(a, b)
    for k in (0, 1, 2):                                  # nobody else changed
        for name in NETS:
            for a, b in zip(member_view(ag, k, name), nets[k][name]):
                assert torch.equal(a, b)
        for a, b in zip(opt_view(ag, k), opts[k]):
            assert torch.equal(a, b)
        assert torch.equal(ag.data[k], bufs[k])
    assert torch.equal(ag.data[3], bufs[1] if buffer == "copy" else bufs[3])
    assert not torch.equal(bufs[1], bufs[3])
    # from identical state and the same minibatch the two members now step alike, except for
    # the hyperparameters, which are the caller's (PBT's) to set
    hp = [dict(h) for h in ag.hp]
    hp[3] = dict(hp[1])
    ag.set_hyperparams(hp)
    batch, noise = ag.sample()
    batch = {n: v.clone() for n, v in batch.items()}
    for n in batch:
        batch[n][3] = batch[n][1]
    noise[3] = noise[1]
    ag.update(batch, noise)
    ag.update(batch, noise)
    for name in NETS:
        for a, b in zip(member_view(ag, 3, name), member_view(ag, 1, name)):
            assert torch.equal(a, b)
    with pytest.raises(ValueError, match="buffer"):
        ag.exploit(0, 1, buffer="share")
    with pytest.raises(ValueError, match="member"):
        ag.exploit(0, 4)


def test_learner_exploit_restarts_the_members_envs():
    torch.set_num_threads(1)
    ln = td3.make_learner(3, 2, seed=0, hyperparams=hyperparams(3), hidden=(8,),
                          batch_size=8, capacity=64, start_steps=0, num_threads=1,
                          max_episode_steps=500)
    try:
        ln.iteration(10, 2)
        running = ln.pop.episode_statistics(copy=True)["length"]
        assert np.all(running > 0)
        ln.exploit(0, 2, "keep")
        after = ln.pop.episode_statistics(copy=True)["length"]
        assert np.all(after[2] == 0) and np.array_equal(after[:2], running[:2])
        for name in NETS:
            for a, b in zip(member_view(ln.agent, 2, name), member_view(ln.agent, 0, name)):
                assert torch.equal(a, b)
        ln.iteration(2, 1)                        # and training goes on
        assert ln.env_steps == 24
    finally:
        ln.pop.close()


# ---------------------------------------------------------------------- bad input
def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="hyperparameter dicts"):
        td3.TD3Population(2, OBS, LOW, HIGH, hyperparams(3))
    bad = hyperparams(2)
    bad[1]["lr_actor"] = 0.0
    with pytest.raises(ValueError, match="lr_actor"):
        td3.TD3Population(2, OBS, LOW, HIGH, bad)
    del bad[0]["gamma"]
    with pytest.raises(ValueError, match="gamma"):
        td3.TD3Population(2, OBS, LOW, HIGH, bad)
    with pytest.raises(ValueError, match="low < high"):
        td3.TD3Population(2, OBS, HIGH, LOW, hyperparams(2))
    with pytest.raises(ValueError, match="batch_size"):
        td3.TD3Population(2, OBS, LOW, HIGH, hyperparams(2), batch_size=0)
    with pytest.raises(RuntimeError, match="empty"):
        td3.TD3Population(2, OBS, LOW, HIGH, hyperparams(2)).update()


def _run(*args, timeout=120):
    env = dict(os.environ, OMP_NUM_THREADS="2", MPLBACKEND="Agg")
    return subprocess.run([sys.executable, EXAMPLE, *args], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT, env=env)


def test_cli_refuses_bad_flags():
    proc = _run("--members", "1")
    assert proc.returncode == 2 and "--members must be at least 2" in proc.stderr
    proc = _run("--hidden", "64,x")
    assert proc.returncode == 2 and "comma-separated" in proc.stderr


# ---------------------------------------------------------------------- the arithmetic floor
def test_update_matmuls_records_every_matrix_product():
    """update_matmuls records the products of real updates, forward and backward: their
    multiply-adds equal a count from the layer shapes, made here independently."""
    P, B, (h1, h2) = 3, 8, (16, 12)
    ag = filled(P=P, hidden=(h1, h2), batch=B)
    before = ag.updates
    seconds, flops = td3.update_matmuls(ag, reps=3)
    assert ag.updates == before + ag.policy_delay == before + 2
    assert seconds > 0
    I = OBS + ACT

    def mac(*dims):                                 # 2 x batch x product of the dims
        return 2 * B * math.prod(dims)
    actor_fwd = P * (mac(OBS, h1) + mac(h1, h2) + mac(h2, ACT))
    critics_fwd = 2 * P * (mac(I, h1) + mac(h1, h2))            # heads are mul + sum
    critics_bwd = 2 * P * (2 * mac(h1, h2) + mac(I, h1))        # no input gradient
    critic_step = actor_fwd + 2 * critics_fwd + critics_bwd     # targets, online, backward
    actor_step = (actor_fwd + P * (mac(I, h1) + mac(h1, h2))    # actor and Q1 forward
                  + P * (mac(h1, h2) + mac(h1, I))              # Q1's input gradients
                  + P * (2 * mac(h2, ACT) + 2 * mac(h1, h2) + mac(OBS, h1)))
    assert flops == critic_step + actor_step / 2
    # bad counts are refused before any update runs
    for bad in (0, -1, 2.5):
        with pytest.raises(ValueError, match="reps must be a positive int"):
            td3.update_matmuls(ag, reps=bad)
    assert ag.updates == before + 2
    with pytest.raises(ValueError, match="n must be a positive int"):
        td3.sgemm_rate(n=0)
    assert td3.sgemm_rate(n=64, reps=2) > 0


# ---------------------------------------------------------------------- the example runs
@pytest.mark.skipif(os.environ.get("CYPOOL_SANITIZER") == "asan",
                    reason="the example plots with matplotlib, whose C++ exceptions abort a "
                    "process with libasan preloaded (tools/sanitize.sh); the normal run runs it")
def test_quick_mode_runs(tmp_path):
    out = tmp_path / "quick"
    proc = _run("--quick", "--out", str(out))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "evaluate(): 2 deterministic episodes per member" in proc.stdout
    assert (tmp_path / "quick.png").stat().st_size > 1000
    lineage = (tmp_path / "quick_lineage.json").read_text()
    assert '"hyperparams"' in lineage
    rows = [ln for ln in proc.stdout.splitlines() if ln.strip().split(" ")[0] in ("0", "1")]
    assert len(rows) >= 4                           # 2 PBT rounds + 2 members' evaluations


def test_bench_quick_prints_the_table_and_the_floor():
    proc = _run("--bench", "--quick")
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = proc.stdout
    assert "| P | batched s/iter | x one agent |" in out
    rows = [ln.split("|")[1:-1] for ln in out.splitlines()
            if ln.startswith("| ") and "ms |" in ln]
    assert [int(r[0]) for r in rows] == [1, 2]
    for r in rows:                      # floors at torch's kernels and large-matrix speed
        assert 0.5 < float(r[4]) < 10 and 0.5 < float(r[5]) < 10
