// Command download fetches a dataset into the data root that cmd/train
// reads, checks its checksum and extracts it safely:
//
//	go run ./cmd/download -dataset MUTAG [-root DIR] [-sha256 HEX|any] [-url URL] [-keep-zip] [-force]
//	go run ./cmd/download -dataset cifar-10 [-root DIR] [-md5 HEX|any] [-url URL]
//	go run ./cmd/download -dataset stl-10 [-root DIR] [-md5 HEX|any] [-url URL]
//	go run ./cmd/download -dataset sts|sick|sts12|…|sts16 -sha256 HEX|any [-root DIR] [-url URL]
//	go run ./cmd/download -dataset senteval-sts -sha256 any [-root DIR]
//
// A TU Dortmund graph dataset NAME goes to DIR/tu/NAME/NAME_A.txt ...,
// CIFAR-10 to DIR/cifar-10-batches-bin/, CIFAR-100 to
// DIR/cifar-100-binary/ and STL-10 to DIR/stl10_binary/: the paths
// (tu/NAME, cifar-10-batches-bin, cifar-100-binary, stl10_binary) that the
// configs' data.path gives relative to data.root. DIR defaults to train's default data root,
// data.DefaultRoot(): $BATCHSAMPLER_DATA, else ../shared/data when it
// exists, else the user cache directory (~/.cache/batchsampler/data on
// Linux). On success the command prints the train command to run; when
// DIR is not the default root, that command carries -set data.root=DIR.
//
// The text evaluation sets come from the addresses SentEval's
// data/downstream/get_transfer_data.bash lists: sts (STS Benchmark) goes
// to DIR/sts/sts-{train,dev,test}.csv (data.text.sts_dir), sick (SICK's
// annotated test set) to DIR/senteval/SICK/SICK_test_annotated.txt and
// sts12 … sts16 to DIR/senteval/STS/STS12-en-test/STS.input.SUBSET.txt and
// STS.gs.SUBSET.txt … (data.text.senteval_dir, SentEval's layout; the 2016
// files are renamed from STS2016.*); senteval-sts fetches all seven. They
// hold the releases' raw text (SentEval's copies are Moses-tokenised and
// lower-cased; the text modality's tokenizer lower-cases). No checksum of
// them is built in, so -sha256 HEX or -sha256 any is required; the sha256
// received is printed so that it can be pinned.
//
// A TU zip comes from data.TUDatasetURL(NAME) unless -url is given; its
// sha256 is checked against -sha256, or, when neither -sha256 nor -url is
// given, against data.KnownTUChecksums (MUTAG, IMDB-BINARY, NCI1,
// IMDB-MULTI, PROTEINS). Those built-in checksums were computed on copies of
// the TU zips kept in a public repository, not on the TU server's files: if
// the server serves a re-packed zip the check fails and the error shows the
// checksum received, which -sha256 HEX pins (-sha256 any skips the check).
// A CIFAR archive's md5 is checked against the one its site publishes, the
// STL-10 archive's against the one torchvision records (or -md5). The
// command prints the checksum of every archive it downloads. STL-10 (stl10_binary.tar.gz)
// unpacks to about 3.1 GB; the 2.76 GB unlabeled_X.bin is checked
// by its size and first images only.
//
// A dataset already at its target that reads back (the TU files parse,
// the CIFAR batches read, STL-10's files have whole images, the text sets
// parse; a TU zip kept beside it is checked against its sha256) is not
// fetched again: download says so and succeeds without the network; -force
// fetches it anyway. Everything is fetched and extracted in a temporary
// directory beside the target and renamed into place only once the
// checksum matched and the dataset was read back, so a failed download
// leaves no new directory behind; a dataset at the target is replaced only
// then. download -h lists the datasets with their addresses and checksums.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/batchsampler-go/batchsampler/data"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := exitCode(run(ctx, os.Args[1:], os.Stdout, os.Stderr), os.Stderr)
	stop()
	os.Exit(code)
}

// usageError is a command line that could not be parsed (exit status 2).
type usageError struct{ err error }

func (e usageError) Error() string {
	msg := e.err.Error()
	if strings.Contains(msg, "\n") {
		return msg // it holds the list of datasets already
	}
	return msg + " (download -h lists the flags and the datasets)"
}
func (e usageError) Unwrap() error { return e.err }

// exitCode reports err on stderr and returns the exit status: 0 for
// success and for -h, 2 for a bad command line, 1 otherwise.
func exitCode(err error, stderr io.Writer) int {
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	}
	fmt.Fprintln(stderr, "download:", err)
	if errors.As(err, new(usageError)) {
		return 2
	}
	return 1
}

// validName is what a dataset name may contain: it becomes a directory and
// a file prefix.
var validName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)

// trainConfigs are the shipped configs of the datasets download fetches.
var trainConfigs = map[string]string{
	"MUTAG":       "configs/graphcl-mutag.yaml",
	"IMDB-BINARY": "configs/graphcl-imdb-b.yaml",
	"NCI1":        "configs/graphcl-nci1.yaml",
	"cifar-10":    "configs/simclr-cifar10.yaml",
	"stl-10":      "configs/simclr-stl10.yaml",
	"sts":         "configs/simcse-stsb.yaml",
}

// tuDatasetURL is the address of a TU dataset's zip (a variable for tests).
var tuDatasetURL = data.TUDatasetURL

// tuListURL is the TU Dortmund page that lists the datasets' names.
const tuListURL = "https://chrsmrrs.github.io/datasets/docs/datasets/"

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("download", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are returned; -h prints the help to stdout
	fs.Usage = func() {}
	name := fs.String("dataset", "", "dataset `NAME`: a TU dataset (MUTAG, IMDB-BINARY, NCI1, ...), cifar-10, cifar-100, stl-10, sts, sick, sts12 ... sts16 or senteval-sts (required)")
	root := fs.String("root", "", "data `DIR`, the data.root train reads (default: train's default data root, see above)")
	dir := fs.String("dir", "", "alias of -root: the data `DIR` (not the dataset's own directory)")
	sum := fs.String("sha256", "", "expected sha256 (`HEX`) of a TU zip or a text archive, or \"any\" to skip the check (default: the built-in checksum for MUTAG, IMDB-BINARY and NCI1 when -url is not given; required for the text sets, which have none)")
	md5sum := fs.String("md5", "", "expected md5 (`HEX`) of a CIFAR or STL-10 archive, or \"any\" to skip the check (default: the published one when -url is not given)")
	rawURL := fs.String("url", "", "`URL` to fetch instead of the dataset's own address")
	keep := fs.Bool("keep-zip", false, "keep a TU zip beside the dataset, as DIR/tu/NAME.zip")
	force := fs.Bool("force", false, "download the dataset even when it is already in the data root and reads back (it is replaced once the new copy is verified)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printHelp(stdout, fs)
			return err
		}
		return usageError{err}
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("unexpected arguments %q: expected flags only", fs.Args())}
	}
	if *root != "" && *dir != "" && filepath.Clean(*root) != filepath.Clean(*dir) {
		return usageError{fmt.Errorf("-root %s and -dir %s: -dir is an alias of -root, give one of them", *root, *dir)}
	}
	if *root == "" {
		*root = *dir
	}
	defaultRoot := *root == ""
	if defaultRoot {
		*root = data.DefaultRoot()
	}
	if cifar, ok := cifarName(*name); ok {
		return fetchCIFAR(ctx, cifar, *root, defaultRoot, *rawURL, *md5sum, *force, stdout)
	}
	if isSTL10(*name) {
		return fetchSTL10(ctx, *root, defaultRoot, *rawURL, *md5sum, *force, stdout)
	}
	if sets, ok := textSets(*name); ok {
		return fetchText(ctx, *name, sets, *root, defaultRoot, *rawURL, *sum, *md5sum, *force, stdout)
	}
	if !validName.MatchString(*name) {
		what := fmt.Sprintf("-dataset %q is not a dataset name", *name)
		if *name == "" {
			what = "-dataset is required"
		}
		return usageError{fmt.Errorf("%s: expected a TU dataset name (letters, digits, '_', '-', '.'), a CIFAR one, stl-10 or a text set; download fetches\n%s", what, datasetList())}
	}
	return fetchTU(ctx, *name, *root, defaultRoot, *rawURL, *sum, *keep, *force, stdout)
}

// alreadyThere reports whether dataset name is already at target and reads
// back (check returns what it holds): download then says so, and fetches
// nothing. A target that does not read back is said to be fetched again.
func alreadyThere(stdout io.Writer, name, target string, check func() (string, error)) bool {
	if _, err := os.Stat(target); err != nil {
		return false
	}
	summary, err := check()
	if err != nil {
		fmt.Fprintf(stdout, "%s is in the way but does not read back as %s (%v): downloading it again\n", target, name, err)
		return false
	}
	fmt.Fprintf(stdout, "%s is already in %s and reads back: %s; nothing to download (-force downloads it again)\n", name, target, summary)
	return true
}

// tuSummary describes a TU dataset as download prints it.
func tuSummary(s *data.GraphSet) string {
	return fmt.Sprintf("%d graphs, %d nodes, %d undirected edges, %d classes %v, %d node labels, %d edge labels, attribute dimension %d",
		len(s.Graphs), s.TotalNodes(), s.TotalEdges(), s.NumClasses, s.ClassValues, s.NumNodeLabels, s.NumEdgeLabels, s.AttrDim)
}

// cifarName maps the spellings of the CIFAR names (cifar-10, CIFAR10, ...)
// to data.CIFARNames.
func cifarName(s string) (string, bool) {
	n := strings.ToLower(s)
	for _, c := range data.CIFARNames {
		if n == c || n == strings.ReplaceAll(c, "-", "") {
			return c, true
		}
	}
	return "", false
}

// isSTL10 reports whether s names STL-10 (stl-10, stl10, STL-10, ...).
func isSTL10(s string) bool {
	n := strings.ToLower(s)
	return n == "stl-10" || n == "stl10"
}

func printHelp(w io.Writer, fs *flag.FlagSet) {
	root, source := data.DefaultRootSource()
	fmt.Fprintf(w, `usage: download -dataset NAME [-root DIR] [-sha256 HEX|any] [-md5 HEX|any] [-url URL] [-keep-zip]

Fetches a dataset into the data root DIR that train reads, checks its
checksum, extracts it safely and prints the train command to run:
  TU dataset NAME  ->  DIR/tu/NAME/NAME_A.txt, ...  (a config's data.path tu/NAME)
  cifar-10         ->  DIR/cifar-10-batches-bin/    (data.path cifar-10-batches-bin)
  cifar-100        ->  DIR/cifar-100-binary/        (data.path cifar-100-binary)
  stl-10           ->  DIR/stl10_binary/            (data.path stl10_binary)
  sts              ->  DIR/sts/sts-{train,dev,test}.csv            (STS-B; data.text.sts_dir sts)
  sick             ->  DIR/senteval/SICK/SICK_test_annotated.txt  (SICK-R; data.text.senteval_dir senteval)
  sts12 ... sts16  ->  DIR/senteval/STS/STS12-en-test/STS.input.SUBSET.txt, STS.gs.SUBSET.txt, ...
  senteval-sts     ->  all seven text sets above (-sha256 any)
DIR defaults to train's default data.root: $%s, else %s if it
exists, else the user cache directory (~/.cache/batchsampler/data on Linux).
Here that is %s (%s).
A dataset already there that reads back is not fetched again (-force fetches
it). A failed download leaves nothing behind; a dataset already there is
replaced once the new copy is verified.

Datasets:
`, data.RootEnv, data.SharedRoot, root, source)
	listDatasets(w)
	fmt.Fprintf(w, `
The TU sha256 values were computed on copies of the TU zips kept in a public
repository, not on the TU server's files: if the server serves a re-packed zip
the check fails, the error shows the checksum received, and -sha256 HEX pins
it (-sha256 any skips the check).

The text sets (the addresses of SentEval's get_transfer_data.bash) have no
built-in checksum: none could be computed where this command was written. They
need -sha256 HEX or -sha256 any; the command prints the sha256 it received, so
a first -sha256 any can be checked and pinned. senteval-sts takes -sha256 any
only (pin each archive with its own -dataset). The files are the releases' raw
text, not SentEval's Moses-tokenised, lower-cased copies; the 2016 files are
renamed from STS2016.* to SentEval's STS.*.

Flags:
`)
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
}

// datasetList is listDatasets as a string without the final newline.
func datasetList() string {
	var b strings.Builder
	listDatasets(&b)
	return strings.TrimRight(b.String(), "\n")
}

// listDatasets writes what download can fetch, with addresses and checksums.
func listDatasets(w io.Writer) {
	row := func(name, url, sum string) { fmt.Fprintf(w, "  %-12s %s\n  %-12s %s\n", name, url, "", sum) }
	names := make([]string, 0, len(data.KnownTUChecksums))
	for n := range data.KnownTUChecksums {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		row(n, data.TUDatasetURL(n), "sha256 "+data.KnownTUChecksums[n])
	}
	row("other TU", data.TUDatasetURL("NAME"), "no built-in checksum: pin one with -sha256 HEX, or -sha256 any")
	fmt.Fprintf(w, "  %-12s (NAME: PROTEINS, DD, NCI109, PTC_MR, COLLAB, REDDIT-BINARY, ...;\n  %-12s  every name is listed at %s)\n", "", "", tuListURL)
	for _, n := range data.CIFARNames {
		u, md5, _ := data.CIFARURL(n)
		row(n, u, "md5 "+md5)
	}
	row("stl-10", data.STL10URL, "md5 "+data.STL10MD5+" (unpacks to 3.1 GB)")
	const noSum = "no built-in checksum: -sha256 HEX or -sha256 any required"
	row("sts", data.STSBenchmarkURL, noSum)
	row("sick", data.SICKTestURL, noSum)
	for _, y := range data.STSYears {
		row(strings.ToLower(y.Name), y.URL, noSum)
	}
	fmt.Fprintf(w, "  %-12s %s\n", sentEvalAll, "all seven text sets above, with -sha256 any")
}

// fetchTU downloads, verifies and extracts the zip of TU dataset name to
// root/tu/NAME.
func fetchTU(ctx context.Context, name, root string, defaultRoot bool, rawURL, sum string, keep, force bool, stdout io.Writer) error {
	u := rawURL
	if u == "" {
		u = tuDatasetURL(name)
	}
	want, source := sum, "-sha256"
	switch {
	case sum == "any":
		want, source = "", ""
	case sum == "" && rawURL == "":
		want, source = data.KnownTUChecksums[name], "the built-in checksum"
	}
	target := filepath.Join(root, filepath.FromSlash(data.TUPath(name)))
	if !force && alreadyThere(stdout, name, target, func() (string, error) {
		s, err := data.ReadTU(target, name)
		if err != nil {
			return "", err
		}
		return tuSummary(s), nil
	}) {
		if zip := target + ".zip"; exists(zip) && want != "" {
			got, err := data.FileSHA256(zip)
			if err != nil {
				return err
			}
			if got == want {
				fmt.Fprintf(stdout, "%s: sha256 %s verified against %s\n", zip, got, source)
			} else {
				fmt.Fprintf(stdout, "warning: %s, the zip kept beside it, has sha256 %s, not the %s of %s\n", zip, got, want, source)
			}
		}
		fmt.Fprintf(stdout, "%s is in %s; train with: %s\n", name, target, trainCommand(name, root, defaultRoot))
		return nil
	}
	st, err := data.NewStaging(target)
	if err != nil {
		return err
	}
	defer st.Close()

	fmt.Fprintf(stdout, "downloading %s\n", u)
	zipPath, err := data.Download(ctx, u, st.Dir(), want)
	if err != nil {
		var ce *data.ChecksumError
		switch {
		case errors.As(err, &ce) && source != "-sha256":
			return fmt.Errorf("%w\n(%s was computed on a copy of the TU zip; if the server now serves a different zip, compare the checksum received, then pin it with -sha256 %s or skip the check with -sha256 any)", err, source, ce.Received)
		case strings.Contains(err.Error(), "404") && rawURL == "":
			return fmt.Errorf("%w\n(is %q a TU dataset? download fetches\n%s)", err, name, datasetList())
		}
		return err
	}
	got, err := data.FileSHA256(zipPath)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "sha256 %s  %s\n", got, u)
	if want != "" {
		fmt.Fprintf(stdout, "checksum verified against %s\n", source)
	} else {
		fmt.Fprintf(stdout, "checksum not verified; pin it with -sha256 %s\n", got)
	}
	extracted := filepath.Join(st.Dir(), "extracted")
	if err := data.ExtractZip(zipPath, extracted); err != nil {
		return fmt.Errorf("%s (sha256 %s) is not a usable zip: %w", u, got, err)
	}
	// TU zips hold a NAME/ folder; accept the files at the top level too.
	dsDir := filepath.Join(extracted, name)
	if !exists(filepath.Join(dsDir, name+"_A.txt")) {
		if !exists(filepath.Join(extracted, name+"_A.txt")) {
			return fmt.Errorf("%s holds no %s/%s_A.txt (a TU zip holds a NAME/ folder with NAME_A.txt, NAME_graph_indicator.txt, ...): is it the zip of %s?", u, name, name, name)
		}
		dsDir = extracted
	}
	s, err := data.ReadTU(dsDir, name)
	if err != nil {
		return fmt.Errorf("%s: %w", u, err)
	}
	if err := st.Commit(dsDir); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: %s\n", target, tuSummary(s))
	if keep {
		kept := target + ".zip"
		if err := os.Rename(zipPath, kept); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "kept the zip as %s\n", kept)
	}
	fmt.Fprintf(stdout, "%s is in %s; train with: %s\n", name, target, trainCommand(name, root, defaultRoot))
	return nil
}

// fetchCIFAR downloads, verifies and extracts a CIFAR binary archive to its
// conventional folder under root, reading it back as a check.
func fetchCIFAR(ctx context.Context, name, root string, defaultRoot bool, rawURL, sum string, force bool, stdout io.Writer) error {
	u, want, err := data.CIFARURL(name)
	if err != nil {
		return err
	}
	rel, err := data.CIFARPath(name)
	if err != nil {
		return err
	}
	return fetchArchive(ctx, archiveSet{
		name:    name,
		target:  filepath.Join(root, rel),
		extract: data.ExtractTarGz,
		readBack: func(dir string) (string, error) {
			set, err := readCIFAR(name, dir)
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("%d training images %dx%dx%d, %d classes", set.N, set.C, set.H, set.W, set.NumClasses), nil
		},
	}, u, want, root, defaultRoot, rawURL, sum, force, stdout)
}

// archiveSet is a data set published as one md5-checked archive that
// holds one folder (CIFAR's, STL-10's): where it goes, how to extract the
// archive and how to read the result back as a check.
type archiveSet struct {
	name   string // as on the command line and in messages: "cifar-10", "stl-10"
	target string // the folder it goes to
	// extract unpacks the archive into dir.
	extract func(archive, dir string) error
	// readBack reads the data set in dir and returns a one-line summary.
	readBack func(dir string) (string, error)
}

// fetchArchive downloads set's archive from u (md5 want; rawURL and sum
// replace them when given, sum "any" skips the check), extracts it in a
// staging folder, reads it back and moves it to set.target. A target
// already there that reads back is kept unless force.
func fetchArchive(ctx context.Context, set archiveSet, u, want, root string, defaultRoot bool, rawURL, sum string, force bool, stdout io.Writer) error {
	if rawURL != "" {
		u, want = rawURL, sum
	} else if sum != "" {
		want = sum
	}
	if want == "any" {
		want = ""
	}
	target := set.target
	if !force && alreadyThere(stdout, set.name, target, func() (string, error) { return set.readBack(target) }) {
		fmt.Fprintf(stdout, "%s is in %s; train with: %s\n", set.name, target, trainCommand(set.name, root, defaultRoot))
		return nil
	}
	st, err := data.NewStaging(target)
	if err != nil {
		return err
	}
	defer st.Close()

	archive, got, err := downloadMD5(ctx, u, st.Dir(), want, stdout)
	if err != nil {
		return err
	}
	extracted := filepath.Join(st.Dir(), "extracted")
	if err := set.extract(archive, extracted); err != nil {
		return fmt.Errorf("%s (md5 %s) is not a usable archive: %w", u, got, err)
	}
	// The official archives hold one folder (cifar-10-batches-bin/,
	// cifar-100-binary/, stl10_binary/); whatever it is called, it becomes
	// target.
	dsDir := extracted
	if ents, err := os.ReadDir(extracted); err == nil && len(ents) == 1 && ents[0].IsDir() {
		dsDir = filepath.Join(extracted, ents[0].Name())
	}
	summary, err := set.readBack(dsDir)
	if err != nil {
		return fmt.Errorf("%s: %w", u, err)
	}
	if err := st.Commit(dsDir); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: %s (md5 verified: %v)\n", target, summary, want != "")
	fmt.Fprintf(stdout, "%s is in %s; train with: %s\n", set.name, target, trainCommand(set.name, root, defaultRoot))
	return nil
}

// readCIFAR reads the training images of CIFAR dataset name from dir.
func readCIFAR(name, dir string) (*data.ImageSet, error) {
	if name == "cifar-10" {
		return data.ReadCIFAR10Dir(dir, true)
	}
	return data.ReadCIFAR100Dir(dir, true, true)
}

// stl10ReadBack is how many images of every split fetchSTL10 reads back.
const stl10ReadBack = 16

// fetchSTL10 downloads, verifies and extracts the STL-10 binary archive to
// root/stl10_binary, reading every split's first images back as a check.
func fetchSTL10(ctx context.Context, root string, defaultRoot bool, rawURL, sum string, force bool, stdout io.Writer) error {
	return fetchArchive(ctx, archiveSet{
		name:   "stl-10",
		target: filepath.Join(root, data.STL10Path),
		extract: func(archive, dir string) error {
			err := data.ExtractSTL10(archive, dir)
			os.Remove(archive) // not needed once extracted; frees its space early
			return err
		},
		readBack: func(dir string) (string, error) {
			counts, train, err := readBackSTL10(dir)
			if err != nil {
				return "", err
			}
			return stl10Summary(counts, train), nil
		},
	}, data.STL10URL, data.STL10MD5, root, defaultRoot, rawURL, sum, force, stdout)
}

// readBackSTL10 checks an STL-10 directory: ReadSTL10Dir checks the sizes
// of the whole files (a whole number of images, one label for each) and
// reads the first images of every split only. It returns the number of
// images of every split and the training split's first images.
func readBackSTL10(dir string) (counts map[string]int, train *data.ImageSet, err error) {
	counts = map[string]int{}
	for _, split := range data.STL10Splits {
		set, err := data.ReadSTL10Dir(dir, split, data.STL10Options{Max: stl10ReadBack})
		if err != nil {
			return nil, nil, err
		}
		if split == "train" {
			train = set
		}
		fi, err := os.Stat(filepath.Join(dir, split+"_X.bin"))
		if err != nil {
			return nil, nil, err
		}
		counts[split] = int(fi.Size() / data.STL10ImageBytes)
	}
	return counts, train, nil
}

// stl10Summary describes an STL-10 directory as download prints it.
func stl10Summary(counts map[string]int, train *data.ImageSet) string {
	return fmt.Sprintf("%d training, %d test and %d unlabeled images %dx%dx%d, %d classes %v",
		counts["train"], counts["test"], counts["unlabeled"], train.C, train.H, train.W, train.NumClasses, train.ClassNames)
}

// trainArgs returns the config and the -set overrides that train dataset
// name; data.root is left to the caller.
func trainArgs(name string) (config string, sets []string) {
	if c, ok := trainConfigs[name]; ok {
		return c, nil
	}
	switch name {
	case "cifar-100":
		rel, _ := data.CIFARPath(name)
		return trainConfigs["cifar-10"], []string{"data.source=cifar100", "data.path=" + rel}
	}
	return trainConfigs["MUTAG"], []string{"name=graphcl-" + strings.ToLower(name), "data.name=" + name, "data.path=" + data.TUPath(name)}
}

// trainCommand is the command line that trains on dataset name in root;
// it sets data.root unless root is train's default.
func trainCommand(name, root string, defaultRoot bool) string {
	config, sets := trainArgs(name)
	if !defaultRoot && !sameDir(root, data.DefaultRoot()) {
		if abs, err := filepath.Abs(root); err == nil {
			root = abs
		}
		sets = append(sets, "data.root="+root)
	}
	cmd := "go run ./cmd/train -config " + config
	for _, s := range sets {
		cmd += " -set " + shellQuote(s)
	}
	return cmd
}

func sameDir(a, b string) bool {
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	if errA == nil && errB == nil {
		return os.SameFile(sa, sb)
	}
	aa, errA := filepath.Abs(a)
	ab, errB := filepath.Abs(b)
	return errA == nil && errB == nil && aa == ab
}

// shellQuote quotes s for a POSIX shell when it holds anything but the
// characters of ordinary paths and assignments.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=+,:@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// downloadMD5 fetches u into dir, checks its md5 against want (unless
// empty) and reports the download and the checksum on stdout; it returns
// the archive's path and md5.
func downloadMD5(ctx context.Context, u, dir, want string, stdout io.Writer) (archive, got string, err error) {
	fmt.Fprintf(stdout, "downloading %s\n", u)
	if archive, err = data.DownloadMD5(ctx, u, dir, want); err != nil {
		return "", "", err
	}
	if got, err = data.FileMD5(archive); err != nil {
		return "", "", err
	}
	fmt.Fprintf(stdout, "md5 %s  %s\n", got, u)
	if want != "" {
		fmt.Fprintln(stdout, "checksum verified")
	} else {
		fmt.Fprintf(stdout, "checksum not verified; pin it with -md5 %s\n", got)
	}
	return archive, got, nil
}
