#!/usr/bin/env bash
# The figures of docs/performance/intel-xeon-16core.md (its files in intel-xeon-16core/), made on a
# lent machine without apt (Ubuntu 24.04 image, 16 cores, run as root) by
#   bench/device-16core.sh OUT_DIR
# from the repository root, with .dev/ holding the Debian 12 debs of what the build needs
# (apt-get download openmpi-bin openmpi-common libopenmpi3 libopenmpi-dev and its libraries,
# libopenblas0-openmp libopenblas-openmp-dev libopenblas-dev libxxhash-dev libxxhash0 pkgconf
# pkgconf-bin libpkgconf3 zlib1g-dev libbenchmark-dev libbenchmark1debian): they are unpacked into /tmp/sys and found through
# pkg-config's sysroot and Open MPI's OPAL_PREFIX. ptron is built there, not carried.
set -uo pipefail
out=${1:?usage: bench/device-16core.sh OUT_DIR [all|kernel]}
what=${2:-all}
S=/tmp/sys; mkdir -p $S
for f in .dev/*.deb; do dpkg -x "$f" $S; done
ln -sf pkgconf $S/usr/bin/pkg-config
# zlib: the image's shared library (the deb's libz.so points outside the sysroot, and its
# static libz.a cannot go into a shared object)
rm -f $S/usr/lib/x86_64-linux-gnu/libz.a
ln -sf /usr/lib/x86_64-linux-gnu/libz.so.1 $S/usr/lib/x86_64-linux-gnu/libz.so
ln -sf mpirun.openmpi $S/usr/bin/mpirun
export PATH=$S/usr/bin:$PATH
export PKG_CONFIG_PATH=$S/usr/lib/x86_64-linux-gnu/pkgconfig:$S/usr/share/pkgconfig
export PKG_CONFIG_SYSROOT_DIR=$S OPAL_PREFIX=$S/usr
export LD_LIBRARY_PATH=$S/usr/lib/x86_64-linux-gnu/openblas-openmp:$S/usr/lib/x86_64-linux-gnu/openmpi/lib:$S/usr/lib/x86_64-linux-gnu
# shared memory between the ranks of one machine; no fabric libraries to probe
export OMPI_MCA_mtl=^ofi,psm OMPI_MCA_btl=self,vader OMPI_MCA_pml=ob1
{ lscpu | grep -E "Model name|^CPU\(s\)|L3|NUMA node\(s\)|Flags" | sed 's/Flags:.*\(avx512_bf16\).*/Flags: ... \1 .../'
  gcc --version | head -1; meson --version; mpirun --version | head -1; } >"$out/machine.txt" 2>&1
rm -rf /tmp/b
meson setup /tmp/b -Dtests=false -Dbench=enabled -Dpython=disabled -Dmpi=enabled \
    -Dbuildtype=release >"$out/setup.log" 2>&1 || { tail -30 "$out/setup.log"; exit 1; }
ninja -C /tmp/b >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
P=/tmp/b/src/ptron
if [ "$what" = kernel ]; then
    # issue 19 on a quiet machine: the Gram builds against OpenBLAS sgemm with its SkylakeX
    # kernels (Debian's OpenBLAS 0.3.21 does not know this CPU and would run generic ones:
    # OPENBLAS_CORETYPE names the kernels), and the ten-class 60,000 x 784 RBF run, stage by
    # stage, on all 16 cores
    OPENBLAS_CORETYPE=SkylakeX timeout 120 /tmp/b/bench/ptron-bench \
        --benchmark_filter='gram/build/impl:(sgemm|ssyrk|tiled)' >"$out/gram-16core.txt" 2>&1
    K=/tmp/k; mkdir -p $K
    python3 scripts/make-digits784 --n 60000 --test-n 10000 --seed 1 -o $K/d784.svm \
        --test-out $K/d784t.svm >/dev/null 2>&1
    $P convert $K/d784.svm --layout dense -o $K/d784.ptd >/dev/null
    $P convert $K/d784t.svm --layout dense -o $K/d784t.ptd >/dev/null
    { time timeout 200 $P train $K/d784.ptd $K/m.model --path kernel --kernel rbf \
          --averaged --epochs 30 --json; $P predict $K/m.model $K/d784t.ptd --json; } \
        >"$out/kernel-10class-16core.log" 2>&1
    exit 0
fi
timeout 120 python3 scripts/mpi-scaling $P 16 --reps 3 --dir /tmp/ms \
    >"$out/mpi-scaling.md" 2>"$out/mpi-scaling.err"
echo "mpi-scaling exit $?" >>"$out/mpi-scaling.err"
# the sparse paths' comparisons with scikit-learn and scipy on the same CSR matrix (this image's
# python3 has them)
timeout 150 python3 scripts/compare-sparse-online --ptron $P >"$out/sparse-online-16core.json" 2>&1
timeout 100 python3 scripts/compare-sparse-batch --ptron $P >"$out/sparse-batch-16core.json" 2>&1
# the suite's compact-storage and Gram benchmarks on a quiet machine (threads 1 and 2)
timeout 120 /tmp/b/bench/ptron-bench --benchmark_filter='online/compact|gram/build' \
    >"$out/bench-16core.txt" 2>&1
# compact storage through the CLI: the online epoch on 200,000 x 256 as f32 and bf16, one thread
W=/tmp/compact; mkdir -p $W
$P gen noisy --n 200000 --d 256 --seed 1 -o $W/f32.ptd >/dev/null
$P convert $W/f32.ptd -o $W/bf16.ptd --dtype bf16 >/dev/null
for t in f32 bf16; do
    echo "== $t"; $P info $W/$t.ptd | head -4
    timeout 60 $P bench $W/$t.ptd --paths online --reps 5 --threads 1 --epochs 10
done >"$out/compact-16core.log" 2>&1
# a streamed epoch (--mem-mb 64: the 205 MB matrix read from the page cache a window at a
# time) against the in-memory one, one thread, medians of the epochs
for mem in 0 64; do
    timeout 60 $P train $W/f32.ptd -o $W/m.model --epochs 10 --threads 1 --json \
        $([ $mem -gt 0 ] && echo --mem-mb $mem) >$W/stream-$mem.json
    python3 -c "import json,statistics,sys; j=json.load(open(sys.argv[1])); print(sys.argv[2], j.get('data_mode'), 'epoch ms', round(1e3*statistics.median(j['seconds_per_epoch']), 2))" $W/stream-$mem.json "mem_mb=$mem"
done >"$out/stream-16core.log" 2>&1
