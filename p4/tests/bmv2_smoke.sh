#!/usr/bin/env bash
# End-to-end check of the P4 program on a real BMv2 (not run in CI): a network namespace with
# two veth pairs, simple_switch_grpc --priority-queues 8 on ports 1 and 2, the pipeline and four
# slices (tail drop, ECN step, CoDel, ABC with two senders) pushed over P4Runtime, traffic sent
# with scapy, the counters read back and printed
# (tests/bmv2_smoke.py). Without the tools, root or network namespaces it says so and exits 0.
#
# BMv2 binds its Thrift server to every address and has no option to change that, so the
# switch runs inside the namespace, whose only addresses are loopback: gRPC listens on
# 127.0.0.1:9559 and Thrift is reachable from nowhere else.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
P4DIR=$(dirname "$HERE")
ROOT=$(dirname "$P4DIR")
PYTHON=${PYTHON:-$ROOT/.venv/bin/python}
NS=sliceportal-smoke
JSON=$P4DIR/build/sliceportal.json
P4INFO=$P4DIR/build/sliceportal.p4info.txtpb
LOGDIR=$(mktemp -d)

skip() {
    echo "bmv2_smoke: SKIPPED: $*"
    exit 0
}

command -v simple_switch_grpc >/dev/null || skip "simple_switch_grpc is not on PATH"
[ "$(id -u)" -eq 0 ] || skip "creating network namespaces needs root"
command -v ip >/dev/null || skip "iproute2 (ip) is not installed"
[ -x "$PYTHON" ] || skip "no Python at $PYTHON (set PYTHON=...)"
if [ ! -f "$JSON" ]; then
    command -v p4c-bm2-ss >/dev/null || skip "no $JSON and p4c-bm2-ss is not on PATH"
    make -C "$P4DIR" compile
fi
if ! "$PYTHON" -c "import scapy" 2>/dev/null; then
    echo "bmv2_smoke: installing scapy into $("$PYTHON" -c 'import sys; print(sys.prefix)')"
    "$PYTHON" -m pip install --quiet scapy
fi
ip netns add "$NS" 2>/dev/null || skip "cannot create network namespace $NS"

SWITCH_PID=""
cleanup() {
    if [ -n "$SWITCH_PID" ]; then
        kill "$SWITCH_PID" 2>/dev/null || true
        wait "$SWITCH_PID" 2>/dev/null || true
    fi
    ip netns del "$NS" 2>/dev/null || true
}
trap cleanup EXIT

in_ns() { ip netns exec "$NS" "$@"; }

in_ns ip link set lo up
in_ns sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
for port in 1 2; do
    # swN is the switch's port N; hN is the host end that scapy sends on or listens to.
    in_ns ip link add "sw$port" type veth peer name "h$port"
    in_ns ip link set "sw$port" up
    in_ns ip link set "h$port" up
done

# Not through in_ns: $! must be the switch itself (ip netns exec execs it), not a subshell.
# --log-flush: without it BMv2 buffers its log, and the file is still empty when we look.
ip netns exec "$NS" simple_switch_grpc --device-id 0 --no-p4 -i 1@sw1 -i 2@sw2 \
    --thrift-port 9090 --log-file "$LOGDIR/simple_switch" --log-level info --log-flush \
    -- --grpc-server-addr 127.0.0.1:9559 --priority-queues 8 &
SWITCH_PID=$!

grpc_up() {
    in_ns "$PYTHON" -c "import socket; socket.create_connection(('127.0.0.1', 9559), 1)" \
        2>/dev/null
}
for _ in $(seq 50); do
    grpc_up && break
    kill -0 "$SWITCH_PID" 2>/dev/null || { echo "simple_switch_grpc exited; logs in $LOGDIR"; exit 1; }
    sleep 0.2
done
grpc_up || { echo "simple_switch_grpc does not answer on 127.0.0.1:9559; logs in $LOGDIR"; exit 1; }

in_ns "$PYTHON" "$HERE/bmv2_smoke.py" --grpc 127.0.0.1:9559 --p4info "$P4INFO" --json "$JSON" \
    --send-iface h1 --recv-iface h2
# BMv2 (its spdlog) names the file of --log-file NAME "NAME.txt".
if [ ! -s "$LOGDIR/simple_switch.txt" ]; then
    echo "bmv2_smoke: FAILED: the switch log $LOGDIR/simple_switch.txt is empty"
    exit 1
fi
echo "bmv2_smoke: switch log $LOGDIR/simple_switch.txt ($(wc -l <"$LOGDIR/simple_switch.txt") lines)"
