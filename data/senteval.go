package data

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"
)

// STSYear is one year of the SemEval STS shared tasks (English test sets)
// as SentEval evaluates it (senteval/sts.py, STS12Eval … STS16Eval): a
// folder of sentence-pair subsets, each an input file of tab-separated
// sentence pairs and a gold file of scores.
type STSYear struct {
	// Name is SentEval's task name: "STS12" … "STS16".
	Name string
	// Dir is the year's folder in SentEval's layout (data/downstream/STS/Dir):
	// "STS12-en-test" … "STS16-en-test".
	Dir string
	// Subsets are SentEval's subsets of the year, in its order; subset S is
	// read from Dir/STS.input.S.txt and Dir/STS.gs.S.txt.
	Subsets []string
	// URL is the zip of the year's test set with gold scores, as SentEval's
	// data/downstream/get_transfer_data.bash fetches it.
	URL string
	// ZipDir is the folder the zip holds the files in (get_transfer_data.bash
	// renames it to Dir).
	ZipDir string
	// ZipPrefix is the prefix of the zip's file names, "STS" or, for 2016,
	// "STS2016" (STS2016.input.S.txt, renamed to STS.input.S.txt).
	ZipPrefix string
}

// STSYears are SentEval's five STS years, with the subsets senteval/sts.py
// lists (STS13 without SMT, which SentEval leaves out for its licence) and
// the download locations of get_transfer_data.bash.
var STSYears = []STSYear{
	{Name: "STS12", Dir: "STS12-en-test", ZipDir: "test-gold", ZipPrefix: "STS",
		Subsets: []string{"MSRpar", "MSRvid", "SMTeuroparl", "surprise.OnWN", "surprise.SMTnews"},
		URL:     "http://ixa2.si.ehu.es/stswiki/images/4/40/STS2012-en-test.zip"},
	{Name: "STS13", Dir: "STS13-en-test", ZipDir: "test-gs", ZipPrefix: "STS",
		Subsets: []string{"FNWN", "headlines", "OnWN"},
		URL:     "http://ixa2.si.ehu.es/stswiki/images/2/2f/STS2013-en-test.zip"},
	{Name: "STS14", Dir: "STS14-en-test", ZipDir: "sts-en-test-gs-2014", ZipPrefix: "STS",
		Subsets: []string{"deft-forum", "deft-news", "headlines", "images", "OnWN", "tweet-news"},
		URL:     "http://ixa2.si.ehu.es/stswiki/images/8/8c/STS2014-en-test.zip"},
	{Name: "STS15", Dir: "STS15-en-test", ZipDir: "test_evaluation_task2a", ZipPrefix: "STS",
		Subsets: []string{"answers-forums", "answers-students", "belief", "headlines", "images"},
		URL:     "http://ixa2.si.ehu.es/stswiki/images/d/da/STS2015-en-test.zip"},
	{Name: "STS16", Dir: "STS16-en-test", ZipDir: "sts2016-english-with-gs-v1.0", ZipPrefix: "STS2016",
		Subsets: []string{"answer-answer", "headlines", "plagiarism", "postediting", "question-question"},
		URL:     "http://ixa2.si.ehu.es/stswiki/images/9/98/STS2016-en-test.zip"},
}

// Where the other SentEval STS data lives, and where it comes from.
const (
	// SentEvalSTSDir is the folder of the STS years inside a SentEval
	// downstream directory (data/downstream/STS).
	SentEvalSTSDir = "STS"
	// SICKTestPath is SICK's annotated test set inside a SentEval downstream
	// directory: what SentEval's SICKRelatedness task (and SimCSE's
	// unsupervised evaluation of it) scores, with ReadSICK's
	// relatedness_score as the gold score.
	SICKTestPath = "SICK/SICK_test_annotated.txt"
	// SICKTestURL is the zip of SICK_test_annotated.txt, as
	// get_transfer_data.bash fetches it.
	SICKTestURL = "http://alt.qcri.org/semeval2014/task1/data/uploads/sick_test_annotated.zip"
	// STSBenchmarkURL is the STS Benchmark release (a stsbenchmark/ folder
	// with sts-train.csv, sts-dev.csv and sts-test.csv), as
	// get_transfer_data.bash fetches it.
	STSBenchmarkURL = "http://ixa2.si.ehu.es/stswiki/images/4/48/Stsbenchmark.tar.gz"
)

// LookupSTSYear returns the year named name ("STS12" … "STS16", any case).
func LookupSTSYear(name string) (STSYear, bool) {
	for _, y := range STSYears {
		if strings.EqualFold(y.Name, name) {
			return y, true
		}
	}
	return STSYear{}, false
}

// Path returns the year's folder inside the SentEval downstream directory
// root: root/STS/STS12-en-test.
func (y STSYear) Path(root string) string { return filepath.Join(root, SentEvalSTSDir, y.Dir) }

// STSSubset is one subset of an STS year: its scored pairs in file order.
type STSSubset struct {
	Name  string
	Pairs []STSPair
	// Lines is the number of lines of the input file (and of the gold file);
	// Unscored of them had an empty gold line and are not in Pairs.
	Lines, Unscored int
}

// ReadSTSYear reads every subset of year from dir, a folder laid out as
// SentEval's data/downstream/STS/<year.Dir> (see ReadSTSSubset). A missing
// subset file is an error that names it (and matches fs.ErrNotExist).
func ReadSTSYear(dir string, year STSYear) ([]STSSubset, error) {
	if len(year.Subsets) == 0 {
		return nil, fmt.Errorf("read %s: no subsets: expected one of the years of data.STSYears", year.Name)
	}
	out := make([]STSSubset, 0, len(year.Subsets))
	for _, s := range year.Subsets {
		sub, err := ReadSTSSubset(dir, s)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", year.Name, err)
		}
		out = append(out, sub)
	}
	return out, nil
}

// STSSubsetFiles returns the input and gold files of subset in dir, as
// SentEval names them: dir/STS.input.<subset>.txt and dir/STS.gs.<subset>.txt.
func STSSubsetFiles(dir, subset string) (input, gold string) {
	return filepath.Join(dir, "STS.input."+subset+".txt"), filepath.Join(dir, "STS.gs."+subset+".txt")
}

// ReadSTSSubset reads subset of an STS year folder dir: the sentence pairs
// of STS.input.<subset>.txt and the gold scores of STS.gs.<subset>.txt
// (see ReadSTSSubsetFrom).
func ReadSTSSubset(dir, subset string) (STSSubset, error) {
	inPath, goldPath := STSSubsetFiles(dir, subset)
	in, err := os.Open(inPath)
	if err != nil {
		return STSSubset{}, fmt.Errorf("subset %s: %w", subset, err)
	}
	defer in.Close()
	gold, err := os.Open(goldPath)
	if err != nil {
		return STSSubset{}, fmt.Errorf("subset %s: %w", subset, err)
	}
	defer gold.Close()
	s, err := ReadSTSSubsetFrom(in, inPath, gold, goldPath)
	s.Name = subset
	return s, err
}

// ReadSTSSubsetFrom reads one STS subset as SentEval's STSEval.loadFile
// does: line i of the input holds the two sentences of pair i separated by
// a tab, line i of the gold file its score, and a pair whose gold line is
// empty is unscored and skipped. inName and goldName name the inputs in
// errors.
//
// Lines end at "\n" or "\r\n"; a UTF-8 byte order mark at the start of a
// file is dropped; text must be UTF-8 (as SentEval opens the files). An
// input line must have at least two tab-separated fields: the first two are
// the sentences and further ones are ignored (the 2016 files carry the
// sentences' sources in two more columns, which SentEval's download script
// cuts off). Quotes are ordinary characters. Sentences are trimmed of
// surrounding white space and may be empty (SentEval embeds an empty token
// list). A gold line that is empty after trimming white space leaves its
// pair unscored; any other must be a number in [0, 5]. The two files must
// have the same number of lines, and at least one pair must be scored.
// Errors are *ParseError values naming the file and, where it applies, the
// 1-based line; a line-count mismatch names both files and their counts.
func ReadSTSSubsetFrom(input io.Reader, inName string, gold io.Reader, goldName string) (STSSubset, error) {
	type pair struct{ s1, s2 string }
	var pairs []pair
	in := newTextLines(input, inName, maxSTSLineBytes)
	for {
		b, ok, err := in.nextText()
		if err != nil {
			return STSSubset{}, err
		}
		if !ok {
			break
		}
		f := strings.SplitN(string(b), "\t", 3)
		if len(f) < 2 {
			return STSSubset{}, parseErr(inName, in.line, "no tab: expected two tab-separated sentences (sentence1, sentence2)")
		}
		pairs = append(pairs, pair{strings.TrimFunc(f[0], unicode.IsSpace), strings.TrimFunc(f[1], unicode.IsSpace)})
	}
	sub := STSSubset{Lines: len(pairs)}
	gl := newTextLines(gold, goldName, maxSTSLineBytes)
	n := 0
	for {
		b, tooLong, ok, err := gl.next()
		if err != nil {
			return STSSubset{}, err
		}
		if !ok {
			break
		}
		n++
		if tooLong {
			return STSSubset{}, parseErr(goldName, gl.line, "line of %d bytes: expected a gold score", gl.lineLen)
		}
		if !utf8.Valid(b) {
			return STSSubset{}, parseErr(goldName, gl.line, "invalid UTF-8 at byte %d of the line: expected a gold score", invalidUTF8At(b)+1)
		}
		s := strings.TrimFunc(string(b), unicode.IsSpace)
		if n > len(pairs) {
			continue // counted for the mismatch error below
		}
		if s == "" {
			sub.Unscored++
			continue
		}
		score, err := parseScore(s, 0, 5)
		if err != nil {
			return STSSubset{}, parseErr(goldName, gl.line, "gold score: %v", err)
		}
		p := pairs[n-1]
		sub.Pairs = append(sub.Pairs, STSPair{S1: p.s1, S2: p.s2, Score: score})
	}
	if n != len(pairs) {
		return STSSubset{}, &ParseError{File: goldName, Msg: fmt.Sprintf("%d lines, but %s has %d: expected one gold line per sentence pair", n, inName, len(pairs))}
	}
	if len(sub.Pairs) == 0 {
		what := "no lines"
		if n > 0 {
			what = fmt.Sprintf("all %d gold lines empty", n)
		}
		return STSSubset{}, &ParseError{File: goldName, Msg: fmt.Sprintf("no scored pair (%s): expected at least one score", what)}
	}
	return sub, nil
}

// ConcatSTSSubsets returns the scored pairs of subsets, concatenated in
// order: SimCSE's "all" setting of an STS year scores them as one set.
func ConcatSTSSubsets(subsets []STSSubset) []STSPair {
	var out []STSPair
	for _, s := range subsets {
		out = append(out, s.Pairs...)
	}
	return out
}
