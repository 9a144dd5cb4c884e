# Shared by the benchmark scripts that source it.

# Builds tramp (release), and sets T to it and W to a scratch directory
# removed when the script exits.
tramp_and_scratch() {
  cargo build --release -q -p tramp-cli
  T=$PWD/target/release/tramp
  W=$(mktemp -d)
  # shellcheck disable=SC2064
  trap "rm -rf '$W'" EXIT
}

best() { # command... -> best wall seconds of 3
  local b=999
  for _ in 1 2 3; do
    local s e
    s=$(date +%s.%N)
    "$@" >/dev/null 2>&1 || true
    e=$(date +%s.%N)
    b=$(python3 -c "print(min($b, $e - $s))")
  done
  echo "$b"
}

# Writes the workloads the recording benchmarks share into DIR: the
# alloc_bench program, and big.c, a sizable generated C file for gcc to
# compile. Sets python to the interpreter a pyenv shim resolves to.
workloads_in() { # DIR
  gcc -O2 -o "$1/alloc_bench" bench/workloads/alloc_bench.c
  python=$(command -v pyenv >/dev/null 2>&1 && pyenv which python3 || command -v python3)
  python3 - "$1/big.c" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    for i in range(1500):
        f.write(f"int f{i}(int x) {{ int a[16]; for (int j = 0; j < 16; j++) a[j] = x * {i} + j; "
                f"int s = 0; for (int j = 0; j < 16; j++) s += a[j] ^ (s << 1); return s; }}\n")
PY
}
