package data

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// STSPair is one sentence pair of a semantic-textual-similarity set with
// its gold similarity score (0–5 for STS Benchmark, 1–5 for SICK).
type STSPair struct {
	S1, S2 string
	Score  float64
}

// maxSTSLineBytes bounds one line of an STS or SICK file (the longest line
// of STS Benchmark is under 1,000 bytes).
const maxSTSLineBytes = 1 << 20

// ReadSTS reads an STS Benchmark file: the original release's
// sts-{train,dev,test}.csv or SentEval's tokenised copy of them. Each line
// has the tab-separated fields genre, file, year, id, score, sentence1,
// sentence2, and in the release some lines two more (the sources of the two
// sentences), which are ignored.
//
// The file is not CSV despite its name: fields are split on tabs only and
// double quotes are ordinary characters (a sentence may start with '"'
// without a closing one). Lines must have 7 or 9 fields; the score must be
// a number in [0, 5]; sentences are trimmed of surrounding white space and
// must not be empty; "\r\n" endings and a leading byte order mark are
// accepted; blank lines are skipped. Errors are *ParseError values that
// name the file and the 1-based line.
func ReadSTS(path string) ([]STSPair, error) {
	return readPath(path, "read STS", ReadSTSFrom)
}

// ReadSTSFrom is ReadSTS on a reader; file names the input in errors.
func ReadSTSFrom(r io.Reader, file string) ([]STSPair, error) {
	lr := newTextLines(r, file, maxSTSLineBytes)
	var out []STSPair
	for {
		b, ok, err := lr.nextText()
		if err != nil {
			return nil, err
		}
		if !ok {
			if len(out) == 0 {
				return nil, parseErr(file, 0, "no sentence pairs: expected tab-separated lines (genre, file, year, id, score, sentence1, sentence2)")
			}
			return out, nil
		}
		line := string(b)
		if strings.TrimFunc(line, unicode.IsSpace) == "" {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) != 7 && len(f) != 9 {
			return nil, parseErr(file, lr.line, "%d tab-separated fields: expected 7 (genre, file, year, id, score, sentence1, sentence2) or 9 (plus two source fields)", len(f))
		}
		score, err := parseScore(f[4], 0, 5)
		if err != nil {
			return nil, parseErr(file, lr.line, "field 5 (score): %v", err)
		}
		s1, s2 := strings.TrimFunc(f[5], unicode.IsSpace), strings.TrimFunc(f[6], unicode.IsSpace)
		if s1 == "" {
			return nil, parseErr(file, lr.line, "field 6 (sentence1) is empty: expected text")
		}
		if s2 == "" {
			return nil, parseErr(file, lr.line, "field 7 (sentence2) is empty: expected text")
		}
		out = append(out, STSPair{S1: s1, S2: s2, Score: score})
	}
}

// parseScore parses a gold score and checks it lies in [lo, hi].
func parseScore(s string, lo, hi float64) (float64, error) {
	t := strings.TrimSpace(s)
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q: expected a number", truncate(s, 40))
	}
	if v < lo || v > hi {
		return 0, fmt.Errorf("%v: expected a score in [%g, %g]", v, lo, hi)
	}
	return v, nil
}

// SICKPair is one pair of the SICK data set (Marelli et al., 2014).
type SICKPair struct {
	ID     string  // pair_ID
	S1, S2 string  // sentence_A, sentence_B
	Score  float64 // relatedness_score, 1–5
	// Entailment is "ENTAILMENT", "NEUTRAL" or "CONTRADICTION"; "" when the
	// file has no entailment column.
	Entailment string
	// Set is the SemEval_set column of the full SICK.txt ("TRAIN", "TRIAL",
	// "TEST"); "" when the file has none.
	Set string
}

// STS returns the pair as an STSPair (relatedness as the score).
func (p SICKPair) STS() STSPair { return STSPair{S1: p.S1, S2: p.S2, Score: p.Score} }

// ReadSICK reads a SICK file: tab-separated, with a header line naming the
// columns, as in SICK.txt (pair_ID, sentence_A, sentence_B,
// entailment_label, relatedness_score, …, SemEval_set) and in
// SICK_train.txt / SICK_trial.txt / SICK_test_annotated.txt (pair_ID,
// sentence_A, sentence_B, relatedness_score, entailment_judgment). Columns
// are found by name, so their order does not matter; pair_ID, sentence_A,
// sentence_B and relatedness_score are required. A file whose first line
// has no "pair_ID" field is read as the five columns of
// SICK_test_annotated.txt without a header (some copies drop it). Every line
// must have as many fields as the header, scores lie in [1, 5], entailment
// labels are one of ENTAILMENT, NEUTRAL, CONTRADICTION. Errors are
// *ParseError values with the file and line.
func ReadSICK(path string) ([]SICKPair, error) {
	return readPath(path, "read SICK", ReadSICKFrom)
}

// ReadSICKFrom is ReadSICK on a reader; file names the input in errors.
func ReadSICKFrom(r io.Reader, file string) ([]SICKPair, error) {
	lr := newTextLines(r, file, maxSTSLineBytes)
	var out []SICKPair
	col := map[string]int(nil)
	nf := 0
	for {
		b, ok, err := lr.nextText()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		line := string(b)
		if strings.TrimFunc(line, unicode.IsSpace) == "" {
			continue
		}
		f := strings.Split(line, "\t")
		if col == nil {
			var header bool
			col, nf, header, err = sickColumns(f)
			if err != nil {
				return nil, parseErr(file, lr.line, "%v", err)
			}
			if header {
				continue
			}
		}
		if len(f) != nf {
			return nil, parseErr(file, lr.line, "%d tab-separated fields: expected %d as in the header", len(f), nf)
		}
		p := SICKPair{
			ID: strings.TrimSpace(f[col["pair_ID"]]),
			S1: strings.TrimFunc(f[col["sentence_A"]], unicode.IsSpace),
			S2: strings.TrimFunc(f[col["sentence_B"]], unicode.IsSpace),
		}
		if p.ID == "" {
			return nil, parseErr(file, lr.line, "empty pair_ID")
		}
		if p.S1 == "" || p.S2 == "" {
			return nil, parseErr(file, lr.line, "empty sentence_A or sentence_B: expected text")
		}
		if p.Score, err = parseScore(f[col["relatedness_score"]], 1, 5); err != nil {
			return nil, parseErr(file, lr.line, "relatedness_score: %v", err)
		}
		if c, ok := col["entailment"]; ok {
			p.Entailment = strings.TrimSpace(f[c])
			switch p.Entailment {
			case "ENTAILMENT", "NEUTRAL", "CONTRADICTION":
			default:
				return nil, parseErr(file, lr.line, "entailment label %q: expected ENTAILMENT, NEUTRAL or CONTRADICTION", truncate(p.Entailment, 40))
			}
		}
		if c, ok := col["SemEval_set"]; ok {
			p.Set = strings.TrimSpace(f[c])
		}
		out = append(out, p)
	}
	return out, nil
}

// sickColumns maps column names to indices from the first line f of a SICK
// file and returns the number of fields each line must have; header reports
// whether f is a header (it has a pair_ID field).
func sickColumns(f []string) (col map[string]int, nf int, header bool, err error) {
	if !slices.ContainsFunc(f, func(s string) bool { return strings.TrimSpace(s) == "pair_ID" }) {
		// SICK_test_annotated.txt without its header.
		return map[string]int{"pair_ID": 0, "sentence_A": 1, "sentence_B": 2, "relatedness_score": 3, "entailment": 4}, 5, false, nil
	}
	col = make(map[string]int, len(f))
	for i, name := range f {
		name = strings.TrimSpace(name)
		switch name {
		case "entailment_judgment", "entailment_label":
			name = "entailment"
		}
		if _, dup := col[name]; dup && name != "" {
			return nil, 0, false, fmt.Errorf("header: column %q appears twice", truncate(name, 40))
		}
		col[name] = i
	}
	for _, need := range []string{"pair_ID", "sentence_A", "sentence_B", "relatedness_score"} {
		if _, ok := col[need]; !ok {
			return nil, 0, false, fmt.Errorf("header has no column %q: expected pair_ID, sentence_A, sentence_B, relatedness_score", need)
		}
	}
	return col, len(f), true, nil
}
