#!/usr/bin/env bash
# A two-node Ray cluster on loopback for the Ray backend's multi-node tests.
#
#   tools/ray_two_node.sh [extra pytest args]
#
# Starts a head node and a second node on this machine (1 CPU and a 100 MB object store
# each, no dashboard, their own temp dir, Ray's token authentication with a token of this run
# only), runs the tests marked ray_cluster against CYPOOL_RAY_ADDRESS=127.0.0.1:PORT, and
# always stops both nodes: the trap sends SIGTERM to the two `ray start --block` processes
# this script started (each stops its own GCS, raylet and workers), then kills whatever still
# runs from this cluster's temp dir. It never calls `ray stop`, which would stop every Ray
# node on the machine. (On Linux Ray rewrites 127.0.0.1 to the host's primary address, see
# ray._private.services.resolve_ip_for_localhost, so the nodes listen there; the traffic
# stays on this machine.)
#
# Env: PYTHON (default python3), RAY_PORT (default: a free port), RAY_TWO_NODE_TIMEOUT
# (seconds for the tests, default 300). Exit status: pytest's (5, no test collected, is a
# failure here too); 77 when Ray is not installed.
set -uo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}

if ! "$PY" -c "import ray" 2>/dev/null; then
    echo "ray_two_node: Ray is not installed (pip install \"cypool[ray]\")" >&2
    exit 77
fi
RAY=$(dirname "$(command -v "$PY")")/ray
[ -x "$RAY" ] || RAY=$(command -v ray)

PORT=${RAY_PORT:-$("$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}
ADDR=127.0.0.1:$PORT
TMP=$(mktemp -d /tmp/cpray.XXXXXX)    # short: Ray's unix socket paths live under it
# Ray's token authentication, with a token of this run only (never written to ~/.ray): the
# nodes, the tests and their workers inherit it.
export RAY_AUTH_MODE=token
RAY_AUTH_TOKEN=$("$PY" -c 'import secrets; print(secrets.token_hex(32))')
export RAY_AUTH_TOKEN
HEAD_PID=
NODE_PID=
TEST_PID=

cleanup() {
    local rc=$?
    trap '' INT TERM   # finish cleaning up even if signalled again
    trap - EXIT
    if [ -n "$TEST_PID" ]; then kill -TERM "$TEST_PID" 2>/dev/null; wait "$TEST_PID" 2>/dev/null; fi
    for pid in $NODE_PID $HEAD_PID; do
        kill -TERM "$pid" 2>/dev/null
    done
    for pid in $NODE_PID $HEAD_PID; do
        for _ in $(seq 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
        kill -KILL "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
    done
    # anything of this cluster still alive (its command line names our temp dir)
    local left
    left=$(pgrep -f -- "$TMP" || true)
    if [ -n "$left" ]; then
        echo "ray_two_node: killing leftover processes $left" >&2
        kill -KILL $left 2>/dev/null
    fi
    rm -rf "$TMP"
    exit "$rc"
}
trap cleanup EXIT INT TERM

wait_nodes() {  # wait_nodes N: until the cluster at $ADDR has N alive nodes (60 s at most)
    "$PY" - "$ADDR" "$1" <<'EOF'
import sys, time
import ray
addr, want = sys.argv[1], int(sys.argv[2])
deadline = time.monotonic() + 60
while True:
    try:
        ray.init(address=addr, log_to_driver=False, logging_level="ERROR")
        alive = sum(n["Alive"] for n in ray.nodes())
        ray.shutdown()
        if alive >= want:
            sys.exit(0)
    except Exception as err:  # not up yet
        alive = repr(err)
    if time.monotonic() > deadline:
        sys.exit(f"ray_two_node: {want} nodes not up after 60 s (last: {alive})")
    time.sleep(1)
EOF
}

COMMON=(--node-ip-address=127.0.0.1 --num-cpus=1 --object-store-memory=$((100 * 1024 * 1024))
        --disable-usage-stats --temp-dir="$TMP" --block)
echo "ray_two_node: head on $ADDR (logs in $TMP)"
"$RAY" start --head --port="$PORT" --include-dashboard=false "${COMMON[@]}" \
    >"$TMP/head.log" 2>&1 &
HEAD_PID=$!
wait_nodes 1 || { tail -n 30 "$TMP/head.log" >&2; exit 1; }
"$RAY" start --address="$ADDR" "${COMMON[@]}" >"$TMP/node.log" 2>&1 &
NODE_PID=$!
wait_nodes 2 || { tail -n 30 "$TMP/node.log" >&2; exit 1; }

echo "ray_two_node: two nodes up; running the ray_cluster tests"
# in the background so that a signal reaches the trap at once (bash defers traps while a
# foreground child runs)
CYPOOL_RAY_ADDRESS=$ADDR timeout "${RAY_TWO_NODE_TIMEOUT:-300}" \
    "$PY" -m pytest tests/test_ray.py -m ray_cluster -q -p no:cacheprovider "$@" &
TEST_PID=$!
wait "$TEST_PID"
rc=$?
TEST_PID=
if [ "$rc" -ne 0 ]; then echo "ray_two_node: tests failed (exit $rc)" >&2; fi
exit "$rc"
