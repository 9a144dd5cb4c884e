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
