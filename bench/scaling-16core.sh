#!/usr/bin/env bash
# How docs/performance/intel-xeon-16core/scaling-16core.log was made: on a machine without apt (the lent 16-core Xeon), the
# Debian debs of openblas-openmp, libxxhash and pkgconf (apt-get download ... into .dev/) are
# unpacked into /tmp/sys, ptron is built there, and the CLI is timed at 1..16 threads.
set -uo pipefail
S=/tmp/sys; mkdir -p $S
for f in .dev/*.deb; do dpkg -x "$f" $S; done
export PATH=$S/usr/bin:$PATH
export PKG_CONFIG_PATH=$S/usr/lib/x86_64-linux-gnu/pkgconfig:$S/usr/share/pkgconfig
export PKG_CONFIG_SYSROOT_DIR=$S
export LD_LIBRARY_PATH=$S/usr/lib/x86_64-linux-gnu/openblas-openmp:$S/usr/lib/x86_64-linux-gnu
ln -sf pkgconf $S/usr/bin/pkg-config
# the openblas .pc names libdir/includedir with absolute paths: the sysroot prefixes them
lscpu | grep -E "Model name|^CPU\(s\)|L3" ; gcc --version | head -1; meson --version
meson setup /tmp/b -Dtests=false -Dbench=disabled -Dbuildtype=release >/tmp/setup.log 2>&1 || { tail -30 /tmp/setup.log; exit 1; }
ninja -C /tmp/b >/tmp/build.log 2>&1 || { tail -30 /tmp/build.log; exit 1; }
P=/tmp/b/src/ptron
D=/tmp/data; mkdir -p $D
$P gen separable --n 200000 --d 256 --seed 1 -o $D/sep.ptd >/dev/null
$P gen noisy --n 200000 --d 256 --seed 1 -o $D/noisy.ptd >/dev/null
$P gen blobs --n 60000 --d 784 --classes 10 --seed 1 -o $D/blobs.ptd >/dev/null
$P gen circle --n 8192 --d 256 --seed 1 -o $D/circle.ptd >/dev/null
$P convert $D/sep.ptd -o $D/sep.svm >/dev/null
J() { /usr/bin/env python3 -c "import json,sys; j=json.load(sys.stdin); print(' '.join(str(eval(e, {}, {'j': j})) for e in sys.argv[1:]))" "$@"; }
med() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
echo "== online 200000x256 separable: ms per epoch (train_seconds/epochs), median of 3"
for pass in sequential blocked; do for t in 1 2 4 8 16; do
  [ $pass = sequential ] && [ $t -gt 1 ] && continue
  v=$(for r in 1 2 3; do $P train $D/sep.ptd -o /tmp/m --pass $pass --threads $t --epochs 100 --json | J "j['train_seconds']/j['epochs_run']*1000"; done | med)
  echo "online $pass threads=$t ms/epoch=$v"; done; done
echo "== batch noisy 200000x256 hinge: ms per iteration"
for impl in gemv fused; do for t in 1 2 4 8 16; do
  v=$(for r in 1 2 3; do $P train $D/noisy.ptd -o /tmp/m --path batch --loss hinge --batch-impl $impl --threads $t --epochs 10 --json | J "j['train_seconds']/j['epochs_run']*1000"; done | med)
  echo "batch $impl threads=$t ms/iter=$v"; done; done
echo "== multiclass blobs 60000x784, 10 classes: seconds for the run (epochs_run)"
for mc in ovr direct; do for t in 1 2 4 8 16; do
  [ $mc = direct ] && [ $t -gt 1 ] && continue
  v=$(for r in 1 2 3; do $P train $D/blobs.ptd -o /tmp/m --multiclass $mc --threads $t --epochs 3 --json | J "j['train_seconds']/j['epochs_run']*1000"; done | med)
  echo "multiclass $mc threads=$t ms/epoch=$v"; done; done
echo "== kernel rbf circle 8192x256 (Gram full), train seconds"
for t in 1 2 4 8 16; do
  v=$(for r in 1 2 3; do $P train $D/circle.ptd -o /tmp/m --path kernel --kernel rbf --gamma 0.01 --gram full --threads $t --epochs 3 --json | J "j['train_seconds']"; done | med)
  echo "kernel threads=$t seconds=$v"; done
echo "== LIBSVM read of $(du -m $D/sep.svm | cut -f1) MB: MB/s"
for t in 1 2 4 8 16; do
  v=$(for r in 1 2 3; do OMP_NUM_THREADS=$t $P info $D/sep.svm --json | J "round($(stat -c %s $D/sep.svm)/1e6/j['load_seconds'])"; done | med)
  echo "libsvm read threads=$t MB/s=$v"; done
