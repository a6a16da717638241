#!/usr/bin/env bash
# Regenerates the recorded runs behind docs/results.md into results/NAME
# (config.yaml, provenance.json, results.json, results.md, plots/; the large
# metrics.jsonl, checkpoints and embeddings are left in $WORK).
#   scripts/regenerate-results.sh graphs|mvgrl|published|text|vision|fashion|table-graphs|table-text|table-vision|sweeps [NAME...]|all
# Runs one experiment at a time; a finished one is not run again (delete
# results/NAME to redo it). Long: see docs/reproducing.md for the time of each table.
set -euo pipefail
cd "$(dirname "$0")/.."
WORK=${WORK:-runs/regenerate}
mkdir -p "$WORK" results
bin="$WORK/train"
go build -buildvcs=true -o "$bin" ./cmd/train # stamp the commit into provenance.json

run() { # NAME CONFIG [-set ...]
  local name=$1 cfg=$2; shift 2
  if [ -f "results/$name/results.json" ] && grep -q '"provenance"' "results/$name/results.json"; then
    echo "results/$name: done"; return
  fi
  echo "$(date +%T) $name"
  if [ -d "$WORK/$name" ]; then "$bin" -resume "$WORK/$name" >/dev/null; else "$bin" -config "$cfg" "$@" -out "$WORK/$name" >/dev/null; fi
  "$bin" -plots "$WORK/$name" 2>/dev/null || true # none for a run without a training step
  rm -rf "results/$name"; mkdir -p "results/$name"
  cp -r "$WORK/$name"/{config.yaml,provenance.json,results.json,results.md} "results/$name/"
  if [ -d "$WORK/$name/plots" ]; then cp -r "$WORK/$name/plots" "results/$name/"; fi
  if grep -q '"dev_eval"' "$WORK/$name/metrics.jsonl"; then grep '"dev_eval"' "$WORK/$name/metrics.jsonl" > "results/$name/dev_curve.jsonl"; fi
}

graphs() {
  run graphcl-mutag configs/graphcl-mutag.yaml
  run graphcl-dcl-mutag configs/graphcl-dcl-mutag.yaml
  run graphcl-hcl-mutag configs/graphcl-hcl-mutag.yaml
  run graphcl-mutag-20seeds configs/graphcl-mutag.yaml -set 'seeds=[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19]'
  run graphcl-imdb-b configs/graphcl-imdb-b.yaml
  run graphcl-dcl-imdb-b configs/graphcl-dcl-imdb-b.yaml
  run graphcl-hcl-imdb-b configs/graphcl-hcl-imdb-b.yaml
  run ablation-walk-imdb-b configs/ablation-walk-imdb-b.yaml
  run ablation-graph-imdb-b configs/ablation-graph-imdb-b.yaml
  run graphcl-nci1 configs/graphcl-nci1.yaml
  run sampler-cost-nci1 configs/sampler-cost-nci1.yaml
  run graphcl-collab configs/graphcl-collab.yaml
  mvgrl
}
mvgrl() {
  run mvgrl-mutag configs/mvgrl-mutag.yaml
  run mvgrl-imdb-b configs/mvgrl-imdb-b.yaml
}
published() { # BatchSampler as the paper describes it and as its published code runs it
  run graphcl-published-mutag configs/graphcl-published-mutag.yaml
  run graphcl-published-imdb-b configs/graphcl-published-imdb-b.yaml
  run graphcl-published-nci1 configs/graphcl-published-nci1.yaml
}
text() {
  run simcse-stsb configs/simcse-stsb.yaml
  run simcse-stsb-bs-encoder configs/simcse-stsb.yaml -set 'samplers=[{kind: batchsampler, label: batchsampler-encoder, m: 1000, k: 500, walk: rwr, graph: proximity, alpha: 0.7, refresh_every: 0, embedding: encoder}]'
  run simcse-stsb-plain configs/simcse-stsb-plain.yaml
}
vision() {
  run simclr-cifar10-subset configs/simclr-cifar10-subset.yaml
  run simclr-cifar10-subset-untrained configs/simclr-cifar10-subset.yaml -set train.epochs=1 -set train.lr=1e-12 -set 'samplers=[{kind: uniform}]'
  run mocov3-cifar10-subset configs/mocov3-cifar10-subset.yaml
}
fashion() { # needs Debian's dataset-fashion-mnist
  run simclr-fashion-mnist configs/simclr-fashion-mnist.yaml
  run mocov3-fashion-mnist configs/mocov3-fashion-mnist.yaml
  run fashion-mnist-untrained configs/simclr-fashion-mnist.yaml -set train.epochs=0 -set 'samplers=[{kind: uniform}]'
}
table_graphs() { # the whole graph table (cmd/table); resumable, copies what is finished
  go build -buildvcs=true -o "$WORK/table" ./cmd/table
  local status=0
  "$WORK/table" -out "$WORK/table-graphs" >/dev/null || status=$?
  mkdir -p results/table-graphs
  cp "$WORK/table-graphs"/table.{md,json} results/table-graphs/ 2>/dev/null || true
  copy_cells table-graphs "$WORK/table-graphs"/*/*/
  return $status
}
copy_cells() { # NAME DIR...: the finished run directories among DIR... into results/NAME/ (their path below $WORK/NAME)
  local name=$1 d cell; shift
  for d in "$@"; do
    cell=${d#"$WORK/$name/"}; cell=${cell%/}
    if [ ! -f "$d/results.json" ]; then # unfinished: its finished runs' result.json, as run-results/ID.json (runs/ is not in git)
      local r n=0
      for r in "$d"/runs/*/result.json; do
        [ -f "$r" ] || continue
        mkdir -p "results/$name/$cell/run-results"
        cp "$r" "results/$name/$cell/run-results/$(basename "$(dirname "$r")").json"; n=$((n + 1))
      done
      [ $n -eq 0 ] || cp "$d"/{config.yaml,provenance.json} "results/$name/$cell/"
      continue
    fi
    rm -rf "results/$name/$cell/run-results"
    mkdir -p "results/$name/$cell"
    cp "$d"/{config.yaml,provenance.json,results.json,results.md} "results/$name/$cell/"
  done
}
table_text() { # the whole text table (cmd/table -modality text); resumable, copies what is finished
  go build -buildvcs=true -o "$WORK/table-text-cmd" ./cmd/table # not $WORK/table: table_graphs may be running it
  local status=0
  "$WORK/table-text-cmd" -modality text -out "$WORK/table-text" >/dev/null || status=$?
  mkdir -p results/table-text
  cp "$WORK/table-text"/table.{md,json} results/table-text/ 2>/dev/null || true
  copy_cells table-text "$WORK/table-text"/*/
  return $status
}
table_vision() { # the image table (cmd/table -modality image): every block on the CIFAR-10 subset, SimCLR and DCL on the full Fashion-MNIST; resumable, copies what is finished
  go build -buildvcs=true -o "$WORK/table-vision-cmd" ./cmd/table
  local status=0 t="$WORK/table-vision-cmd"
  # cheapest first, the full-size SimCLR block (the question where N >> B) before the rest
  local step datasets methods
  for step in "cifar10 simclr,dcl,hcl" "fashion-mnist simclr" "cifar10 mocov3" "fashion-mnist dcl"; do
    read -r datasets methods <<<"$step"
    [ $status -ne 0 ] || "$t" -modality image -datasets "$datasets" -methods "$methods" -out "$WORK/table-vision" >/dev/null || status=$?
  done
  "$t" -modality image -datasets cifar10,fashion-mnist -assemble -out "$WORK/table-vision" >/dev/null || true
  mkdir -p results/table-vision
  cp "$WORK/table-vision"/table.{md,json} results/table-vision/ 2>/dev/null || true
  cp -r "$WORK/table-vision"/figures results/table-vision/ 2>/dev/null || true
  copy_cells table-vision "$WORK/table-vision"/*/*/
  local d
  for d in "$WORK/table-vision"/*/*/; do # the paper's vision figures of every finished cell
    [ -f "$d/results.json" ] && [ -d "$d/plots" ] && cp -r "$d/plots" "results/table-vision/${d#"$WORK/table-vision/"}"
  done
  return $status
}
sweep() { # NAME: configs/NAME.yaml's sweep (cmd/train); resumable, copies what is finished
  local name=$1 status=0
  if [ -f "results/$name/sweep.json" ] && ! grep -q '"failed"' "results/$name/sweep.json"; then
    echo "results/$name: done"; return
  fi
  echo "$(date +%T) $name"
  "$bin" -config "configs/$name.yaml" -out "$WORK/$name" >/dev/null || status=$?
  mkdir -p "results/$name"
  cp "$WORK/$name"/sweep.{md,json,yaml} "results/$name/" 2>/dev/null || true
  copy_cells "$name" "$WORK/$name"/baseline "$WORK/$name"/baseline/*/ "$WORK/$name"/points/*/
  return $status
}
sweeps() { # [NAME...]: the sensitivity sweeps (configs/sweep-*.yaml; default all, cheapest first); long: see docs/reproducing.md, "Sweeps"
  local names=("$@")
  if [ ${#names[@]} -eq 0 ]; then
    names=(sweep-t-imdb-b sweep-published-switches-imdb-b sweep-b-imdb-b sweep-m-alpha-imdb-b
      sweep-t-collab sweep-b-collab sweep-m-alpha-collab sweep-m-alpha-stsb sweep-m-alpha-cifar10-subset)
  fi
  for name in "${names[@]}"; do
    sweep "$name"
  done
}
case "${1:-all}" in
  graphs) graphs ;; mvgrl) mvgrl ;; published) published ;; table-graphs) table_graphs ;; table-text) table_text ;; table-vision) table_vision ;; text) text ;; vision) vision ;; fashion) fashion ;;
  sweeps) shift; sweeps "$@" ;;
  all) graphs; text; vision; fashion ;;
  *) echo "usage: $0 graphs|mvgrl|published|text|vision|fashion|table-graphs|table-text|table-vision|sweeps [NAME...]|all" >&2; exit 2 ;;
esac
