// Command batchsampler serves BatchSampler's mini-batches (package sampler:
// proximity graph from embeddings, batches as random walks with restart) to
// training jobs in other languages, PyTorch in particular (the client is
// clients/python). Batches for a seed are exactly those of the Go
// sampler.Driver for the same Spec, seed, N, B, T and embeddings.
//
// Usage:
//
//	batchsampler graph   -emb E.npy -out G.npy [-m 1000 -k 100 -graph-kind proximity -seed 1 -build 1 -rows a:b -workers 0 -precision auto]
//	batchsampler merge   -out G.npy SHARD.npy...
//	batchsampler batches [sampler flags] (-emb E.npy | -graph G.npy | -n N) -state S.bin -out O.npy [-steps n]
//	batchsampler serve   [sampler flags] [-addr 127.0.0.1:8470 -token-file F -n N -keep 1024 -max-body 4GiB -read-timeout 1m -state S.bin -stale wait]
//
// -h after a subcommand prints its flags (exit status 0).
//
// # Sampler flags (batches, serve)
//
//	-spec FILE          a YAML sampler entry, the schema of the training configs
//	                    (kind, m, k, walk, graph, alpha, refresh_every, max_walk_steps,
//	                    draw, keep, temperature, clusters);
//	                    the flags below given on the command line override it
//	-kind batchsampler  batchsampler, knn or uniform, or a global batch sampler
//	                    (gcbs, spectral, osgd, kmeans, antikmeans; see package sampler)
//	-m 1000 -k 100      M candidates drawn, K neighbours kept per node
//	-walk rwr           rwr, rw, bfs or dfs
//	-graph-kind proximity  proximity (Algorithm 2) or knn (exact)
//	-alpha 0.2:0.05     α: a number (constant) or start:end (linear over T)
//	-refresh-every 0    t: a refresh before every step s with s mod t = 0 (0: before step 0 only)
//	-max-walk-steps 0   cap on one walk's steps (0: 100·B)
//	-draw 0 -q 0        spectral, osgd: k batches drawn per round; osgd: q kept of them (spec key keep)
//	-temperature 0      spectral, osgd: τ of the affinity and of the loss score (required)
//	-clusters 0         kmeans, antikmeans: C, the k-means clusters
//	                    (m, k, walk, graph-kind, alpha, max-walk-steps apply to a global
//	                    sampler only when given: -k is gcbs's neighbours per instance)
//	-b 256              B, the global batch size (all ranks together)
//	-seed 1             the sampler's seed
//	-total-steps 0      T, the training steps the α schedule runs over
//	-epochs 0           or T = epochs × batches per epoch
//
// Epochs follow package sampler: an epoch is ⌈N/B⌉ batches (⌊N/B⌋ when
// N mod B = 1, the last batch then having B+1 instances); walks start from
// instances not yet covered in the epoch. Refreshes follow sampler.Driver
// (RefreshDue): before step 0 and every t steps.
//
// # graph
//
// Reads N×d embeddings (.npy float16, float32 or float64, C order, as
// numpy.save writes them) and writes the neighbour table of the graph a
// BatchSampler with seed -seed builds at its -build-th refresh: an int32
// .npy of N×K node ids (row i: node i's out-neighbours; numpy.load reads
// it), and beside it FILE.json with N, K, the row range, M, the seed, the
// build and the CRC-32C of the data bytes (merge and batches check it).
// -candidates with_replacement draws a proximity graph's candidates as the
// published code does (M uniform draws from all N nodes, the node itself and
// repeats kept; the sampler option of the same name, which -spec files also
// take); the sidecar records it and merge refuses to mix draws.
//
// Sharded builds for array jobs (Slurm job arrays, Kubernetes indexed
// Jobs): task i runs graph -rows a_i:b_i -out part-i.npy over the same
// embeddings and flags, then
//
//	batchsampler merge -out G.npy part-*.npy
//
// streams the shards, in row order whatever the argument order, into the
// graph a single build gives (same bytes), checking that they belong to one
// graph, cover [0, N) without overlap and match their checksums.
//
// Precision (-precision): a float16 file (what jobs in half precision
// save) is kept as float16, N×d×2 bytes, with a float64 inverse norm per
// row; the rows are converted to normalised float32 block by block while
// scoring, with the float32 path's arithmetic, so the graph is the same,
// byte for byte, as with the rows widened (-precision float32, which
// holds N×d×4 bytes). float32 and float64 files are read as float32;
// -precision float16 rounds them to float16 on read (to nearest, ties to
// even; a value beyond ±65504 is an error) for half the memory: the
// scores are then those of the rounded rows, which can reorder candidates
// whose scores are within float16 rounding of each other (the sidecar
// records "precision": "float16", and merge refuses to mix precisions).
//
// Memory: the neighbour table is N×K×4 bytes (ImageNet, N = 1,281,167 and
// K = 500: 2.56 GB) and graph holds the embeddings once (float32 ones
// L2-normalised in place: N×d×4 bytes, 0.66 GB at d = 128; float16 ones
// N×d×2 + 8·N bytes, 0.34 GB), so one
// machine's limit is about 4·N·(K + d) bytes plus some MB of per-worker
// scratch: on this project's 24 GiB machines N·(K+d) up to about 5·10⁹. A shard of
// rows [a, b) still holds all embeddings (candidates are drawn from every
// node) but only (b−a)×K×4 bytes of table, so sharding splits the table's
// memory and the scoring time, not the embeddings' memory; merge needs
// O(1) memory. The batches subcommand and the server hold the table once
// more in the sampler state they save (about 2–3 times N×K×4 bytes while
// saving).
//
// # batches
//
// Writes the next steps' global batches as an int64 .npy of steps × B (rows
// shorter than the widest padded with −1: Uniform's short last batch; B+1
// columns when N mod B = 1). -steps 0 (default) writes up to the end of
// the current epoch. With -state, the sampler state (RNG, epoch position,
// graph, step) is read from the file when it exists and written back, so
// a sequence of runs, or a resumed job, gets exactly the batches one run
// would have given. -emb embeddings (or a -graph neighbour table) serve
// every refresh due during the run; a refresh due without them is an
// error. They are not stored in the state: give the current ones to every
// run that crosses a refresh (e.g. -steps t per run).
//
// # serve
//
// A long-lived HTTP server. Request and response bodies are .npy; errors
// are JSON {"error": message, "code": code} with a 4xx status, and the
// server keeps serving.
//
// Authentication: with a shared secret (-token-file FILE, or the
// environment variable BATCHSAMPLER_TOKEN; at least 16 characters) every
// request but GET /v1/health must send "Authorization: Bearer <secret>";
// a missing or wrong one is answered 401 unauthorized and changes
// nothing. The secret is compared in constant time (SHA-256 of both sides,
// crypto/subtle) and never written to the log or the state file. A listen
// address other than loopback (0.0.0.0, a host's address, ":8470") is
// refused without a secret: the ranks of a multi-node job reach the server
// over the network, and so could anyone else. The secret is not
// encryption: on an untrusted network put the server behind TLS (a
// reverse proxy, an SSH tunnel).
//
//	GET  /v1/health
//	     {"status": "ok"}; never waits for a refresh in progress.
//	GET  /v1/info
//	     JSON: the configuration, n, batches_per_epoch, total_steps,
//	     next_step, kept_steps [from, to), keep, refreshes, alpha, coverage.
//	POST /v1/refresh[?rank=r&world=w&n=N]
//	     Body: N×d float16/32/64 embeddings, or an int32/int64 N×K
//	     neighbour table (from graph). With world > 1, rank r sends rows
//	     [⌊r·N/w⌋, ⌊(r+1)·N/w⌋) and the total n; the upload is complete when
//	     every rank's shard arrived (a repeated rank replaces its shard). A
//	     complete upload is used by the next due refresh, at once when the
//	     next step is due (the response then carries build_seconds). An
//	     upload with another world size (or N) than the sharded upload in
//	     progress is 409 world_mismatch, and the shards received are kept.
//	DELETE /v1/refresh
//	     Discards an unfinished sharded upload (after a job that sent part
//	     of one is gone): {"discarded_ranks": [...], "world": w}.
//	GET  /v1/batch?step=s[&rank=r&world=w]
//	     The int64 .npy of rank r's contiguous slice [⌊r·L/w⌋, ⌊(r+1)·L/w⌋)
//	     of the global batch of step s (L = its length, B in general): the
//	     ranks together get the B distinct instances of the global batch
//	     once. Headers X-Batchsampler-Step, -Epoch, -Global-Size. Steps are
//	     generated in order; the batches of the last -keep steps are kept, so
//	     a repeated request (a retry, another rank) gets the same answer; an
//	     older step is 410 step_gone. A step that needs a refresh no upload
//	     serves is 409 refresh_due (with received_ranks of a sharded upload
//	     in progress), unless -stale reuse.
//	GET  /v1/state        the state (the batches subcommand's format)
//	PUT  /v1/state        restore a state of the same configuration
//	POST /v1/state/save   write the -state file now (also done at SIGINT/SIGTERM;
//	                      the file is loaded at start when it exists)
//
// Status codes: 400 malformed or truncated .npy (bad_npy), wrong dtype or
// shape (bad_npy, bad_shape), NaN/Inf values (non_finite), rank outside
// the world size (bad_rank), bad step or query (bad_step, bad_query); 401
// missing or wrong secret (unauthorized); 408 headers or body bytes not
// arriving for -read-timeout (read_timeout); 409 N changed between
// refreshes (n_changed), refresh due (refresh_due), ranks disagreeing on
// the world size (world_mismatch); 410 step no longer kept (step_gone); 413
// body over -max-body (too_large). A client disconnecting mid-upload, or
// stalling, changes nothing.
//
// Serve flags besides the sampler flags:
//
//	-addr 127.0.0.1:8470  listen address (port 0: a free port; the address is printed)
//	-token-file FILE      the shared secret (default $BATCHSAMPLER_TOKEN); required off loopback
//	-n 0                  N before the first upload (required for kind uniform)
//	-keep 1024            steps whose batches are kept for repeated requests
//	-max-body 4GiB        request body limit
//	-read-timeout 1m      longest pause in a request's headers or body before it is dropped (408)
//	-state FILE           state file (see above)
//	-stale wait           wait or reuse: what a due refresh without a new upload does
//	-quiet                no log lines
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
)

func main() {
	err := run(context.Background(), os.Args[1:], os.Stdout, os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "batchsampler:", err)
		os.Exit(1)
	}
}

const usage = `usage: batchsampler <command> [flags]

commands:
  graph    build a proximity (or kNN) graph from .npy embeddings, whole or rows a:b
  merge    join the row shards of one graph
  batches  write the next epoch's (or n steps') batches as .npy, with a state file
  serve    serve batches over HTTP (.npy bodies) to training jobs
  help     this text

"batchsampler <command> -h" lists a command's flags.
`

// run runs the command line args; -h (or help) prints the usage and
// returns flag.ErrHelp.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return errors.New("no command")
	}
	switch args[0] {
	case "graph":
		return cmdGraph(args[1:], stdout, stderr)
	case "merge":
		return cmdMerge(args[1:], stdout, stderr)
	case "batches":
		return cmdBatches(args[1:], stdout, stderr)
	case "serve":
		return cmdServe(ctx, args[1:], stdout, stderr, nil)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return flag.ErrHelp
	}
	fmt.Fprint(stderr, usage)
	return fmt.Errorf("unknown command %q", args[0])
}
