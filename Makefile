# batchsampler-go — see README.md
GO ?= go
PKGS := ./...
OUT ?= runs

.PHONY: test test-short lint bench demo fuzz graphcl-tables graphcl-mutag graphcl-imdb-b graphcl-nci1 graphcl-collab

# TEST_FIRST: the packages whose tests take longest, named before $(PKGS) so
# that go test starts them first (it starts test binaries in the order of its
# package list, -p at a time, and drops the repeats): train's tests are about
# 3 of the suite's 4 minutes of wall on 2 cores, and the rest fits beside them
# (`make test-times` gives every package's share; docs/benchmarks.md).
TEST_FIRST := ./train ./cmd/batchsampler

## test: the full test suite (what CI runs)
test:
	$(GO) test -count=1 -timeout 25m $(TEST_FIRST) $(PKGS)

## test-times: where the test suite's time goes: every package's wall and CPU time (GNU time around each test binary) and the slowest tests, in $(OUT)/test-times/test-times.md (as long as make test; not part of CI)
.PHONY: test-times
test-times:
	/usr/bin/python3 scripts/test_times.py --go $(GO) --out $(OUT)/test-times $(ARGS) $(TEST_FIRST) $(PKGS)

## test-short: skips the slow tests on large shared datasets
test-short:
	$(GO) test -short -count=1 $(PKGS)

## lint: gofmt and go vet must be clean (third_party/ included; go vet covers ./..., and third_party/gorgonia is its own module outside it)
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)

## bench: all benchmarks, 1 iteration count each (recorded figures: docs/benchmarks.md)
bench:
	$(GO) test -run '^$$' -bench . -benchmem $(PKGS)

## demo: the embedded demo (generated graphs, Uniform vs BatchSampler, 3 seeds)
demo:
	$(GO) run ./cmd/train -out $(OUT)/demo-$$(date +%Y%m%d-%H%M%S)

FUZZTIME ?= 30s

## fuzz: every fuzz target of the module (each func FuzzXxx, found anew by scripts/fuzz.sh) for FUZZTIME each (default 30s; 16 targets: about 9 minutes)
fuzz:
	GO=$(GO) scripts/fuzz.sh $(FUZZTIME)

## fuzz-smoke: every fuzz target for 3 s (CI, after make test: about a minute and a half)
.PHONY: fuzz-smoke
fuzz-smoke:
	GO=$(GO) scripts/fuzz.sh 3s

## golden-kernels: the golden records of the AVX2 and pure-Go GEMM kernels, on an AVX-512 machine too (CI, after make test, which checks this machine's kernel): model/testdata/golden-amd64-{avx2,go}.txt, the record files of train/testdata/golden (every kernel has a record of every config avx512 has, save goldenSkip in train/golden_test.go), and on both kernels the graph configs on MUTAG, IMDB-B and generated graphs (GraphCL and its DCL/HCL/published/ablation variants, MVGRL) and SimCSE on STS-B (simcse-stsb-plain on both, simcse-stsb on avx2); GOLDEN_TIMES below
## golden-kernels-all: every record of the two kernels (NCI1, COLLAB, the DCL/HCL SimCSE and the image configs too); GOLDEN_TIMES below
# GOLDEN_TIMES: CPU seconds (user + system) of one config's test binary, measured 2026-11-28 on the 2-core
# AMD EPYC (AVX-512) host with other jobs holding a load average of 26-52 (wall times were 8-12 times the
# CPU time at that load). avx2: a MUTAG, IMDB-B or generated-graph GraphCL config 1.4-8.3 s, mvgrl-mutag
# 30 s, simcse-stsb-plain 17-19 s, simcse-stsb 23 s (golden-kernels: 106-111 s in all); NCI1 11-18 s, the
# other SimCSE 27-28 s, demo-images 34 s, a ResNet-8 CIFAR-10-subset config 62-65 s. go (purego): the same
# graph configs 2.2-12 s, mvgrl-mutag 78-81 s, simcse-stsb-plain 18-20 s (golden-kernels: 157-165 s in all);
# NCI1 14-22 s, the other SimCSE 31-33 s; graphcl-collab 54-56 s, mvgrl-imdb-b 80-84 s, demo-images 94-104 s, a ResNet-8 config 160-277 s (2026-11-28 10:00-10:41, load 8-26). Per config:
# docs/benchmarks.md ("Golden records per GEMM kernel"); one config alone:
#   GODEBUG=cpu.avx512f=off go test ./train -run 'TestGoldenShippedConfigs/^NAME$$' -v
#   go test -tags purego ./train -run 'TestGoldenShippedConfigs/^NAME$$' -v
GOLDEN_CI_GRAPH := graphcl-(dcl-|hcl-|published-)?(mutag|imdb-b)|ablation-(graph|walk)-imdb-b|cmd-train-default|mvgrl-mutag
GOLDEN_CI_AVX2 := '^TestGolden(Bits|RecordFiles)$$|^TestGoldenShippedConfigs$$/^($(GOLDEN_CI_GRAPH)|simcse-stsb(-plain)?)$$'
GOLDEN_CI_GO := '^TestGolden(Bits|RecordFiles)$$|^TestGoldenShippedConfigs$$/^($(GOLDEN_CI_GRAPH)|simcse-stsb-plain)$$'
.PHONY: golden-kernels golden-kernels-all
golden-kernels:
	GODEBUG=cpu.avx512f=off $(GO) test -count=1 -timeout 30m -v -run $(GOLDEN_CI_AVX2) ./model ./train
	$(GO) test -count=1 -timeout 30m -v -tags purego -run $(GOLDEN_CI_GO) ./model ./train
golden-kernels-all:
	GODEBUG=cpu.avx512f=off $(GO) test -count=1 -timeout 90m -run '^TestGolden' ./model ./train
	$(GO) test -count=1 -timeout 90m -tags purego -run '^TestGolden' ./model ./train

## python-client: the Python client's tests against a Go server they start (Debian's python3-numpy, python3-torch)
.PHONY: python-client
python-client:
	/usr/bin/python3 -m unittest discover -s clients/python/tests -v

## graphcl-tables: the GraphCL table of docs/results.md (5 seeds per dataset)
graphcl-tables: graphcl-mutag graphcl-imdb-b graphcl-nci1

graphcl-mutag graphcl-imdb-b graphcl-nci1 graphcl-collab:
	$(GO) run ./cmd/train -config configs/$@.yaml -out $(OUT)/$@

## demo-images: about a minute of SimCLR on generated images (Uniform vs BatchSampler)
.PHONY: demo-images
demo-images:
	$(GO) run ./cmd/train -config configs/demo-images.yaml -out $(OUT)/demo-images

## simclr-cifar10-subset: the SimCLR table of docs/results.md (shared CIFAR-10 subset, 3 samplers × 3 seeds, about 25 minutes on 2 cores)
.PHONY: simclr-cifar10-subset
simclr-cifar10-subset:
	$(GO) run ./cmd/train -config configs/$@.yaml -out $(OUT)/$@

## demo-sampler: the teaching pictures of BatchSampler (points, graphs, batches, α) in $(OUT)/demo-sampler
.PHONY: demo-sampler
demo-sampler:
	$(GO) run ./cmd/samplerdemo -config configs/demo-sampler.yaml -out $(OUT)/demo-sampler

## table-graphs: the paper's graph table in one command (GraphCL, DCL, HCL, MVGRL × Uniform, kNN Sampler, BatchSampler, 5 seeds, every TU dataset under the data root; resumable: run it again to continue)
.PHONY: table-graphs
table-graphs:
	$(GO) run ./cmd/table -out $(OUT)/table-graphs

## bench-vs-pytorch: Go and PyTorch (Debian's python3-torch, /usr/bin/python3) side by side, interleaved: GraphCL step on NCI1, SimCLR and MoCo v3 steps on the CIFAR-10 subset, MVGRL steps on NCI1 and COLLAB (ARGS='--only moco' picks workloads); writes $(OUT)/bench-vs-pytorch/<time>/results.md and results.json (a few minutes; not part of test or CI; ARGS=--quick for a smoke run)
.PHONY: bench-vs-pytorch
bench-vs-pytorch:
	/usr/bin/python3 scripts/bench_vs_pytorch.py --go $(GO) --out $(OUT)/bench-vs-pytorch $(ARGS)

## memory-vs-pytorch: peak RSS of a GraphCL or MVGRL run in Go and in PyTorch on the same graphs (default: GraphCL on the generated REDDIT-BINARY-sized stand-in, scripts/standin-reddit-graphcl.yaml, exported with cmd/train -export-tu; ARGS='--config scripts/standin-reddit-mvgrl.yaml' for MVGRL, about 12 minutes; scripts/reddit-binary-{graphcl,mvgrl}.yaml for the real REDDIT-BINARY under $BATCHSAMPLER_DATA); writes $(OUT)/memory-vs-pytorch/<time>/results.md (not part of test or CI)
.PHONY: memory-vs-pytorch
memory-vs-pytorch:
	/usr/bin/python3 scripts/memory_vs_pytorch.py --go $(GO) --out $(OUT)/memory-vs-pytorch $(ARGS)

## table-text: the paper's text table in one command (SimCSE, DCL, HCL × Uniform, kNN Sampler, BatchSampler, 3 seeds, scored on the seven STS tasks found under the data root; 27 runs, about 25 minutes on 2 idle cores; resumable)
.PHONY: table-text
table-text:
	$(GO) run ./cmd/table -modality text -out $(OUT)/table-text

## table-vision: the paper's image table in one command (SimCLR, DCL, HCL, MoCo v3 × Uniform, kNN Sampler, BatchSampler, 3 seeds, and the untrained encoder, on every image dataset found: the CIFAR-10 subset about 2 hours on 2 idle cores, each full-size dataset about 5-6 hours a block; resumable; ARGS='-datasets cifar10 -methods simclr,dcl' to choose)
.PHONY: table-vision
table-vision:
	$(GO) run ./cmd/table -modality image -out $(OUT)/table-vision $(ARGS)

## results: regenerate the recorded runs behind docs/results.md (results/; hours on 2 cores: see results/README.md)
.PHONY: results results-graphs results-mvgrl results-published results-text results-vision results-fashion results-table-graphs results-table-text results-table-vision results-sweeps
results:
	scripts/regenerate-results.sh all
## results-sweeps: the sensitivity sweeps of configs/sweep-*.yaml into results/sweep-* (resumable; many hours: see docs/reproducing.md, "Sweeps")
results-graphs results-mvgrl results-published results-text results-vision results-fashion results-table-graphs results-table-text results-table-vision results-sweeps:
	scripts/regenerate-results.sh $(subst results-,,$@)
