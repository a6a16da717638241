package data

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/batchsampler-go/batchsampler/internal/testenv"
)

func TestReadSTSFixture(t *testing.T) {
	got, err := ReadSTS(filepath.Join("testdata", "text", "sts-fixture.csv"))
	if err != nil {
		t.Fatal(err)
	}
	want := []STSPair{
		{"A man is playing a flute.", "A man is playing a flute.", 5},
		{`"He said it was fine.`, `She said "nothing" at all.`, 1.2},
		{"It depends on the school.", "It really depends on the program.", 3},
		{"A dog runs.", "The stock market fell.", 0},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
}

func TestReadSTSErrors(t *testing.T) {
	ok := "g\tf\t2012\t1\t2.5\tA b.\tC d.\n"
	cases := []struct {
		name string
		in   string
		line int
		msg  string
	}{
		{"8 fields", ok + "g\tf\t2012\t1\t2.5\tA b.\tC d.\textra\n", 2, "8 tab-separated fields"},
		{"6 fields", ok + ok + "g\tf\t2012\t1\t2.5\tA b. C d.\n", 3, "6 tab-separated fields"},
		{"space separated", "g f 2012 1 2.5 A b. C d.\n", 1, "1 tab-separated fields"},
		{"score not a number", "g\tf\t2012\t1\tfive\tA\tB\n", 1, `"five": expected a number`},
		{"score nan", "g\tf\t2012\t1\tNaN\tA\tB\n", 1, "expected a number"},
		{"score too high", "g\tf\t2012\t1\t5.01\tA\tB\n", 1, "expected a score in [0, 5]"},
		{"score negative", "\n\ng\tf\t2012\t1\t-1\tA\tB\n", 3, "expected a score in [0, 5]"},
		{"empty sentence 1", "g\tf\t2012\t1\t1\t  \tB\n", 1, "field 6 (sentence1) is empty"},
		{"empty sentence 2", "g\tf\t2012\t1\t1\tA\t\n", 1, "field 7 (sentence2) is empty"},
		{"invalid utf-8", ok + "g\tf\t2012\t1\t1\tA\xc3\tB\n", 2, "invalid UTF-8 at byte 15"},
		{"too long", ok + "g\tf\t2012\t1\t1\tA\t" + strings.Repeat("b", maxSTSLineBytes) + "\n", 2, "expected at most"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ReadSTSFrom(strings.NewReader(c.in), "sts.csv")
			var pe *ParseError
			if !errors.As(err, &pe) || pe.File != "sts.csv" || pe.Line != c.line || !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("error %v: want sts.csv line %d containing %q", err, c.line, c.msg)
			}
		})
	}
	if _, err := ReadSTS(filepath.Join(t.TempDir(), "none.csv")); err == nil {
		t.Error("missing file: no error")
	}
}

func TestReadSTSShared(t *testing.T) {
	first := STSPair{"A girl is styling her hair.", "A girl is brushing her hair.", 2.5}
	firstSE := STSPair{"a girl is styling her hair .", "a girl is brushing her hair .", 2.5}
	for _, c := range []struct {
		split    string
		n        int
		checkTop bool
	}{
		{"test", 1379, true},
		{"dev", 1500, false},
		{"train", 5749, false},
	} {
		orig, err := ReadSTS(testenv.Path(t, "sts", "sts-"+c.split+".csv"))
		if err != nil {
			t.Fatal(err)
		}
		se, err := ReadSTS(testenv.Path(t, "sts", "senteval", "sts-"+c.split+".csv"))
		if err != nil {
			t.Fatal(err)
		}
		if len(orig) != c.n || len(se) != c.n {
			t.Fatalf("%s: %d original and %d SentEval pairs, want %d", c.split, len(orig), len(se), c.n)
		}
		if c.checkTop && (orig[0] != first || se[0] != firstSE) {
			t.Errorf("%s: first pairs %+v / %+v, want %+v / %+v", c.split, orig[0], se[0], first, firstSE)
		}
		quoted, differ := 0, 0
		for i := range orig {
			// The two copies hold the same pairs in the same order: equal
			// scores, and the SentEval sentences are lower-cased and
			// tokenised versions of the originals.
			if orig[i].Score != se[i].Score || orig[i].Score < 0 || orig[i].Score > 5 {
				t.Fatalf("%s pair %d: scores %v and %v", c.split, i, orig[i].Score, se[i].Score)
			}
			if strings.Contains(orig[i].S1+orig[i].S2, `"`) {
				quoted++
			}
			for _, pair := range [][2]string{{orig[i].S1, se[i].S1}, {orig[i].S2, se[i].S2}} {
				if squash(pair[0]) != squash(pair[1]) {
					differ++
				}
			}
		}
		// Moses tokenisation splits clitics ("woman ' s"); with apostrophes
		// and token boundaries removed, our tokens of every sentence agree
		// between the two copies (measured: 0 differences in all splits).
		if differ > 0 {
			t.Errorf("%s: %d of %d sentences tokenise differently in the two copies", c.split, differ, 2*c.n)
		}
		if quoted == 0 {
			t.Errorf("%s: no sentence with a double quote: the quote quirk is not exercised", c.split)
		}
	}
}

func TestReadSICK(t *testing.T) {
	annotated := []SICKPair{
		{ID: "1", S1: "A dog is running in the park", S2: "A dog runs in a park", Score: 4.7, Entailment: "ENTAILMENT"},
		{ID: "2", S1: "A woman is slicing an onion", S2: "Nobody is slicing an onion", Score: 3.4, Entailment: "CONTRADICTION"},
		{ID: "5", S1: "Two kids are playing football", S2: "A man is cooking pasta", Score: 1, Entailment: "NEUTRAL"},
	}
	got, err := ReadSICK(filepath.Join("testdata", "text", "SICK_annotated_fixture.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, annotated) {
		t.Fatalf("annotated: got %+v\nwant %+v", got, annotated)
	}
	full := []SICKPair{
		{ID: "1", S1: "A dog is running in the park", S2: "A dog runs in a park", Score: 4.7, Entailment: "ENTAILMENT", Set: "TRAIN"},
		{ID: "9", S1: "A cat sleeps on the sofa", S2: "There is no cat on the sofa", Score: 3.55, Entailment: "CONTRADICTION", Set: "TEST"},
	}
	got, err = ReadSICK(filepath.Join("testdata", "text", "SICK_full_fixture.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, full) {
		t.Fatalf("full: got %+v\nwant %+v", got, full)
	}
	if p := full[1].STS(); p != (STSPair{full[1].S1, full[1].S2, 3.55}) {
		t.Errorf("STS() = %+v", p)
	}
	// Without a header the five annotated columns are assumed.
	got, err = ReadSICKFrom(strings.NewReader("6\tA b\tC d\t3.3\tNEUTRAL\n"), "x")
	if err != nil || len(got) != 1 || got[0].Score != 3.3 || got[0].ID != "6" {
		t.Fatalf("headerless: %+v %v", got, err)
	}
	// Columns are found by name.
	got, err = ReadSICKFrom(strings.NewReader("relatedness_score\tsentence_B\tpair_ID\tsentence_A\n2\tB b\t7\tA a\n"), "x")
	if err != nil || len(got) != 1 || got[0] != (SICKPair{ID: "7", S1: "A a", S2: "B b", Score: 2}) {
		t.Fatalf("reordered: %+v %v", got, err)
	}
}

func TestReadSICKErrors(t *testing.T) {
	h := "pair_ID\tsentence_A\tsentence_B\trelatedness_score\tentailment_judgment\n"
	cases := []struct {
		name string
		in   string
		line int
		msg  string
	}{
		{"missing column", "pair_ID\tsentence_A\trelatedness_score\n", 1, `no column "sentence_B"`},
		{"duplicate column", "pair_ID\tsentence_A\tsentence_A\tsentence_B\trelatedness_score\n", 1, "appears twice"},
		{"field count", h + "1\tA\tB\t3\n", 2, "4 tab-separated fields: expected 5"},
		{"score range", h + "1\tA\tB\t0.5\tNEUTRAL\n", 2, "expected a score in [1, 5]"},
		{"score text", h + "1\tA\tB\thigh\tNEUTRAL\n", 2, "expected a number"},
		{"label", h + "1\tA\tB\t3\tneutral\n", 2, "expected ENTAILMENT, NEUTRAL or CONTRADICTION"},
		{"empty sentence", h + "\n1\tA\t \t3\tNEUTRAL\n", 3, "empty sentence_A or sentence_B"},
		{"empty id", h + " \tA\tB\t3\tNEUTRAL\n", 2, "empty pair_ID"},
		{"invalid utf-8", h + "1\tA\xff\tB\t3\tNEUTRAL\n", 2, "invalid UTF-8"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ReadSICKFrom(strings.NewReader(c.in), "SICK.txt")
			var pe *ParseError
			if !errors.As(err, &pe) || pe.File != "SICK.txt" || pe.Line != c.line || !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("error %v: want SICK.txt line %d containing %q", err, c.line, c.msg)
			}
		})
	}
}

// squash joins the tokens of s without apostrophes.
func squash(s string) string {
	return strings.ReplaceAll(strings.Join(Tokenize(s), ""), "'", "")
}

// TestReadSTSEmptyNamesTheFile: a file without pairs is an error naming the
// file (it used to surface later as "Spearman: 0 values").
func TestReadSTSEmptyNamesTheFile(t *testing.T) {
	for _, in := range []string{"", "\n\n", "  \r\n"} {
		_, err := ReadSTSFrom(strings.NewReader(in), "sts-test.csv")
		if err == nil || !strings.Contains(err.Error(), "sts-test.csv: no sentence pairs") {
			t.Errorf("%q: %v", in, err)
		}
	}
}
