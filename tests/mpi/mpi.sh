#!/usr/bin/env bash
# Distributed training under mpirun (issue 20), on 1 to 4 ranks (--oversubscribe: more ranks
# than cores):
#   - np=1 writes the plain run's model byte for byte (online classic and averaged, batch full
#     batch and mini-batches; .ptd dense, sparse and bf16, LIBSVM, CSV with a header);
#   - shares of a bf16 or u8 file on np=2, 3 train the float32 copy's model byte for byte
#     (online averaged, batch full batch);
#   - online np=2..4 on separable data converges, within the bound of iterative parameter
#     mixing: updates / P <= (R / gamma)^2 (McDonald, Hall and Mann 2010, Theorem 3);
#   - batch np=2..4 equals np=1 within the bound of docs/theory.md, and a rerun on as many ranks gives
#     the same bytes; mini-batches (the default) run, and equal one process on the rows in the
#     order of their global blocks within that bound;
#   - kernel one-vs-rest np=1..3 writes one process's model byte for byte, and so does the
#     binary kernel perceptron on np=2 and 3 (with one process's mistakes per epoch);
#   - a stop on one rank stops every rank, and rank 0 writes the last model they share;
#   - a rank killed mid-run, a share that does not parse, and a rank with no row each fail
#     the run on every rank, with no model file written;
#   - ranks given other files or other options fail, every one, exit 2, with a message that
#     names the rank and what differs.
# More than two classes, checkpoints and --resume: tests/mpi/resume.sh.
#   tests/mpi/mpi.sh PTRON_BIN TMP_DIR
source "$(dirname "$(realpath "$0")")/lib.sh"


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
# compact storage: bf16 of the noisy rows, u8 of them scaled to [0, 1], and the float32 copies
"$bin" convert noisy.ptd -o noisy16.ptd --dtype bf16
"$bin" scale noisy.ptd -o noisy01.ptd --range 0,1 >/dev/null
"$bin" convert noisy01.ptd -o noisy8.ptd --dtype u8
"$bin" convert noisy16.ptd -o noisy16f.ptd --dtype f32
"$bin" convert noisy8.ptd -o noisy8f.ptd --dtype f32

# --- np=1: the plain run's bytes
for data in noisy.ptd noisy.svm noisy.csv sparse.ptd noisy16.ptd; do
    runs=("--epochs 5" "--path batch --batch-size 0 --epochs 8" "--path batch")
    [ "$data" = noisy.ptd ] && runs+=("--epochs 5 --averaged")
    for run in "${runs[@]}"; do
        "$bin" train "$data" -o plain.model $run -q
        "${mpirun[@]}" -np 1 "$bin" train "$data" -o np1.model $run -q
        if cmp -s plain.model np1.model; then ok "np=1 $data $run: same bytes"
        else fail "np=1 $data $run: the model differs from the plain run's"; fi
    done
done

# --- compact shares (each rank's rows mapped as stored, widened as they are read): the model
# of the float32 copy on as many ranks, byte for byte
for c in noisy16 noisy8; do
    for run in "--epochs 5 --averaged" "--path batch --batch-size 0 --epochs 8"; do
        for P in 2 3; do
            "${mpirun[@]}" -np "$P" "$bin" train "$c.ptd" -o c.model $run -q
            "${mpirun[@]}" -np "$P" "$bin" train "${c}f.ptd" -o f.model $run -q
            if cmp -s c.model f.model; then ok "np=$P $c.ptd $run: the float32 copy's bytes"
            else fail "np=$P $c.ptd $run: the model differs from the float32 copy's"; fi
        done
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

# --- batch path, the default mini-batches (256 rows): each step's gradient summed over the
# ranks' parts of a global block (block q of ceil(n/B): each rank's q-th part of its share).
# On n = 3840 rows every part has B/P rows, so the model is one process's on the rows in block
# order (rank 0's part 0, rank 1's part 0, ..., rank 0's part 1, ...) within the full batch's
# bound; the default command runs, near the plain run, and a rerun writes the same bytes.
"$bin" gen noisy -o n3840.ptd --n 3840 --d 24 --seed 5 >/dev/null
"$bin" convert n3840.ptd -o n3840.svm
acc() { sed -n 's/.*"train_accuracy": \([0-9.]*\).*/\1/p' "$1"; }
for P in 2 3 4; do
    rc=0
    "${mpirun[@]}" -np "$P" "$bin" train noisy.ptd -o mb.model --path batch -q --json >mb.json \
        2>mb.err || rc=$?
    "$bin" train noisy.ptd -o mb1.model --path batch -q --json >mb1.json
    if [ "$rc" -eq 0 ] && awk -v a="$(acc mb.json)" -v b="$(acc mb1.json)" \
        'BEGIN {exit !(a > 0.85 && (a - b)^2 < 1e-4)}'
    then ok "batch default np=$P: runs, training accuracy $(acc mb.json) (one process $(acc mb1.json))"
    else
        fail "batch default np=$P: exit $rc, accuracy '$(acc mb.json)' against one process's" \
            "$(acc mb1.json): $(head -c 300 mb.err)"
        continue
    fi
    if [ "$P" -ne 4 ]; then
        "${mpirun[@]}" -np "$P" "$bin" train noisy.ptd -o again.model --path batch -q
        if cmp -s mb.model again.model; then ok "batch default np=$P: rerun same bytes"
        else fail "batch default np=$P: a rerun wrote other bytes"; fi
    fi
    B=256
    [ "$P" -eq 3 ] && B=240 # (B/P rows a part)
    k=$((B / P))
    awk -v P="$P" -v k="$k" '{l[NR] = $0} END {m = NR / P; for (q = 0; q < m / k; q++)
        for (r = 0; r < P; r++) for (i = 1; i <= k; i++) print l[r * m + q * k + i]}' \
        n3840.svm >blocks.svm
    for run in "" "--shuffle" "--layout sparse" "--last-iterate --epochs 30"; do
        "$bin" train blocks.svm -o blk.model --path batch --batch-size "$B" $run -q
        "${mpirun[@]}" -np "$P" "$bin" train n3840.ptd -o mbP.model --path batch --batch-size "$B" \
            $run -q
        read -r d s < <(wdiff blk.model mbP.model)
        if awk -v d="$d" -v s="$s" 'BEGIN {exit !(s > 0 && d <= 1e-5 * s)}'
        then ok "batch B=$B np=$P $run: max |w - w_blocks| = $d <= 1e-5 x $s"
        else fail "batch B=$B np=$P $run: max |w - w_blocks| = $d, max |w_blocks| = $s"; fi
    done
done
# fewer rows a mini-batch than ranks: refused on every rank, before any communication
rc=0
"${mpirun[@]}" -np 3 "$bin" train noisy.ptd -o few.model --path batch --batch-size 2 -q \
    >few.out 2>&1 || rc=$?
if [ "$rc" -eq 2 ] && grep -q "fewer rows than ranks" few.out && [ ! -e few.model ]
then ok "batch --batch-size 2 on 3 ranks: refused"
else fail "batch --batch-size 2 on 3 ranks: exit $rc, $(head -c 300 few.out)"; fi

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

# --- the ranks agree on the file and the options before they train: given others (mpirun's
# MPMD form, one program a rank), every rank fails, exit 2, rank 0 names the rank and what
# differs, and no model is written; a copy of the file, or other threads, may differ
"$bin" gen noisy -o other.ptd --n 3000 --d 24 --seed 6 >/dev/null # noisy.ptd's size
cp noisy.ptd copy.ptd
mpmd() { # mpmd "ARGS OF RANK 0" "ARGS OF RANK 1" ...: exit status into rc, output mpmd.out
    local cmd=("${mpirun[@]}") a
    for a in "$@"; do cmd+=(-np 1 "$bin" train $a -o mpmd.model -q :); done
    rm -f mpmd.model
    rc=0
    "${cmd[@]::${#cmd[@]}-1}" >mpmd.out 2>&1 || rc=$?
}
refused() { # refused WHAT PATTERN...: exit 2, no model, each pattern in the output
    local what=$1 pat good=1
    shift
    for pat in "$@"; do grep -qF -- "$pat" mpmd.out || good=0; done
    if [ "$rc" -eq 2 ] && [ ! -e mpmd.model ] && [ "$good" = 1 ] &&
        ! grep -q MPI_ERR mpmd.out; then ok "$what: refused, exit 2, names it"
    else fail "$what: exit $rc, model $([ -e mpmd.model ] && echo written || echo none)," \
        "output: $(head -c 600 mpmd.out)"; fi
}
mpmd "noisy.ptd" "sep.ptd"
refused "other files (other n, d)" "rank 1 of 2 reads sep.ptd" "rank 0 noisy.ptd"
mpmd "noisy.ptd" "noisy.ptd" "other.ptd"
refused "other files (the same size)" "rank 2 of 3 reads other.ptd" "other contents"
mpmd "noisy.svm --path batch --batch-size 0" "noisy.csv --path batch --batch-size 0"
refused "other files (LIBSVM and CSV)" "rank 1 of 2 reads noisy.csv"
mpmd "blobs.ptd --path kernel" "noisy.ptd --path kernel"
refused "other files (kernel path, read whole)" "rank 1 of 2 reads noisy.ptd"
mpmd "noisy.ptd" "noisy.ptd --eta 0.5"
refused "other --eta" "rank 1 of 2 has eta=0.5, rank 0 eta=1"
mpmd "noisy.ptd" "noisy.ptd" "noisy.ptd --averaged"
refused "other --averaged" "rank 2 of 3 has variant=averaged, rank 0 variant=classic"
mpmd "noisy.ptd" "noisy.ptd --layout sparse"
refused "other --layout" "rank 1 of 2 has --layout=sparse"
mpmd "noisy.ptd" "noisy.ptd --epochs"
refused "a command line refused on rank 1" "rank 1 of 2 has the command line=refused"
"${mpirun[@]}" -np 2 "$bin" train noisy.ptd -o agreed.model -q
mpmd "noisy.ptd" "copy.ptd --threads 2"
if [ "$rc" -eq 0 ] && cmp -s mpmd.model agreed.model; then
    ok "a copy of the file and other --threads: the same model"
else fail "a copy of the file and other --threads: exit $rc, $(head -c 600 mpmd.out)"; fi

[ "$fails" -eq 0 ] || { echo "$fails failed" >&2; exit 1; }
echo "all passed"
