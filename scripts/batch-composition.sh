#!/usr/bin/env bash
# Runs of docs/batch-composition.md, cheapest first, each resumable: run the
# script again to continue (finished runs are read, an interrupted one
# resumes from its checkpoint). Output: runs/batch-composition/NAME; then
# copy the recorded files with `scripts/batch-composition.sh copy`.
#
#   nice -n 10 scripts/batch-composition.sh [NAME...]   # default: all five
#   scripts/batch-composition.sh copy                    # results/batch-composition/NAME
set -euo pipefail
cd "$(dirname "$0")/.."
all=(simcse-stsb graphcl-imdb-b graphcl-nci1 simclr-cifar10-subset graphcl-collab)
if [[ "${1:-}" == copy ]]; then
	for n in "${all[@]}"; do
		src=runs/batch-composition/$n
		[[ -f $src/config.yaml ]] || { echo "$n: not started"; continue; }
		dst=results/batch-composition/$n
		mkdir -p "$dst"
		cp "$src"/{config.yaml,provenance.json} "$dst"/
		if [[ -f $src/results.json ]]; then
			cp "$src"/{results.json,results.md} "$dst"/
		else
			# not finished: each finished run's result.json, as
			# run-results/ID.json (runs/ is ignored by git)
			mkdir -p "$dst/run-results"
			for r in "$src"/runs/*/; do
				[[ -f $r/result.json ]] && cp "$r/result.json" "$dst/run-results/$(basename "$r").json"
			done
			echo "$n: not finished; its finished runs copied"
		fi
		[[ -f $src/dev_curve.jsonl ]] && cp "$src/dev_curve.jsonl" "$dst"/
		[[ -d $src/plots ]] && cp -r "$src/plots" "$dst"/
		# every run's epoch_end, sampler_time, refresh and final events (false negatives,
		# coverage, cost), each line tagged with its run: small
		: > "$dst/events.jsonl"
		for r in "$src"/runs/*/; do
			id=$(basename "$r")
			[[ -f $r/result.json ]] || continue
			grep -h '"event":"\(epoch_end\|sampler_time\|refresh\|final\)"' "$r/metrics.jsonl" | sed "s/^{/{\"run_dir\":\"$id\",/" >> "$dst/events.jsonl" || true
		done
		echo "$n: copied to $dst"
	done
	exit 0
fi
[[ $# -gt 0 ]] && all=("$@")
bin=bin/bc-train
go build -o "$bin" ./cmd/train
for n in "${all[@]}"; do
	out=runs/batch-composition/$n
	if [[ -f $out/config.yaml ]]; then
		"$bin" -resume "$out"
	else
		"$bin" -config "results/batch-composition/configs/$n.yaml" -out "$out"
	fi
done
