#!/usr/bin/env bash
# cypool on the newest supported Python (3.13) as a user installs it: a fresh venv, a plain
# `pip install .` (not editable; ALE's build cache in ~/.cache/cypool is reused) and
# nothing else, checked to run every family and `cypool --quick` (every row measured); then
# pytest and a smoke subset: each family's exactness against its
# reference (classic control, toy text and MuJoCo against gymnasium, the Atari emulator
# against ale-py's, gymnasium.make's one env against gymnasium's own; then, with their
# references installed, MinAtar, MiniGrid, mpe2, PointMaze and cypool.multiagent).
# Exit 77 (with the reason) when no Python 3.13 is found.
set -euo pipefail
cd "$(dirname "$0")/.."
WANT=3.13

runs() { [ -n "$1" ] && "$1" -c "import sys; sys.exit(sys.version_info[:2] != (3, 13))" 2>/dev/null; }

PY=""
cand=$(command -v "python$WANT" || true)                   # on PATH (a pyenv shim may not run)
if runs "$cand"; then PY=$cand; fi
if [ -z "$PY" ] && command -v pyenv >/dev/null; then
    cand=$(pyenv which "python$WANT" 2>/dev/null || true)  # the selected pyenv versions
    if runs "$cand"; then PY=$cand; fi
    if [ -z "$PY" ]; then                                   # any installed pyenv 3.13.x
        for v in $(pyenv versions --bare 2>/dev/null | grep "^$WANT\.[0-9]*$" | sort -t. -k3 -n -r); do
            cand=$(PYENV_VERSION=$v pyenv which "python$WANT" 2>/dev/null || true)
            if runs "$cand"; then PY=$cand; break; fi
        done
    fi
fi
if [ -z "$PY" ]; then
    echo "newest_python.sh: skipped: no Python $WANT found (neither python$WANT on PATH nor a" \
         "pyenv $WANT.x); install one (e.g. pyenv install $WANT) to run this step"
    exit 77
fi
echo "newest_python.sh: $("$PY" -VV | head -1) at $PY"

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
"$PY" -m venv "$WORK/venv"
VPY=$WORK/venv/bin/python
"$VPY" -m pip install -q --upgrade pip
# a copy of the source tree (what a clone holds), so that the build leaves no files for
# another Python in the checkout and reuses none of its build outputs
mkdir "$WORK/src"
if git rev-parse --git-dir >/dev/null 2>&1; then
    git ls-files -z --cached --others --exclude-standard | xargs -0 -I{} cp --parents {} "$WORK/src"
else
    cp -r . "$WORK/src"
fi
(cd "$WORK/src" && "$VPY" -m pip install -q .)
echo "newest_python.sh: venv and pip install . took ${SECONDS}s"
# the installed cypool is the one imported (not the checkout's, built for another Python)
# and it runs every family with the base dependencies alone (a one-env gymnasium.make too)
(cd "$WORK" && "$VPY" -c "
import sys, numpy as np, gymnasium as gym, cypool
f = cypool.__file__
print('cypool from', f)
if 'site-packages' not in f:
    sys.exit('not the installed cypool')
for i in ('CartPole-v1', 'Acrobot-v1', 'Taxi-v4', 'Hopper-v5', 'Pong-v5'):
    env = cypool.make_vec(i, 2)
    env.reset(seed=0)
    env.step(np.stack([env.single_action_space.sample() for _ in range(2)]))
    env.close()
one = gym.make('cypool/Hopper-v5', render_mode='rgb_array')
one.reset(seed=0)
assert one.render().shape[-1] == 3
one.close()
")
# the first command (README): every row of its speed table filled on a plain install
(cd "$WORK" && "$WORK/venv/bin/cypool" --quick --seconds 0.3 --envs 4 | tee "$WORK/first.txt")
if grep -q "n/a" "$WORK/first.txt"; then
    echo "newest_python.sh: python -m cypool left a row unmeasured on a plain install"; exit 1
fi
# the README's notebook install, `pip install ".[notebook]"`: its extra's requirements (read
# from pyproject.toml, so this is that line without rebuilding the cypool just installed),
# then examples/quickstart.ipynb top to bottom in a kernel of this venv
NB_REQS=$("$VPY" -c "import tomllib; print(' '.join(tomllib.load(open('$WORK/src/pyproject.toml', 'rb'))['project']['optional-dependencies']['notebook']))")
"$VPY" -m pip install -q $NB_REQS
(cd "$WORK" && "$VPY" -m nbconvert --to notebook --execute \
    --ExecutePreprocessor.timeout=300 --ExecutePreprocessor.kernel_name=python3 \
    --output "$WORK/quickstart.out.ipynb" src/examples/quickstart.ipynb)
echo "newest_python.sh: the notebook ran from the notebook install (${SECONDS}s)"
# the tests' own needs: pytest
"$VPY" -m pip install -q pytest
if "$VPY" -m pip list --format=freeze | grep -qi -E "^(torch|envpool|ray)=="; then
    echo "newest_python.sh: the venv holds a test extra; it must not"; exit 1
fi
# PYTHONSAFEPATH: the working directory (the checkout) is not put on sys.path
PYTHONSAFEPATH=1 "$WORK/venv/bin/pytest" -q -p no:cacheprovider \
    tests/classic/test_classic_control.py tests/toy_text/test_toy_text.py \
    tests/mujoco/test_exactness.py tests/atari/test_phosphor_blend.py tests/test_single_env.py
# the families whose references are other packages: those references (not cypool's
# dependencies), then one smoke test of each family's exactness
"$VPY" -m pip install -q minatar==1.0.15 minigrid==3.2.0 mpe2==1.1.1 pettingzoo==1.27.0 \
    supersuit==3.11.0 gymnasium-robotics==1.4.2
PYTHONSAFEPATH=1 "$WORK/venv/bin/pytest" -q -p no:cacheprovider \
    "tests/minatar/test_minatar_exact.py::test_lockstep_defaults" \
    "tests/minigrid/test_minigrid.py::test_every_id_matches_minigrid" \
    "tests/mpe2/test_mpe2_exact.py::test_two_threads" \
    "tests/robotics/test_point_maze_exact.py::test_umaze_default" \
    tests/multiagent/test_parallel_env.py tests/multiagent/test_mamujoco.py
echo "newest_python.sh: done in ${SECONDS}s"
