package data

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
	"testing"
)

// writeSTSSubset writes dir/STS.input.<subset>.txt and dir/STS.gs.<subset>.txt.
func writeSTSSubset(t testing.TB, dir, subset, input, gold string) {
	t.Helper()
	in, gs := STSSubsetFiles(dir, subset)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(in, []byte(input), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(gs, []byte(gold), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestReadSTSSubsetFormats(t *testing.T) {
	cases := []struct {
		name        string
		input, gold string
		want        []STSPair
		unscored    int
	}{
		{"plain", "A b.\tC d.\nE f.\tG h.\n", "4.2\n0\n",
			[]STSPair{{"A b.", "C d.", 4.2}, {"E f.", "G h.", 0}}, 0},
		{"2016 source columns", "A b.\tC d.\tsrc-1\tsrc-2\nE\tF\t\t\n", "5.000\n1.5\n",
			[]STSPair{{"A b.", "C d.", 5}, {"E", "F", 1.5}}, 0},
		{"quotes inside sentences", "\"He said it.\tShe said \"no\" at all.\n'a'\t\"\"\n", "3\n2\n",
			[]STSPair{{`"He said it.`, `She said "no" at all.`, 3}, {"'a'", `""`, 2}}, 0},
		{"empty gold lines", "A\tB\nC\tD\nE\tF\nG\tH\n", "\n1.2\n\n3.4\n",
			[]STSPair{{"C", "D", 1.2}, {"G", "H", 3.4}}, 2},
		{"empty last gold line", "A\tB\nC\tD\n", "2\n\n",
			[]STSPair{{"A", "B", 2}}, 1},
		{"blank gold line counts as empty", "A\tB\nC\tD\n", " \t\n2\n",
			[]STSPair{{"C", "D", 2}}, 1},
		{"CRLF", "A b.\tC d.\r\nE\tF\r\n", "1\r\n\r\n",
			[]STSPair{{"A b.", "C d.", 1}}, 1},
		{"no trailing newline", "A\tB\nC\tD", "1\n2",
			[]STSPair{{"A", "B", 1}, {"C", "D", 2}}, 0},
		{"byte order marks", "\xef\xbb\xbfA\tB\nC\tD\n", "\xef\xbb\xbf1\n2\n",
			[]STSPair{{"A", "B", 1}, {"C", "D", 2}}, 0},
		{"white space around sentences, empty sentence", "  A  \t B \n\tD\n", "1\n2\n",
			[]STSPair{{"A", "B", 1}, {"", "D", 2}}, 0},
		{"UTF-8 text", "Café – naïve\t東京\n", "2.5\n",
			[]STSPair{{"Café – naïve", "東京", 2.5}}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			writeSTSSubset(t, dir, "MSRpar", c.input, c.gold)
			got, err := ReadSTSSubset(dir, "MSRpar")
			if err != nil {
				t.Fatal(err)
			}
			if got.Name != "MSRpar" || !slices.Equal(got.Pairs, c.want) || got.Unscored != c.unscored || got.Lines != len(c.want)+c.unscored {
				t.Fatalf("got %+v\nwant pairs %+v, %d unscored", got, c.want, c.unscored)
			}
		})
	}
}

func TestReadSTSSubsetErrors(t *testing.T) {
	cases := []struct {
		name        string
		input, gold string
		file        string // "input" or "gold"
		line        int
		msg         []string
	}{
		{"more gold lines", "A\tB\n", "1\n2\n", "gold", 0, []string{"2 lines, but", "STS.input.x.txt has 1", "one gold line per sentence pair"}},
		{"fewer gold lines", "A\tB\nC\tD\nE\tF\n", "1\n2", "gold", 0, []string{"2 lines, but", "has 3"}},
		{"gold not a number", "A\tB\nC\tD\n", "1\nfive\n", "gold", 2, []string{`gold score: "five": expected a number`}},
		{"gold NaN", "A\tB\n", "nan\n", "gold", 1, []string{"expected a number"}},
		{"gold above 5", "A\tB\n", "5.5\n", "gold", 1, []string{"expected a score in [0, 5]"}},
		{"gold two columns", "A\tB\n", "1\t2\n", "gold", 1, []string{"expected a number"}},
		{"no tab", "A\tB\nC D\n", "1\n2\n", "input", 2, []string{"no tab: expected two tab-separated sentences"}},
		{"blank input line", "A\tB\n\nC\tD\n", "1\n\n2\n", "input", 2, []string{"no tab"}},
		{"invalid UTF-8 input", "A\tB\xff\n", "1\n", "input", 1, []string{"invalid UTF-8 at byte 4"}},
		{"invalid UTF-8 gold", "A\tB\n", "1\xc3\n", "gold", 1, []string{"invalid UTF-8"}},
		{"all unscored", "A\tB\nC\tD\n", "\n\n", "gold", 0, []string{"no scored pair (all 2 gold lines empty)"}},
		{"empty files", "", "", "gold", 0, []string{"no scored pair (no lines)"}},
		{"input line too long", "A\t" + strings.Repeat("b", maxSTSLineBytes) + "\n", "1\n", "input", 1, []string{"expected at most"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			writeSTSSubset(t, dir, "x", c.input, c.gold)
			in, gs := STSSubsetFiles(dir, "x")
			file := map[string]string{"input": in, "gold": gs}[c.file]
			_, err := ReadSTSSubset(dir, "x")
			var pe *ParseError
			if !errors.As(err, &pe) || pe.File != file || pe.Line != c.line {
				t.Fatalf("error %v: want a *ParseError for %s line %d", err, file, c.line)
			}
			for _, m := range c.msg {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("error %q lacks %q", err, m)
				}
			}
		})
	}
}

// stsYearFixture writes a folder of year with two pairs per subset (the
// second unscored in every other subset) and returns the expected "all"
// pairs.
func stsYearFixture(t testing.TB, dir string, year STSYear) []STSPair {
	t.Helper()
	var all []STSPair
	for i, s := range year.Subsets {
		p1 := STSPair{fmt.Sprintf("%s one %d", s, i), "A \"quoted\" one", float64(i%6) * 0.8}
		p2 := STSPair{fmt.Sprintf("%s two", s), "another", 4.25}
		gold := fmt.Sprintf("%g\n%g\n", p1.Score, p2.Score)
		all = append(all, p1)
		if i%2 == 1 {
			gold = fmt.Sprintf("%g\n\n", p1.Score)
		} else {
			all = append(all, p2)
		}
		input := p1.S1 + "\t" + p1.S2 + "\r\n" + p2.S1 + "\t" + p2.S2 + "\tsource\r\n"
		writeSTSSubset(t, dir, s, input, gold)
	}
	return all
}

func TestReadSTSYear(t *testing.T) {
	root := t.TempDir()
	for _, year := range STSYears {
		t.Run(year.Name, func(t *testing.T) {
			dir := year.Path(root)
			want := stsYearFixture(t, dir, year)
			subs, err := ReadSTSYear(dir, year)
			if err != nil {
				t.Fatal(err)
			}
			if len(subs) != len(year.Subsets) {
				t.Fatalf("%d subsets, want %d", len(subs), len(year.Subsets))
			}
			for i, s := range subs {
				if s.Name != year.Subsets[i] || s.Lines != 2 || s.Unscored != i%2 {
					t.Errorf("subset %d: %s, %d lines, %d unscored", i, s.Name, s.Lines, s.Unscored)
				}
			}
			if got := ConcatSTSSubsets(subs); !slices.Equal(got, want) {
				t.Errorf("all: got %+v\nwant %+v", got, want)
			}

			// A missing subset is an error naming its file.
			missing := year.Subsets[len(year.Subsets)-1]
			_, gold := STSSubsetFiles(dir, missing)
			if err := os.Remove(gold); err != nil {
				t.Fatal(err)
			}
			_, err = ReadSTSYear(dir, year)
			if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), gold) || !strings.Contains(err.Error(), year.Name) {
				t.Errorf("missing %s: error %v", gold, err)
			}
		})
	}
}

// TestSTSYearsAsSentEval pins the years to SentEval's senteval/sts.py
// (STS12Eval … STS16Eval datasets) and its engine's folder names
// (name + "-en-test").
func TestSTSYearsAsSentEval(t *testing.T) {
	want := map[string][]string{
		"STS12": {"MSRpar", "MSRvid", "SMTeuroparl", "surprise.OnWN", "surprise.SMTnews"},
		"STS13": {"FNWN", "headlines", "OnWN"},
		"STS14": {"deft-forum", "deft-news", "headlines", "images", "OnWN", "tweet-news"},
		"STS15": {"answers-forums", "answers-students", "belief", "headlines", "images"},
		"STS16": {"answer-answer", "headlines", "plagiarism", "postediting", "question-question"},
	}
	if len(STSYears) != len(want) {
		t.Fatalf("%d years, want %d", len(STSYears), len(want))
	}
	for _, y := range STSYears {
		if !slices.Equal(y.Subsets, want[y.Name]) || y.Dir != y.Name+"-en-test" {
			t.Errorf("%s: dir %s, subsets %v; want %s-en-test, %v", y.Name, y.Dir, y.Subsets, y.Name, want[y.Name])
		}
		if got, ok := LookupSTSYear(strings.ToLower(y.Name)); !ok || got.Name != y.Name {
			t.Errorf("LookupSTSYear(%q) = %v, %v", strings.ToLower(y.Name), got.Name, ok)
		}
	}
	if _, ok := LookupSTSYear("STS17"); ok {
		t.Error("STS17 found")
	}
	if _, err := ReadSTSYear(t.TempDir(), STSYear{Name: "none"}); err == nil {
		t.Error("a year without subsets: no error")
	}
}
