#!/usr/bin/env bash
# scripts/test-two-nodes.sh: the multi-node paths, on two nodes made on this machine.
#
# Two network namespaces, each with its own hostname (a UTS namespace), joined by a veth pair, are
# two real nodes to Open MPI: a daemon on each, ranks talking over TCP between them, and
# MPI_COMM_TYPE_SHARED (NodeShared, Communicator::node_rank) grouping ranks by node. With 2 ranks
# per node (ranks 0-1 on the first node, 2-3 on the second), this runs:
#   * the MPI suite's tests of the communicator, node-shared arrays, repeatable sums, derivatives
#     and halos (tests/mpi.rs at np=4), written for any number of nodes;
#   * the post-stack and MDD examples at 4 ranks, whose outputs must be bitwise those of a
#     one-process run (scripts/poststack-ranks.sh, scripts/mdd-ranks.sh with NPS=4);
#   * the fault suite's one-rank mistakes at 4 ranks, where the culprit is mostly the last rank,
#     on the second node (tests/faults.rs, FAULTS_MPI_NP=4).
#
# Needs root (or CAP_NET_ADMIN and CAP_SYS_ADMIN), `ip netns` and `unshare`; without them it
# prints why and skips (exit 0), except under CI=true, where the step must run and fails. It
# removes the namespaces and its lines of /etc/hosts on every exit path.
#
# Open MPI over TCP with more ranks than the machine has cores: ranks must yield the processor
# when they wait (mpi_yield_when_idle), or a waiting rank spins on a core its peer needs. Open MPI
# does this by itself when it sees the oversubscription; here each "node" claims 2 slots of a
# 2-core machine, so it cannot see it and is told (DISTLOPS_TWO_NODES_YIELD=0 shows the
# difference: 14-20 s per derivative test instead of 0.3 s).
# Expects the test binaries built by scripts/test.sh (it builds them if missing: same features).
# With arguments, it runs that command across the two nodes instead (see below).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
# shellcheck source=scripts/lib.sh
. scripts/lib.sh
# shellcheck source=scripts/mpi-env.sh
. scripts/mpi-env.sh

why_not() {
  if [ "$(id -u)" -ne 0 ]; then
    echo "not root (network namespaces need CAP_NET_ADMIN)"
  elif ! command -v ip >/dev/null 2>&1; then
    echo "no ip command (iproute2)"
  elif ! command -v unshare >/dev/null 2>&1; then
    echo "no unshare command (util-linux)"
  elif ! { ip netns add "dlprobe$$" && ip netns del "dlprobe$$"; } >/dev/null 2>&1; then
    echo "cannot make a network namespace here (ip netns add failed)"
  elif ! unshare --uts true >/dev/null 2>&1; then
    echo "cannot make a UTS namespace here (unshare --uts failed)"
  fi
}
reason="$(why_not)"
if [ -n "$reason" ]; then
  if [ "${CI:-}" = true ]; then
    echo "test-two-nodes.sh: cannot run in CI: $reason" >&2
    exit 1
  fi
  echo "test-two-nodes.sh: skipped: $reason"
  exit 0
fi

a=dlnode1
b=dlnode2
net=10.77.0
mark="# distlops test-two-nodes.sh"
tmp="$(mktemp -d)"

# Removes the namespaces (and what still runs in them) and this script's lines of /etc/hosts.
teardown() {
  for n in "$a" "$b"; do
    for pid in $(ip netns pids "$n" 2>/dev/null); do kill -9 "$pid" 2>/dev/null || true; done
    ip netns del "$n" 2>/dev/null || true
  done
  if grep -q "$mark" /etc/hosts 2>/dev/null; then
    # In place (not sed -i, which replaces the file: /etc/hosts may be a bind mount).
    local kept
    kept="$(grep -v "$mark" /etc/hosts || true)"
    printf '%s\n' "$kept" >/etc/hosts
  fi
}
teardown # what an earlier run that was killed left
trap 'teardown; rm -rf "$tmp"' EXIT
on_signal() { exit 130; }
trap on_signal INT TERM

ip netns add "$a"
ip netns add "$b"
ip link add dlveth1 type veth peer name dlveth2
ip link set dlveth1 netns "$a"
ip link set dlveth2 netns "$b"
ip -n "$a" addr add "$net.1/24" dev dlveth1
ip -n "$b" addr add "$net.2/24" dev dlveth2
for n in "$a" "$b"; do ip -n "$n" link set lo up; done
ip -n "$a" link set dlveth1 up
ip -n "$b" link set dlveth2 up
printf '%s %s %s\n%s %s %s\n' "$net.1" "$a" "$mark" "$net.2" "$b" "$mark" >>/etc/hosts
printf '%s slots=2\n%s slots=2\n' "$a" "$b" >"$tmp/hostfile"

# How Open MPI starts its daemon on a "host": enter that host's namespace, as that hostname.
cat >"$tmp/nsrsh" <<'SH'
#!/bin/bash
host="$1"
shift
exec ip netns exec "$host" unshare --uts bash -c "hostname $host; $*"
SH
# The launcher the test harnesses and scripts call ($MPIEXEC): mpirun across the two nodes.
# Environment variables reach the second node's ranks only through -x.
cat >"$tmp/mpirun" <<SH
#!/bin/bash
xs=()
for v in \$(compgen -e | grep -E '^(MPI_TEST_|FAULTS_|DISTLOPS_|RUST_|THREADS_TEST_|DL_EMU_)'); do
  xs+=(-x "\$v")
done
exec mpirun.openmpi --hostfile "$tmp/hostfile" --mca plm_rsh_agent "$tmp/nsrsh" \\
  --mca btl tcp,self,vader --mca oob_tcp_if_include $net.0/24 --mca btl_tcp_if_include $net.0/24 \\
  --mca mpi_yield_when_idle ${DISTLOPS_TWO_NODES_YIELD:-1} "\${xs[@]}" "\$@"
SH
# Runs a command on the first node (where mpirun starts), as that hostname.
cat >"$tmp/on-first-node" <<SH
#!/bin/bash
exec ip netns exec $a unshare --uts bash -c 'hostname $a; exec "\$@"' _ "\$@"
SH
chmod +x "$tmp/nsrsh" "$tmp/mpirun" "$tmp/on-first-node"
export MPIEXEC="$tmp/mpirun"
on_a="$tmp/on-first-node"

# `scripts/test-two-nodes.sh CMD [ARGS...]`: runs CMD on the first node with $MPIEXEC launching
# across both (e.g. `MPI_TEST_NP=4 scripts/test-two-nodes.sh target/debug/deps/mpi-HASH` for the
# whole MPI suite), instead of the steps below.
if [ "$#" -gt 0 ]; then
  rc=0
  "$on_a" "$@" || rc=$?
  exit "$rc"
fi

failed=()
check() {
  local what="$1"
  step "$@" || failed+=("$what")
  trap on_signal INT TERM # step resets it
}

# The test binaries of scripts/test.sh's build (the same features: nothing is recompiled).
binary() { # binary TEST: the path of the binary of the top crate's tests/TEST.rs
  cargo test -q "${BUILD[@]}" --no-run --test "$1" --message-format=json |
    python3 -c 'import json, sys
src = sys.argv[1]
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m["target"]["src_path"] == src and m.get("executable"):
        print(m["executable"])' "$root/tests/$1.rs"
}
step "test-two-nodes.sh: build the test binaries" 1800 cargo test -q "${BUILD[@]}" --no-run --test mpi --test faults
trap on_signal INT TERM
mpi_bin="$(binary mpi)"
faults_bin="$(binary faults)"

# Two ranks on each node, or the steps below would not test what they claim.
where() {
  local hosts
  hosts="$("$on_a" "$MPIEXEC" -n 4 hostname | sort | uniq -c | awk '{print $2 ":" $1}' | xargs)"
  echo "  ranks per node: $hosts"
  [ "$hosts" = "$a:2 $b:2" ]
}
check "two nodes: 2 ranks on each node" 120 bash -c "$(declare -f where); a=$a b=$b on_a=$on_a MPIEXEC=$MPIEXEC where"

# The suite's tests whose paths differ between one node and two: the communicator (also in
# 24-byte chunks), node-shared arrays, the repeatable sums, the stencils' and halos' neighbours.
check "two nodes: MPI suite at np=4 (comm, shared, repro, derivatives, halo)" 1200 \
  env MPI_TEST_NP=4 "$on_a" "$mpi_bin" comm:: shared:: repro:: derivatives:: halo:: ghost::
check "two nodes: post-stack example at 4 ranks, volumes bitwise those of 3 thread ranks" 900 \
  env NPS=4 "$on_a" scripts/poststack-ranks.sh
check "two nodes: MDD example at 4 ranks, arrays bitwise those of 1 thread rank" 900 \
  env NPS=4 THREAD_NPS= "$on_a" scripts/mdd-ranks.sh
check "two nodes: one rank's mistakes at np=4 (the culprit mostly on the second node)" 900 \
  env FAULTS_MPI_NP=4 "$on_a" "$faults_bin" mpi::one_rank mpi::replicas

if [ ${#failed[@]} -gt 0 ]; then
  printf '==> two nodes FAILED: %s\n' "${failed[@]}" >&2
  exit 1
fi
echo "==> two nodes: all passed"
