#!/usr/bin/env bash
# Distributed training under mpirun (issue 20), on 1 to 4 ranks (--oversubscribe: more ranks
# than cores):
#   - np=1 writes the plain run's model byte for byte (online classic and averaged, batch full
#     batch; .ptd dense and sparse, LIBSVM);
#   - online np=2..4 on separable data converges, within the bound of iterative parameter
#     mixing: updates / P <= (R / gamma)^2 (McDonald, Hall and Mann 2010, Theorem 3);
#   - batch np=2..4 equals np=1 within the README's bound, and a rerun on as many ranks gives
#     the same bytes;
#   - a rank killed mid-run, a share that does not parse, and a rank with no row each fail
#     the run on every rank, with no model file written.
#   tests/mpi/mpi.sh PTRON_BIN TMP_DIR
set -euo pipefail
bin=$(realpath "$1") # meson may pass it relative to the build folder
dir=$(mktemp -d "$2/mpi.XXXXXX")
trap 'rm -rf "$dir"' EXIT
cd "$dir"
mpirun=(mpirun --oversubscribe -x OMP_NUM_THREADS=1)
[ "$(id -u)" -eq 0 ] && mpirun+=(--allow-run-as-root)
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }

# the weights (and bias) of a linear model file, one a line
weights() { awk '/^b /{print $2} /^w$/{w=1; next} /^checksum/{w=0} w' "$1"; }
# max |a - b| over the weights of two models, and max |a|
wdiff() {
    paste <(weights "$1") <(weights "$2") |
        awk '{d = $1 - $2; if (d < 0) d = -d; if (d > m) m = d; a = $1 < 0 ? -$1 : $1;
              if (a > s) s = a} END {printf "%.9g %.9g\n", m, s}'
}
json_num() { sed -n "s/.*\"$2\": \([-0-9.e+]*\).*/\1/p" "$1"; }

"$bin" gen separable -o sep.ptd --n 4000 --d 20 --margin 0.05 --seed 3 >/dev/null
"$bin" gen noisy -o noisy.ptd --n 3000 --d 24 --seed 5 >/dev/null
"$bin" convert noisy.ptd -o noisy.svm
"$bin" gen sparse -o sparse.ptd --n 2000 --d 3000 --nnz 20 --seed 7 >/dev/null

# --- np=1: the plain run's bytes
for data in noisy.ptd noisy.svm sparse.ptd; do
    for run in "--epochs 5" "--epochs 5 --averaged" "--path batch --batch-size 0 --epochs 8"; do
        "$bin" train "$data" -o plain.model $run -q
        "${mpirun[@]}" -np 1 "$bin" train "$data" -o np1.model $run -q
        if cmp -s plain.model np1.model; then ok "np=1 $data $run: same bytes"
        else fail "np=1 $data $run: the model differs from the plain run's"; fi
    done
done

# --- online np=2..4 on separable data: converges within the IPM bound
"$bin" info sep.ptd --json >info.json
R=$(json_num info.json truth_R)
G=$(json_num info.json truth_gamma)
for mix in uniform mistakes; do
    for P in 2 3 4; do
        "${mpirun[@]}" -np "$P" "$bin" train sep.ptd -o ipm.model --epochs 200 --no-bias \
            --mix "$mix" --json >ipm.json
        conv=$(grep -c '"converged": true' ipm.json || true)
        upd=$(json_num ipm.json updates)
        acc=$(json_num ipm.json train_accuracy)
        if [ "$conv" = 1 ] && [ "$acc" = 1 ] &&
            awk -v u="$upd" -v p="$P" -v r="$R" -v g="$G" 'BEGIN {exit !(u / p <= (r / g)^2)}'
        then ok "online np=$P --mix $mix: converged, $upd updates, $upd/$P <= (R/gamma)^2"
        else fail "online np=$P --mix $mix: converged=$conv accuracy=$acc updates=$upd, R=$R gamma=$G"
        fi
    done
done

# --- batch np=2..4 against np=1: |w_P - w_1| <= 1e-5 max |w_1|; reruns bit-identical
for data in noisy.ptd sparse.ptd; do
    run=(--path batch --batch-size 0 --epochs 20)
    "${mpirun[@]}" -np 1 "$bin" train "$data" -o b1.model "${run[@]}" -q
    for P in 2 3 4; do
        "${mpirun[@]}" -np "$P" "$bin" train "$data" -o bP.model "${run[@]}" -q
        read -r d s < <(wdiff b1.model bP.model)
        if awk -v d="$d" -v s="$s" 'BEGIN {exit !(s > 0 && d <= 1e-5 * s)}'
        then ok "batch np=$P $data: max |w - w_np1| = $d <= 1e-5 x $s"
        else fail "batch np=$P $data: max |w - w_np1| = $d, max |w_np1| = $s"; fi
        "${mpirun[@]}" -np "$P" "$bin" train "$data" -o again.model "${run[@]}" -q
        if cmp -s bP.model again.model; then ok "batch np=$P $data: rerun same bytes"
        else fail "batch np=$P $data: a rerun on $P ranks wrote other bytes"; fi
    done
done

# --- failures end every rank, and no model is written
# a rank killed at the end of epoch 1 of 200 (noisy data never converges)
rc=0
PTRON_TEST_KILL_RANK=1:1 "${mpirun[@]}" -x PTRON_TEST_KILL_RANK -np 2 "$bin" train noisy.ptd \
    -o killed.model --epochs 200 -q >kill.out 2>&1 || rc=$?
if [ "$rc" -ne 0 ] && [ ! -e killed.model ]; then ok "rank 1 killed: exit $rc, no model"
else fail "rank 1 killed: exit $rc, model written: $([ -e killed.model ] && echo yes || echo no)"
fi
# a line of rank 1's share does not parse
{ head -n 2000 noisy.svm; echo "1 3:x"; tail -n +2001 noisy.svm; } >bad.svm
rc=0
"${mpirun[@]}" -np 2 "$bin" train bad.svm -o bad.model -q >bad.out 2>&1 || rc=$?
if [ "$rc" -ne 0 ] && [ ! -e bad.model ] && grep -q "rank 1 of 2" bad.out
then ok "unreadable share: exit $rc, message names rank 1, no model"
else fail "unreadable share: exit $rc, output: $(cat bad.out)"; fi
# more ranks than rows: a rank has none
"$bin" gen separable -o tiny.ptd --n 3 --d 2 >/dev/null
rc=0
"${mpirun[@]}" -np 4 "$bin" train tiny.ptd -o tiny.model -q >tiny.out 2>&1 || rc=$?
if [ "$rc" -ne 0 ] && [ ! -e tiny.model ] && grep -q "rank 0 of 4" tiny.out &&
    grep -q "no data rows" tiny.out
then ok "a rank with no row: exit $rc, message names it, no model"
else fail "a rank with no row: exit $rc, output: $(cat tiny.out)"; fi

[ "$fails" -eq 0 ] || { echo "$fails failed" >&2; exit 1; }
echo "all passed"
