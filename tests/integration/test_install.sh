#!/usr/bin/env bash
# `make install` for application developers: the build is installed into a temporary
# PREFIX, and the examples are built out of tree from the installed files only (copies
# of PREFIX/share/ductile/examples; ductile.h and libductile from PREFIX), once with
# pkg-config (`mpicc app.c $(pkg-config --cflags --libs ductile)`) and once with CMake
# (find_package(Ductile), Ductile::ductile). The programs run plain, outside any job,
# and their MPI calls go through libductile's profiling wrappers. Then a cluster run
# entirely from PREFIX (`ductile cluster up` starts the installed daemons) runs the
# out-of-tree jacobi2d under `ductile mpirun` on 2 nodes.
# Release build only: an application cannot link the ASan build's libductile without
# building itself with -fsanitize=address, and nobody installs that build.
. "$(dirname "$0")/lib.sh"
BUILD=$BINDIR
SRC=${DUCTILE_SOURCE_DIR:?set by ctest}
if grep -q '^DUCTILE_SANITIZE:BOOL=ON' "$BUILD/CMakeCache.txt"; then
  echo "SKIP: the sanitizer build is not installed (test_install runs in the release build)"
  exit 77
fi
for c in mpicc mpirun pkg-config cmake; do
  command -v $c > /dev/null || { echo "SKIP: no $c"; exit 77; }
done
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_tcp_if_include="$(mpi_if)" OMPI_MCA_oob_tcp_if_include="$(mpi_if)"
# nothing from the environment may point the compilers or the loader elsewhere
unset CPATH C_INCLUDE_PATH LIBRARY_PATH LD_LIBRARY_PATH PKG_CONFIG_PATH CMAKE_PREFIX_PATH
unset DUCTILE_JOB_ID DUCTILE_NODED_SOCKET

P="$T/prefix"
cmake --install "$BUILD" --prefix "$P" > "$T/install.log" 2>&1 || fail "install: $(cat "$T/install.log")"
for f in bin/ductile bin/ductiled bin/ductile-noded include/ductile.h lib/libductile.so \
  lib/pkgconfig/ductile.pc lib/cmake/Ductile/DuctileConfig.cmake share/ductile/examples/jacobi2d.c; do
  [ -e "$P/$f" ] || fail "not installed: $f ($(cd "$P" && find . -type f))"
done
# the soname and the links: libductile.so -> libductile.so.0 -> libductile.so.0.x.y
[ "$(readlink "$P/lib/libductile.so")" = libductile.so.0 ] || fail "dev link: $(ls -l "$P/lib")"
[[ "$(readlink "$P/lib/libductile.so.0")" =~ ^libductile\.so\.0\.[0-9]+\.[0-9]+$ ]] ||
  fail "soname link: $(ls -l "$P/lib")"
grep -q 'SONAME.*\[libductile\.so\.0\]' <<< "$(readelf -d "$P/lib/libductile.so")" ||
  fail "soname: $(readelf -d "$P/lib/libductile.so" | grep SONAME)"
# its API and the MPI wrappers only: no protocol internals an application could clash with
extra=$(nm -D --defined-only "$P/lib/libductile.so" | awk '{print $3}' | grep -Ev '^(dt_|MPI_)' || true)
[ -z "$extra" ] || fail "libductile exports more than dt_* and MPI_*: $extra"

# The application's directory: copies of the installed examples, nothing else.
A="$T/app"
mkdir -p "$A"
cp "$P/share/ductile/examples/"* "$A/"
cd "$A"
# no path into the source tree or the build directory, anywhere in a build's files
no_tree_paths() { # FILES...
  ! grep -rlF -e "$SRC/" -e "$BUILD/" "$@" 2> /dev/null
}
# MPI_Sendrecv of PROGRAM resolves to the installed libductile (the MTCT wrappers)
wrapped() { # PROGRAM ARGS...
  local b
  b=$(LD_DEBUG=bindings "$@" 2>&1 > /dev/null | grep "normal symbol \`MPI_Sendrecv'" | head -1)
  [[ "$b" == *"to $P/lib/libductile.so.0 "* ]] || fail "MPI_Sendrecv of $1 is not libductile's: '$b'"
}

# reference: the in-tree jacobi2d, plain
ref=$("$BUILD/jacobi2d" --n 64 --iters 40 | grep -o 'checksum=.*') || fail "in-tree jacobi2d"

# 1. pkg-config, as docs/malleable-apps.md shows it
export PKG_CONFIG_PATH="$P/lib/pkgconfig"
flags=$(pkg-config --cflags --libs ductile) || fail "pkg-config: $flags"
[[ "$flags" == *"-I$P/include"* && "$flags" == *"-L$P/lib -lductile"* ]] || fail "pkg-config says: $flags"
rpath="-Wl,-rpath,$(pkg-config --variable=libdir ductile)"
mpicc -o jacobi2d-pc jacobi2d.c $flags $rpath -lm 2> cc.log || fail "mpicc jacobi2d: $(cat cc.log)"
# the header it read is the installed one
mpicc -M jacobi2d.c $(pkg-config --cflags ductile) > deps.txt || fail "mpicc -M"
grep -q "$P/include/ductile.h" deps.txt || fail "ductile.h not from $P: $(cat deps.txt)"
no_tree_paths deps.txt || fail "the build read the source tree: $(cat deps.txt)"
# (grep -q on a pipe: it may stop reading before ldd is done, and pipefail then takes
# ldd's SIGPIPE for a failure, now and then)
grep -q "libductile.so.0 => $P/lib/libductile.so.0" <<< "$(ldd ./jacobi2d-pc)" ||
  fail "jacobi2d-pc loads: $(ldd ./jacobi2d-pc | grep ductile)"
got=$(./jacobi2d-pc --n 64 --iters 40 | grep -o 'checksum=.*') || fail "jacobi2d-pc did not run"
[ "$got" = "$ref" ] || fail "jacobi2d-pc: $got, in-tree: $ref"
wrapped ./jacobi2d-pc --n 16 --iters 2
mpirun --oversubscribe -np 2 ./jacobi2d-pc --n 64 --iters 40 > np2.out 2>&1 || fail "mpirun -np 2: $(cat np2.out)"
grep -q "processes=2 $ref" np2.out || fail "jacobi2d-pc on 2 processes: $(cat np2.out)"
# the process layer needs no MPI compiler: plain cc (ductile.pc brings Open MPI's flags)
cc -o taskfarm-pc taskfarm.c $flags $rpath 2> cc.log || fail "cc taskfarm: $(cat cc.log)"
./taskfarm-pc --items 20 --ms 1 > farm.out 2>&1 || fail "taskfarm-pc: $(cat farm.out)"
grep -q '^checksum [0-9a-f]* items 20' farm.out || fail "taskfarm-pc: $(cat farm.out)"

# 2. CMake: a minimal project as docs/malleable-apps.md shows it, then the installed
# examples' own CMakeLists.txt
mkdir mini && cp jacobi2d.c mini/
cat > mini/CMakeLists.txt <<'CM'
cmake_minimum_required(VERSION 3.18)
project(heat LANGUAGES C)
find_package(Ductile REQUIRED)
add_executable(heat jacobi2d.c)
target_link_libraries(heat PRIVATE Ductile::ductile)
CM
for d in mini .; do
  cmake -S "$d" -B "build-$d" -DCMAKE_PREFIX_PATH="$P" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF \
    > cmake.log 2>&1 || fail "cmake $d: $(cat cmake.log)"
  cmake --build "build-$d" > make.log 2>&1 || fail "build $d: $(cat make.log)"
  grep -q "^Ductile_DIR:PATH=$P/lib/cmake/Ductile$" "build-$d/CMakeCache.txt" ||
    fail "found Ductile at $(grep ^Ductile_DIR "build-$d/CMakeCache.txt")"
  no_tree_paths "build-$d/CMakeFiles" "build-$d/CMakeCache.txt" ||
    fail "the CMake build $d refers to the source tree or build directory"
done
got=$(build-mini/heat --n 64 --iters 40 | grep -o 'checksum=.*') || fail "heat did not run"
[ "$got" = "$ref" ] || fail "heat (CMake): $got, in-tree: $ref"
wrapped build-mini/heat --n 16 --iters 2
wrapped build-./jacobi2d --n 16 --iters 2
build-./taskfarm --items 20 --ms 1 > farm2.out 2>&1 || fail "taskfarm (CMake): $(cat farm2.out)"
cmp <(grep checksum farm.out) <(grep checksum farm2.out) || fail "taskfarm checksums differ"
grep -q '^pi: 3.14159' <<< "$(build-./pi --intervals 100000 --chunks 10)" || fail "pi (CMake)"

# 3. a cluster from PREFIX alone: the installed command starts the installed daemons,
# jobs find `ductile` on PATH as users would have it
BIN="$P/bin/ductile"
BINDIR="$P/bin"
export PATH="$P/bin:$(printf %s "$PATH" | tr : '\n' | grep -vxF "$BUILD" | paste -sd:)"
up 2
pgrep -f "^$P/bin/ductile-noded " > /dev/null || fail "the node daemons are not the installed ones"
pgrep -f "^$P/bin/ductiled " > /dev/null || fail "the controller is not the installed one"
cd "$T"
s=$(script jac.sh "#DUCTILE --nodes=2
ductile mpirun --ppn 1 $A/jacobi2d-pc --n 64 --iters 40")
j=$(submit "$s")
expect_state "$j" CD 60
grep -q "processes=2 $ref" "ductile-$j.out" || fail "jacobi2d-pc under ductile mpirun: $(cat "ductile-$j.out")"
echo ok
