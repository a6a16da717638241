package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/batchsampler-go/batchsampler/data"
)

// textSet is one of the SentEval evaluation sets download fetches: STS
// Benchmark, SICK's annotated test set or an STS year.
type textSet struct {
	// name is the canonical -dataset name: "sts", "sick", "STS12", …
	name string
	// rel is where the set goes under the data root (slash-separated).
	rel string
	// install checks the extracted archive dir and returns the directory
	// that becomes the target and a one-line summary of what it holds.
	install func(dir string) (dsDir, summary string, err error)
	// read checks an installed set (the target) and returns the summary.
	read func(target string) (summary string, err error)
}

// sentEvalAll is the -dataset name that fetches every text set.
const sentEvalAll = "senteval-sts"

// textURLs are the addresses of the text sets' archives, by canonical
// name (a variable for tests): those of SentEval's
// data/downstream/get_transfer_data.bash.
var textURLs = func() map[string]string {
	m := map[string]string{"sts": data.STSBenchmarkURL, "sick": data.SICKTestURL}
	for _, y := range data.STSYears {
		m[y.Name] = y.URL
	}
	return m
}()

// textSets returns the sets that the -dataset name s fetches, and false
// when s names none: sts (also sts-b, stsb, stsbenchmark), sick (sick-r),
// sts12 … sts16, or senteval-sts (all of them), in any case.
func textSets(s string) ([]textSet, bool) {
	n := strings.ToLower(s)
	switch n {
	case "sts", "sts-b", "stsb", "stsbenchmark":
		return []textSet{stsBSet()}, true
	case "sick", "sick-r":
		return []textSet{sickSet()}, true
	case sentEvalAll:
		var all []textSet
		for _, y := range data.STSYears {
			all = append(all, stsYearSet(y))
		}
		return append(all, stsBSet(), sickSet()), true
	}
	if y, ok := data.LookupSTSYear(n); ok {
		return []textSet{stsYearSet(y)}, true
	}
	return nil, false
}

// stsBSet is STS Benchmark: Stsbenchmark.tar.gz holds stsbenchmark/ with
// sts-{train,dev,test}.csv, which go to DIR/sts (data.text.sts_dir).
func stsBSet() textSet {
	read := func(ds string) (string, error) {
		var counts []string
		for _, split := range []string{"train", "dev", "test"} {
			pairs, err := data.ReadSTS(filepath.Join(ds, "sts-"+split+".csv"))
			if err != nil {
				return "", err
			}
			counts = append(counts, fmt.Sprintf("%d %s", len(pairs), split))
		}
		return "STS Benchmark, pairs: " + strings.Join(counts, ", "), nil
	}
	return textSet{name: "sts", rel: "sts", read: read, install: func(dir string) (string, string, error) {
		ds, err := findDir(dir, "stsbenchmark", "sts-test.csv")
		if err != nil {
			return "", "", err
		}
		summary, err := read(ds)
		return ds, summary, err
	}}
}

// sickSet is SICK's annotated test set: sick_test_annotated.zip holds
// SICK_test_annotated.txt, which goes to DIR/senteval/SICK (SentEval's
// layout, read by the sts protocol as SICK-R).
func sickSet() textSet {
	file := path.Base(data.SICKTestPath)
	read := func(ds string) (string, error) {
		pairs, err := data.ReadSICK(filepath.Join(ds, file))
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("SICK-R test, %d pairs", len(pairs)), nil
	}
	return textSet{name: "sick", rel: path.Dir(path.Join("senteval", data.SICKTestPath)), read: read, install: func(dir string) (string, string, error) {
		ds, err := findDir(dir, "", file)
		if err != nil {
			return "", "", err
		}
		summary, err := read(ds)
		return ds, summary, err
	}}
}

// stsYearSet is an STS year: its zip holds y.ZipDir with the input and gold
// files of every subset, which go to DIR/senteval/STS/<y.Dir> named as
// SentEval names them (STS2016.input.S.txt becomes STS.input.S.txt).
func stsYearSet(y data.STSYear) textSet {
	read := func(ds string) (string, error) {
		subs, err := data.ReadSTSYear(ds, y)
		if err != nil {
			return "", err
		}
		scored, unscored := 0, 0
		for _, s := range subs {
			scored += len(s.Pairs)
			unscored += s.Unscored
		}
		return fmt.Sprintf("%s, %d subsets, %d scored pairs (%d unscored)", y.Name, len(subs), scored, unscored), nil
	}
	return textSet{name: y.Name, rel: path.Join("senteval", data.SentEvalSTSDir, y.Dir), read: read, install: func(dir string) (string, string, error) {
		first := y.ZipPrefix + ".input." + y.Subsets[0] + ".txt"
		ds, err := findDir(dir, y.ZipDir, first)
		if err != nil {
			return "", "", err
		}
		if y.ZipPrefix != "STS" {
			for _, s := range y.Subsets {
				for _, kind := range []string{"input", "gs"} {
					from := filepath.Join(ds, y.ZipPrefix+"."+kind+"."+s+".txt")
					to := filepath.Join(ds, "STS."+kind+"."+s+".txt")
					if err := os.Rename(from, to); err != nil {
						return "", "", fmt.Errorf("%s: %w (the %s zip holds %s.input.SUBSET.txt and %s.gs.SUBSET.txt for %s)", y.Name, err, y.Name, y.ZipPrefix, y.ZipPrefix, strings.Join(y.Subsets, ", "))
					}
				}
			}
		}
		summary, err := read(ds)
		return ds, summary, err
	}}
}

// findDir returns the directory under dir that holds file: dir/want when
// want is given and holds it, else dir itself, else the only directory in
// dir (an archive's single folder, whatever it is called).
func findDir(dir, want, file string) (string, error) {
	var cands []string
	if want != "" {
		cands = append(cands, filepath.Join(dir, want))
	}
	cands = append(cands, dir)
	if ents, err := os.ReadDir(dir); err == nil {
		var dirs []string
		for _, e := range ents {
			if e.IsDir() && e.Name() != "__MACOSX" {
				dirs = append(dirs, e.Name())
			}
		}
		if len(dirs) == 1 {
			cands = append(cands, filepath.Join(dir, dirs[0]))
		}
	}
	for _, c := range cands {
		if st, err := os.Stat(filepath.Join(c, file)); err == nil && st.Mode().IsRegular() {
			return c, nil
		}
	}
	where := "at its top level or in its single folder"
	if want != "" {
		where = want + "/, " + where
	}
	return "", fmt.Errorf("the archive holds no %s (expected it in %s)", file, where)
}

// fetchText downloads, verifies, extracts and reads back the text sets of
// the -dataset name, each into its place under root. They have no built-in
// checksum: sum must be a sha256 (one set) or "any".
func fetchText(ctx context.Context, name string, sets []textSet, root string, defaultRoot bool, rawURL, sum, md5sum string, force bool, stdout io.Writer) error {
	if !force {
		// The sets already there and reading back are not fetched again;
		// with all of them there, nothing is (and no checksum is needed).
		var missing []textSet
		for _, s := range sets {
			target := filepath.Join(root, filepath.FromSlash(s.rel))
			if !alreadyThere(stdout, s.name, target, func() (string, error) { return s.read(target) }) {
				missing = append(missing, s)
			}
		}
		if len(missing) == 0 {
			fmt.Fprintf(stdout, "the sts protocol scores STS-B from data.text.sts_dir (sts) and STS12-16 and SICK-R from data.text.senteval_dir (senteval) under the data root; train with: %s\n", trainCommand("sts", root, defaultRoot))
			return nil
		}
		sets = missing
	}
	switch {
	case md5sum != "":
		return usageError{fmt.Errorf("-md5 with -dataset %s: the text sets are checked with -sha256 HEX (or -sha256 any)", name)}
	case sum == "":
		return usageError{fmt.Errorf("-dataset %s needs -sha256 HEX or -sha256 any: download knows no checksum of the SentEval text archives (none could be computed where it was written); "+
			"-sha256 any fetches without a check and prints the sha256 received, which -sha256 HEX pins the next time", name)}
	case len(sets) > 1 && sum != "any":
		return usageError{fmt.Errorf("-dataset %s fetches %d archives: it takes -sha256 any (pin each archive's sha256 with its own -dataset, e.g. -dataset %s -sha256 HEX)", name, len(sets), strings.ToLower(sets[0].name))}
	case len(sets) > 1 && rawURL != "":
		return usageError{fmt.Errorf("-dataset %s fetches %d archives: -url replaces one address; give it with a single set (-dataset sts12, …)", name, len(sets))}
	}
	want := sum
	if want == "any" {
		want = ""
	}
	for _, s := range sets {
		u := rawURL
		if u == "" {
			u = textURLs[s.name]
		}
		if err := fetchTextSet(ctx, s, root, u, want, stdout); err != nil {
			return err
		}
	}
	fmt.Fprintf(stdout, "the sts protocol scores STS-B from data.text.sts_dir (sts) and STS12-16 and SICK-R from data.text.senteval_dir (senteval) under the data root; train with: %s\n", trainCommand("sts", root, defaultRoot))
	return nil
}

// fetchTextSet fetches one text set from u into root/s.rel.
func fetchTextSet(ctx context.Context, s textSet, root, u, want string, stdout io.Writer) error {
	target := filepath.Join(root, filepath.FromSlash(s.rel))
	st, err := data.NewStaging(target)
	if err != nil {
		return err
	}
	defer st.Close()
	fmt.Fprintf(stdout, "downloading %s\n", u)
	archive, err := data.Download(ctx, u, st.Dir(), want)
	if err != nil {
		var ce *data.ChecksumError
		if errors.As(err, &ce) {
			return fmt.Errorf("%w\n(the archive is not the one -sha256 pinned; if the server now serves another, compare the checksum received, then pin it with -sha256 %s)", err, ce.Received)
		}
		return err
	}
	got, err := data.FileSHA256(archive)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "sha256 %s  %s\n", got, u)
	if want != "" {
		fmt.Fprintln(stdout, "checksum verified against -sha256")
	} else {
		fmt.Fprintf(stdout, "checksum not verified (-sha256 any); pin it with -dataset %s -sha256 %s\n", strings.ToLower(s.name), got)
	}
	extracted := filepath.Join(st.Dir(), "extracted")
	if strings.HasSuffix(strings.ToLower(archive), ".zip") {
		err = data.ExtractZip(archive, extracted)
	} else {
		err = data.ExtractTarGz(archive, extracted)
	}
	if err != nil {
		return fmt.Errorf("%s (sha256 %s) is not a usable archive: %w", u, got, err)
	}
	dsDir, summary, err := s.install(extracted)
	if err != nil {
		return fmt.Errorf("%s (sha256 %s): %w", u, got, err)
	}
	if err := st.Commit(dsDir); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: %s\n", target, summary)
	return nil
}
