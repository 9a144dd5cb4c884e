#!/usr/bin/env bash
# Installs what tramp's tests need that Rust does not bring, where it is
# missing: a C compiler and the C library's headers and static archive
# (the programs `tramp record` is tested on, the second allocator of the
# replay test, the library the dlopen test loads and the statically linked
# program `record` must refuse are all built from source by the tests),
# heaptrack, the peer the heap profile is compared with, Chromium, the
# browser the HTML report is tested in, Go, whose `go tool pprof` reads
# the pprof profiles tramp writes, and valgrind, whose DHAT's JSON tramp's
# is compared with.
# Called by README's test command and by .ci/run.
set -euo pipefail
cd "$(dirname "$0")"
need=()
command -v cc >/dev/null 2>&1 || need+=(gcc)
# g++: .ci/run checks that the fuzz targets build, and libfuzzer-sys
# compiles libFuzzer's C++.
command -v c++ >/dev/null 2>&1 || need+=(g++)
# libc.a: `gcc -static` (the static program of issue 32's tests).
[ -e /usr/lib/x86_64-linux-gnu/libc.a ] || [ -e /usr/lib/libc.a ] || [ -e /usr/lib64/libc.a ] || need+=(libc6-dev)
# heaptrack and heaptrack_print: the heap profile's figures are compared
# with theirs on the same program (crates/cli/tests/heap_profile.rs).
command -v heaptrack_print >/dev/null 2>&1 || need+=(heaptrack)
# Chromium: `tramp report`'s page is opened headless and must log no
# script error (crates/cli/tests/report.rs).
command -v chromium >/dev/null 2>&1 || need+=(chromium)
# go tool pprof: `tramp export --pprof`'s profiles are read by pprof itself
# (crates/cli/tests/foreign.rs).
command -v go >/dev/null 2>&1 || need+=(golang-go)
# gdb: `tramp record -p` loads the capture library into a running process
# through it (crates/cli/tests/attach.rs); libc6-dbg names glibc's
# internal frames, so that the attach can tell a thread stopped inside
# the allocator and let it leave first.
command -v gdb >/dev/null 2>&1 || need+=(gdb)
# binutils' objcopy, readelf and addr2line: the separate-debug-file tests
# split a program's DWARF as dh_strip does and check lines against
# addr2line (crates/cli/tests/trust3.rs).
command -v objcopy >/dev/null 2>&1 && command -v addr2line >/dev/null 2>&1 || need+=(binutils)
# GNU time: a test reads a command's peak memory with it (trust3.rs).
[ -x /usr/bin/time ] || need+=(time)
[ -d /usr/lib/debug/.build-id ] && dpkg -s libc6-dbg >/dev/null 2>&1 || need+=(libc6-dbg)
# valgrind: DHAT, whose JSON `tramp export --dhat`'s is compared with on
# the same program (crates/cli/tests/foreign.rs); lackey and cachegrind
# (crates/cli/tests/memtrace.rs).
command -v valgrind >/dev/null 2>&1 || need+=(valgrind)
# jemalloc and mimalloc from Debian: `tramp replay` runs trace heaps on
# their arenas and heaps (crates/cli/tests/replay.rs).
# (found where the dynamic linker finds them, whatever the directory)
ldconfig_p() { { command -v ldconfig >/dev/null 2>&1 && ldconfig -p; } || /sbin/ldconfig -p; }
libs=$(ldconfig_p 2>/dev/null || true)
grep -q 'libjemalloc\.so\.2 ' <<<"$libs" || need+=(libjemalloc2)
grep -q 'libmimalloc\.so\.2 ' <<<"$libs" || need+=(libmimalloc2.0)
# Python and pip: DuckDB (below) queries the Parquet tables `tramp export
# --parquet` writes (crates/cli/tests/parquet.rs).
command -v python3 >/dev/null 2>&1 || need+=(python3)
python3 -m pip --version >/dev/null 2>&1 || need+=(python3-pip)
if [ ${#need[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}"
fi
# Python packages from PyPI, each at its pinned version (installed when
# missing or at another version):
pin() {
  local want="$1"
  python3 - "$want" >/dev/null 2>&1 <<'PY' && return 0
import sys, importlib.metadata as m
name, version = sys.argv[1].split("==")
sys.exit(m.version(name) != version)
PY
  python3 -m pip install -q "$want" 2>/dev/null ||
    python3 -m pip install -q --break-system-packages "$want"
}
# DuckDB: its answers on the Parquet tables `tramp export --parquet`
# writes are the tests' (crates/cli/tests/parquet.rs).
pin duckdb==2.0.1
# libCacheSim's Python binding: the peer whose parameter ranges
# crates/cachesim/tests/params.rs walks and whose miss ratios the Python
# package's are checked against (python/tests).
pin libcachesim==0.3.5
# Playwright, driving Debian's Chromium (no browser download): the
# report page is used as a person would (crates/cli/tests/report.rs,
# crates/cli/tests/browser/report.py).
pin playwright==1.65.3
# The Python package (python/): maturin builds it, pytest runs its tests
# (python/tests, from crates/cli/tests/python.rs), on pandas, pyarrow
# and polars frames, and Dask runs its sweeps on a LocalCluster.
for p in maturin==1.16.0 pytest==9.2.0 pandas==3.1.1 pyarrow==26.0.1 polars==2.1.0 \
  dask==2026.8.0 distributed==2026.8.0; do
  pin "$p"
done
# The package itself is built (maturin, into the workspace's target
# directory with the tests' profile) and installed by the test command's
# crates/cli/tests/python.rs, after the Rust build it shares: building it
# here first, from cold, cost the suite 4 minutes more.
# Toolchain components (no-ops where already installed).
if command -v rustup >/dev/null 2>&1; then
  rustup component add rustfmt clippy >/dev/null 2>&1 || true
fi
