# The setting of the distributed tests (tests/mpi/mpi.sh, tests/mpi/resume.sh), sourced by
# them with their arguments PTRON_BIN TMP_DIR: the binary, a work folder removed at exit, the
# mpirun command (--oversubscribe, one thread a rank; as root --allow-run-as-root), the
# sanitizer's view of Open MPI, ok/fail and the helpers that read models and JSON.
set -euo pipefail
bin=$(realpath "$1") # meson may pass it relative to the build folder
dir=$(mktemp -d "$(realpath "$2")/mpi.XXXXXX")
trap 'rm -rf "$dir"' EXIT
cd "$dir"
mpirun=(mpirun --oversubscribe -x OMP_NUM_THREADS=1)
[ "$(id -u)" -eq 0 ] && mpirun+=(--allow-run-as-root)
# Under AddressSanitizer (the sanitizer build): Open MPI's own allocations live until exit;
# its components stay loaded (no dlclose) so that LeakSanitizer can name them, and the leaks
# of its libraries are suppressed. Nothing of ptron's is.
printf 'leak:%s\n' libmpi.so libopen-pal.so libopen-rte.so mca_ libpmix libhwloc libevent \
    >lsan-mpi.supp
export OMPI_MCA_mca_base_component_disable_dlclose=1 PMIX_MCA_mca_base_component_disable_dlclose=1
supp="suppressions=$dir/lsan-mpi.supp:fast_unwind_on_malloc=0"
export LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}$supp"
mpirun+=(-x OMPI_MCA_mca_base_component_disable_dlclose
         -x PMIX_MCA_mca_base_component_disable_dlclose -x LSAN_OPTIONS)
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }

# the weights (and bias) of a linear model file, one a line (not the run's state after them)
weights() { awk '/^b /{print $2} /^w$/{w=1; next} /^(checksum|resume )/{w=0} w' "$1"; }
# max |a - b| over the weights of two models, and max |a|
wdiff() {
    paste <(weights "$1") <(weights "$2") |
        awk '{d = $1 - $2; if (d < 0) d = -d; if (d > m) m = d; a = $1 < 0 ? -$1 : $1;
              if (a > s) s = a} END {printf "%.9g %.9g\n", m, s}'
}
json_num() { sed -n "s/.*\"$2\": \([-0-9.e+]*\).*/\1/p" "$1"; }
