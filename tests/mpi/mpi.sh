#!/usr/bin/env bash
# Distributed training under mpirun (issue 20), on 1 to 4 ranks (--oversubscribe: more ranks
# than cores):
#   - np=1 writes the plain run's model byte for byte (online classic and averaged, batch full
#     batch; .ptd dense and sparse, LIBSVM, CSV with a header);
#   - online np=2..4 on separable data converges, within the bound of iterative parameter
#     mixing: updates / P <= (R / gamma)^2 (McDonald, Hall and Mann 2010, Theorem 3);
#   - batch np=2..4 equals np=1 within the README's bound, and a rerun on as many ranks gives
#     the same bytes;
#   - more than two classes (one-vs-rest online and batch, the multiclass perceptron): np=1
#     writes the plain run's bytes; online np=2..4 on separable data converges within P times
#     the serial bound of a reference separator (multiclass_bound.py); batch np=2..4 within
#     the bound; checkpoints and stops resume byte for byte;
#   - kernel one-vs-rest np=1..3 writes one process's model byte for byte, and so does the
#     binary kernel perceptron on np=2 and 3 (with one process's mistakes per epoch);
#   - a stop on one rank stops every rank, and rank 0 writes the last model they share;
#   - checkpoints (rank 0 writes them) and --resume: a run stopped after k epochs and resumed
#     writes the uninterrupted run's bytes; another number of ranks resumes it too;
#   - a rank killed mid-run, a share that does not parse, and a rank with no row each fail
#     the run on every rank, with no model file written.
#   tests/mpi/mpi.sh PTRON_BIN TMP_DIR
set -euo pipefail
bin=$(realpath "$1") # meson may pass it relative to the build folder
here=$(dirname "$(realpath "$0")")
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

"$bin" gen separable -o sep.ptd --n 4000 --d 20 --margin 0.05 --seed 3 >/dev/null
"$bin" gen noisy -o noisy.ptd --n 3000 --d 24 --seed 5 >/dev/null
"$bin" convert noisy.ptd -o noisy.svm
# CSV with a header line: only the first share holds it, every share must know it
"$bin" convert noisy.ptd -o plain.csv
{
    printf 'label'
    for i in $(seq 1 24); do printf ',f%d' "$i"; done
    echo
    cat plain.csv
} >noisy.csv
"$bin" gen sparse -o sparse.ptd --n 2000 --d 3000 --nnz 20 --seed 7 >/dev/null

# --- np=1: the plain run's bytes
for data in noisy.ptd noisy.svm noisy.csv sparse.ptd; do
    runs=("--epochs 5" "--path batch --batch-size 0 --epochs 8")
    [ "$data" = noisy.ptd ] && runs+=("--epochs 5 --averaged")
    for run in "${runs[@]}"; do
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
for data in noisy.ptd noisy.csv sparse.ptd; do
    run=(--path batch --batch-size 0 --epochs 20)
    "${mpirun[@]}" -np 1 "$bin" train "$data" -o b1.model "${run[@]}" -q
    for P in 2 3 4; do
        "${mpirun[@]}" -np "$P" "$bin" train "$data" -o bP.model "${run[@]}" -q
        read -r d s < <(wdiff b1.model bP.model)
        if awk -v d="$d" -v s="$s" 'BEGIN {exit !(s > 0 && d <= 1e-5 * s)}'
        then ok "batch np=$P $data: max |w - w_np1| = $d <= 1e-5 x $s"
        else fail "batch np=$P $data: max |w - w_np1| = $d, max |w_np1| = $s"; fi
        [ "$P" -eq 3 ] || continue # (one rerun: each takes seconds under the sanitizers)
        "${mpirun[@]}" -np "$P" "$bin" train "$data" -o again.model "${run[@]}" -q
        if cmp -s bP.model again.model; then ok "batch np=$P $data: rerun same bytes"
        else fail "batch np=$P $data: a rerun on $P ranks wrote other bytes"; fi
    done
done

# --- more than two classes on the online and batch paths: each one-vs-rest class mixed by
# itself (online) or its gradient summed (batch); the multiclass perceptron's matrix mixed whole
"$bin" gen blobs -o blobs4.ptd --n 3000 --d 10 --classes 4 --seed 2 >/dev/null
"$bin" convert blobs4.ptd -o blobs4.csv
"$bin" gen blobs -o blobs5.ptd --n 3000 --d 3 --classes 5 --seed 4 >/dev/null # not separable
for run in "--epochs 6" "--epochs 6 --averaged --shuffle" "--epochs 6 --multiclass direct" \
    "--epochs 6 --multiclass direct --averaged --shuffle" "--path batch --batch-size 0 --epochs 8"
do
    "$bin" train blobs5.ptd -o plain.model $run -q
    "${mpirun[@]}" -np 1 "$bin" train blobs5.ptd -o np1.model $run -q
    if cmp -s plain.model np1.model; then ok "np=1 5 classes $run: same bytes"
    else fail "np=1 5 classes $run: the model differs from the plain run's"; fi
done
for mc in ovr direct; do
    "$bin" train blobs4.ptd -o ref.model --epochs 500 --multiclass "$mc" -q
    bound=$(/usr/bin/python3 "$here/multiclass_bound.py" ref.model blobs4.csv "$mc")
    for P in 2 3 4; do
        "${mpirun[@]}" -np "$P" "$bin" train blobs4.ptd -o mc.model --epochs 500 \
            --multiclass "$mc" --json >mc.json
        conv=$(grep -c '"converged": true' mc.json || true)
        upd=$(json_num mc.json updates)
        acc=$(json_num mc.json train_accuracy)
        if [ "$conv" = 1 ] && [ "$acc" = 1 ] &&
            awk -v u="$upd" -v p="$P" -v b="$bound" 'BEGIN {exit !(u <= p * b)}'
        then ok "online 4 classes --multiclass $mc np=$P: converged, $upd updates <= $P x $bound"
        else fail "online 4 classes --multiclass $mc np=$P: converged=$conv accuracy=$acc" \
            "updates=$upd, bound $P x $bound"; fi
    done
done
# the weight matrix of a multiclass model, one a line
matrix() { awk '/^W$/{w=1; next} /^(checksum|resume )/{w=0} w {for (i = 1; i <= NF; i++) print $i}' "$1"; }
"${mpirun[@]}" -np 1 "$bin" train blobs4.ptd -o b1.model --path batch --batch-size 0 --epochs 20 -q
for P in 2 3 4; do
    "${mpirun[@]}" -np "$P" "$bin" train blobs4.ptd -o bP.model --path batch --batch-size 0 \
        --epochs 20 -q
    read -r d s < <(paste <(matrix b1.model) <(matrix bP.model) |
        awk '{d = $1 - $2; if (d < 0) d = -d; if (d > m) m = d; a = $1 < 0 ? -$1 : $1;
              if (a > s) s = a} END {printf "%.9g %.9g\n", m, s}')
    if awk -v d="$d" -v s="$s" 'BEGIN {exit !(s > 0 && d <= 1e-5 * s)}'
    then ok "batch 4 classes np=$P: max |W - W_np1| = $d <= 1e-5 x $s"
    else fail "batch 4 classes np=$P: max |W - W_np1| = $d, max |W_np1| = $s"; fi
done
for run in "--epochs E --averaged --shuffle" "--epochs E --multiclass direct --averaged --shuffle" \
    "--path batch --batch-size 0 --epochs E"; do
    "${mpirun[@]}" -np 3 "$bin" train blobs5.ptd -o full.model ${run//E/10} -q
    rm -f ck.model
    "${mpirun[@]}" -np 3 "$bin" train blobs5.ptd -o part.model ${run//E/4} --checkpoint ck.model -q
    "${mpirun[@]}" -np 3 "$bin" train blobs5.ptd -o res.model --resume ck.model --epochs 10 -q
    rc=0
    PTRON_TEST_STOP_RANK=1:5 "${mpirun[@]}" -x PTRON_TEST_STOP_RANK -np 3 "$bin" train \
        blobs5.ptd -o st.model ${run//E/10} -q >st.out 2>&1 || rc=$?
    "${mpirun[@]}" -np 3 "$bin" train blobs5.ptd -o res2.model --resume st.model -q
    if cmp -s full.model res.model && [ "$rc" -ne 0 ] && cmp -s full.model res2.model
    then ok "5 classes np=3 $run: checkpoint of epoch 4, and a stop after epoch 5, resumed = 10"
    else fail "5 classes np=3 $run: a resumed model differs (stop: exit $rc)"; fi
done
# what stays refused keeps its message
rc=0
"${mpirun[@]}" -np 2 "$bin" train blobs5.ptd -o v.model --voted -q >v.out 2>&1 || rc=$?
if [ "$rc" -eq 2 ] && grep -q "does not support the voted variant" v.out && [ ! -e v.model ]
then ok "5 classes np=2 --voted: refused"
else fail "5 classes np=2 --voted: exit $rc, $(head -c 300 v.out)"; fi

# --- kernel path, one-vs-rest: the classes split across the ranks, the same model bytes
"$bin" gen blobs -o blobs.ptd --n 600 --d 5 --classes 5 --seed 2 >/dev/null
for run in "--kernel rbf --epochs 5" "--kernel poly --degree 2 --epochs 4 --averaged"; do
    "$bin" train blobs.ptd -o k.model --path kernel $run -q
    for P in 1 2 3; do
        "${mpirun[@]}" -np "$P" "$bin" train blobs.ptd -o kP.model --path kernel $run -q
        if cmp -s k.model kP.model; then ok "kernel one-vs-rest np=$P $run: same bytes"
        else fail "kernel one-vs-rest np=$P $run: the model differs from one process's"; fi
    done
done

# --- kernel path, two classes: the rows split across the ranks, one process's mistakes (the
# same mistakes_per_epoch) and model bytes, on each storage of K, dense and sparse
mpe() { grep -o '"mistakes_per_epoch": \[[^]]*\]' "$1"; }
for run in "noisy.ptd --kernel rbf --epochs 4" \
    "noisy.ptd --kernel poly --degree 2 --epochs 3 --averaged --gram full" \
    "noisy.ptd --kernel rbf --epochs 3 --gram rows --cache-mb 1 --budget 300" \
    "sparse.ptd --kernel rbf --epochs 3 --averaged"; do
    "$bin" train $run -o k2.model --path kernel -q --json >k2.json
    for P in 2 3; do
        "${mpirun[@]}" -np "$P" "$bin" train $run -o k2P.model --path kernel -q --json >k2P.json
        if cmp -s k2.model k2P.model && [ -n "$(mpe k2.json)" ] &&
            [ "$(mpe k2.json)" = "$(mpe k2P.json)" ]; then
            ok "kernel binary np=$P $run: same mistakes, same bytes"
        else fail "kernel binary np=$P $run: $(mpe k2P.json) against one process's" \
            "$(mpe k2.json), or the model differs"; fi
    done
done
rc=0
"${mpirun[@]}" -np 2 "$bin" train noisy.ptd -o k2s.model --path kernel --shuffle -q \
    >k2s.out 2>&1 || rc=$?
if [ "$rc" -eq 2 ] && grep -q "does not support shuffling" k2s.out && [ ! -e k2s.model ]; then
    ok "kernel binary np=2 --shuffle: refused"
else fail "kernel binary np=2 --shuffle: exit $rc, $(head -c 300 k2s.out)"; fi

# --- one rank stopped (as by SIGINT) at the end of epoch 7: every rank stops, rank 0 writes
# the last model they share: online, the mix of epoch 7; batch, the step of epoch 8 taken
for run in "online 7" "batch 8"; do
    set -- $run
    args=(--path "$1" --batch-size 0)
    "${mpirun[@]}" -np 2 "$bin" train noisy.ptd -o ref.model "${args[@]}" --epochs "$2" -q
    rc=0
    PTRON_TEST_STOP_RANK=1:7 "${mpirun[@]}" -x PTRON_TEST_STOP_RANK -np 2 "$bin" train \
        noisy.ptd -o stopped.model "${args[@]}" --epochs 200 -q >stop.out 2>&1 || rc=$?
    if [ "$rc" -ne 0 ] && [ -e stopped.model ] &&
        cmp -s <(weights ref.model) <(weights stopped.model)
    then ok "$1: rank 1 stopped after epoch 7: exit $rc, the shared model of epoch $2 written"
    else fail "$1: rank 1 stopped: exit $rc, output: $(cat stop.out)"; fi
    rm -f stopped.model
done

# --- checkpoints and --resume: rank 0 writes the state all ranks share at the end of an epoch
# (the mixed model, the averaged sums, the samples of all ranks; each rank's shuffle stream is
# replayed from the seed). A run of 10 epochs writes the same bytes as a run of 4 epochs with
# --checkpoint resumed to 10, and as a run stopped (as by SIGINT, on rank 1 after epoch 5: the
# stop comes before epoch 6, not after a sleep) resumed to 10.
for run in "--epochs E" "--epochs E --averaged --shuffle --mix mistakes" \
    "--path batch --batch-size 0 --epochs E"; do
    for P in 2 3; do
        "${mpirun[@]}" -np "$P" "$bin" train noisy.ptd -o full.model ${run//E/10} -q
        rm -f ck.model
        "${mpirun[@]}" -np "$P" "$bin" train noisy.ptd -o part.model ${run//E/4} \
            --checkpoint ck.model -q
        mix=()
        [[ "$run" == *mistakes* ]] && mix=(--mix mistakes) # not kept in the model: given again
        "${mpirun[@]}" -np "$P" "$bin" train noisy.ptd -o res.model --resume ck.model \
            --epochs 10 "${mix[@]}" -q
        if cmp -s full.model res.model; then ok "np=$P $run: 4 epochs + checkpoint + resume = 10"
        else fail "np=$P $run: resumed from the checkpoint of epoch 4, the model differs"; fi
        [ "$P" -eq 3 ] || continue
        rc=0
        PTRON_TEST_STOP_RANK=1:5 "${mpirun[@]}" -x PTRON_TEST_STOP_RANK -np "$P" "$bin" train \
            noisy.ptd -o st.model ${run//E/10} -q >st.out 2>&1 || rc=$?
        "${mpirun[@]}" -np "$P" "$bin" train noisy.ptd -o res.model --resume st.model \
            "${mix[@]}" -q
        if [ "$rc" -ne 0 ] && grep -q -- "--resume st.model" st.out && cmp -s full.model res.model
        then ok "np=$P $run: stopped after epoch 5 (exit $rc) and resumed = 10 epochs"
        else fail "np=$P $run: stopped (exit $rc) and resumed, the model differs: $(cat st.out)"
        fi
    done
done
# another number of ranks: the state is every rank's, so it resumes on any (README): the batch
# path then equals the uninterrupted run within the bound; the online path goes on mixing
# from the checkpoint's weights over the new shares (and in one process)
for run in "--epochs E --averaged" "--path batch --batch-size 0 --epochs E"; do
    "${mpirun[@]}" -np 2 "$bin" train noisy.ptd -o full.model ${run//E/10} -q
    rm -f ck.model
    "${mpirun[@]}" -np 2 "$bin" train noisy.ptd -o part.model ${run//E/4} --checkpoint ck.model -q
    "${mpirun[@]}" -np 3 "$bin" train noisy.ptd -o res3.model --resume ck.model --epochs 10 \
        --json >res3.json
    "$bin" train noisy.ptd -o res1.model --resume ck.model --epochs 10 --json >res1.json
    read -r d s < <(wdiff full.model res3.model)
    if grep -q '"epochs_run": 10' res3.json && grep -q '"epochs_run": 10' res1.json &&
        { [[ "$run" != *batch* ]] || awk -v d="$d" -v s="$s" 'BEGIN {exit !(d <= 1e-5 * s)}'; }
    then ok "$run: checkpoint of np=2 resumed on 3 ranks and in one process (max |dw| $d)"
    else fail "$run: checkpoint of np=2 resumed on 3 ranks: $(head -c 300 res3.json)"; fi
done
# a run stopped inside an epoch (one process: its position is in its own order) is refused
rc=0
PTRON_TEST_STOP_RANK=0:3 "$bin" train noisy.ptd -o mid.model --epochs 10 -q >/dev/null 2>&1 ||
    rc=$?
rc2=0
"${mpirun[@]}" -np 2 "$bin" train noisy.ptd -o mid2.model --resume mid.model -q >mid.out 2>&1 ||
    rc2=$?
if [ "$rc" -ne 0 ] && [ "$rc2" -eq 2 ] && grep -q "stopped inside an epoch" mid.out &&
    [ ! -e mid2.model ]
then ok "a one-process run stopped inside an epoch: its resume on 2 ranks refused"
else fail "mid-epoch resume on 2 ranks: exit $rc/$rc2, $(head -c 300 mid.out)"; fi

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
