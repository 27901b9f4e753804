#!/usr/bin/env bash
# Distributed training under mpirun (issue 20): checkpoints, --resume and more than two classes
# on the online and batch paths (tests/mpi/mpi.sh has the rest):
#   - checkpoints (rank 0 writes them) and --resume: a run stopped after k epochs (by
#     --epochs k with --checkpoint, or by a stop on rank 1 at the end of epoch k) and resumed
#     writes the uninterrupted run's bytes, online (averaged, shuffled, both mixings) and
#     batch (full batch, and shuffled mini-batches: stopped inside epoch 6), at np=2 and 3;
#     another number of ranks resumes it too (docs/guide.md); refusals;
#   - more than two classes (one-vs-rest online and batch, the multiclass perceptron): np=1
#     writes the plain run's bytes; online np=2..4 on separable data converges within P times
#     the serial bound of a reference separator (multiclass_bound.py); batch np=2..4 within
#     the bound of docs/theory.md; checkpoints and stops resume byte for byte.
#   tests/mpi/resume.sh PTRON_BIN TMP_DIR
here=$(dirname "$(realpath "$0")")
source "$here/lib.sh"

"$bin" gen separable -o sep.ptd --n 4000 --d 20 --margin 0.05 --seed 3 >/dev/null
"$bin" gen noisy -o noisy.ptd --n 3000 --d 24 --seed 5 >/dev/null

# --- checkpoints and --resume: rank 0 writes the state all ranks share at the end of an epoch
# (the mixed model, the averaged sums, the samples of all ranks; each rank's shuffle stream is
# replayed from the seed). A run of 10 epochs writes the same bytes as a run of 4 epochs with
# --checkpoint resumed to 10, and as a run stopped (as by SIGINT, on rank 1 after epoch 5: the
# stop comes before epoch 6, not after a sleep) resumed to 10.
for run in "--epochs E --averaged --shuffle --mix mistakes" \
    "--path batch --batch-size 0 --epochs E" "--path batch --shuffle --epochs E"; do
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
# another number of ranks: the state is every rank's, so it resumes on any (docs/guide.md): the batch
# path then equals the uninterrupted run within the bound; the online path goes on mixing
# from the checkpoint's weights over the new shares (and in one process)
for run in "--epochs E --averaged" "--path batch --batch-size 0 --epochs E"; do
    [[ "$run" != *batch* ]] ||
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
# a checkpoint of other data: every rank refuses it before any communication; rank 0 says why
rc=0
"${mpirun[@]}" -np 2 "$bin" train sep.ptd -o other.model --resume ck.model -q >other.out 2>&1 ||
    rc=$?
if [ "$rc" -eq 2 ] && [ "$(grep -c 'the run to resume' other.out)" = 1 ] && [ ! -e other.model ]
then ok "np=2 --resume of another data set's checkpoint: refused, said once"
else fail "np=2 --resume of another data set's checkpoint: exit $rc, $(head -c 300 other.out)"; fi
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

# --- more than two classes on the online and batch paths: each one-vs-rest class mixed by
# itself (online) or its gradient summed (batch); the multiclass perceptron's matrix mixed whole
"$bin" gen blobs -o blobs4.ptd --n 3000 --d 10 --classes 4 --seed 2 >/dev/null
"$bin" convert blobs4.ptd -o blobs4.csv
"$bin" gen blobs -o blobs5.ptd --n 3000 --d 3 --classes 5 --seed 4 >/dev/null # not separable
for run in "--epochs 6 --averaged --shuffle" "--epochs 6 --multiclass direct --averaged --shuffle" \
    "--path batch --batch-size 0 --epochs 8"; do
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
for run in "--epochs E --averaged --shuffle" "--epochs E --multiclass direct --averaged --shuffle"
do
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

[ "$fails" -eq 0 ] || { echo "$fails failed" >&2; exit 1; }
echo "all passed"
