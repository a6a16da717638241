package main

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/batchsampler-go/batchsampler/data"
)

// stl10Files is a tiny STL-10 in the layout of the official archive: 3
// training, 2 test and 4 unlabeled images of 96×96×3 bytes, labels 1..10.
func stl10Files() map[string][]byte {
	img := func(n, seed int) []byte {
		b := make([]byte, n*data.STL10ImageBytes)
		for i := range b {
			b[i] = byte(i*7 + seed)
		}
		return b
	}
	return map[string][]byte{
		"train_X.bin":      img(3, 1),
		"train_y.bin":      {1, 10, 4},
		"test_X.bin":       img(2, 2),
		"test_y.bin":       {2, 3},
		"unlabeled_X.bin":  img(4, 3),
		"class_names.txt":  []byte(strings.Join(data.STL10Classes, "\n") + "\n"),
		"fold_indices.txt": []byte("0 1 2\n"),
	}
}

// stl10Archive packs files under stl10_binary/, as the official archive
// does.
func stl10Archive(t *testing.T, files map[string][]byte) []byte {
	t.Helper()
	members := map[string]string{data.STL10Path + "/": ""}
	for n, b := range files {
		members[data.STL10Path+"/"+n] = string(b)
	}
	return tarGz(t, members)
}

func TestDownloadSTL10(t *testing.T) {
	good := stl10Archive(t, stl10Files())
	h := md5.Sum(good)
	sum := hex.EncodeToString(h[:])
	badFiles := stl10Files()
	badFiles["train_y.bin"] = []byte{1, 11, 4}
	bad := stl10Archive(t, badFiles)
	noUnlabeled := stl10Files()
	delete(noUnlabeled, "unlabeled_X.bin")
	srv := serve(t, "/stl10_binary.tar.gz", good)
	badSrv := serve(t, "/stl10_binary.tar.gz", bad)
	partSrv := serve(t, "/stl10_binary.tar.gz", stl10Archive(t, noUnlabeled))
	url := srv.URL + "/stl10_binary.tar.gz"
	zeros := strings.Repeat("0", 32)
	tests := []struct {
		name, dataset, url, md5 string
		wantErr                 []string
	}{
		{"good archive", "stl-10", url, sum, nil},
		{"spelling STL-10", "STL-10", url, sum, nil},
		{"spelling stl10", "stl10", url, "any", nil},
		{"md5 mismatch", "stl-10", url, zeros, []string{"download " + url + ": checksum mismatch: expected md5 " + zeros + ", received md5 " + sum}},
		{"label out of range", "stl-10", badSrv.URL + "/stl10_binary.tar.gz", "any",
			[]string{badSrv.URL + "/stl10_binary.tar.gz: read STL-10 ", "train_y.bin: label 11 of image 1"}},
		{"no unlabeled_X.bin", "stl-10", partSrv.URL + "/stl10_binary.tar.gz", "any", []string{"no unlabeled_X.bin in it"}},
		{"not found", "stl-10", srv.URL + "/nope.tar.gz", "any", []string{"404"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "root")
			var out, errOut bytes.Buffer
			err := run(context.Background(), []string{"-dataset", tc.dataset, "-root", root, "-url", tc.url, "-md5", tc.md5}, &out, &errOut)
			if tc.wantErr != nil {
				wantFailure(t, err, tc.wantErr, root)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			target := filepath.Join(root, data.STL10Path)
			verified := "checksum verified"
			if tc.md5 == "any" {
				verified = "checksum not verified; pin it with -md5 " + sum
			}
			for _, w := range []string{"downloading " + tc.url, "md5 " + sum + "  " + url, verified,
				target + ": 3 training, 2 test and 4 unlabeled images 3x96x96, 10 classes [airplane bird car",
				"stl-10 is in " + target + "; train with: go run ./cmd/train -config configs/simclr-stl10.yaml -set data.root=" + root + "\n"} {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output\n%s\ndoes not contain %q", out.String(), w)
				}
			}
			got := listTree(t, root)
			want := []string{data.STL10Path}
			for n := range stl10Files() {
				want = append(want, data.STL10Path+"/"+n)
			}
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("root holds %v, want %v", got, want)
			}
			s, err := data.ReadSTL10Dir(root, "train", data.STL10Options{})
			if err != nil || !slices.Equal(s.Labels, []int{0, 9, 3}) {
				t.Fatalf("read back: %v", err)
			}
		})
	}

	// A download replaces an STL-10 already there only once the new copy
	// is verified.
	root := t.TempDir()
	old := filepath.Join(root, data.STL10Path, "old.txt")
	os.MkdirAll(filepath.Dir(old), 0o755)
	os.WriteFile(old, []byte("old"), 0o644)
	var out bytes.Buffer
	if err := run(context.Background(), []string{"-dataset", "stl-10", "-root", root, "-url", url, "-md5", zeros}, &out, &out); err == nil {
		t.Fatal("md5 mismatch: no error")
	}
	if _, err := os.Stat(old); err != nil {
		t.Fatalf("a failed download removed the STL-10 already there: %v", err)
	}
	if err := run(context.Background(), []string{"-dataset", "stl-10", "-root", root, "-url", url, "-md5", sum}, &out, &out); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(old); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the old copy is still there: %v", err)
	}
}

func TestSTL10TrainCommand(t *testing.T) {
	config, sets := trainArgs("stl-10")
	if config != "configs/simclr-stl10.yaml" || sets != nil {
		t.Fatalf("trainArgs(stl-10) = %q, %q", config, sets)
	}
	if got, want := trainCommand("stl-10", data.DefaultRoot(), true), "go run ./cmd/train -config configs/simclr-stl10.yaml"; got != want {
		t.Fatalf("default root: %q, want %q", got, want)
	}
	for _, n := range []string{"stl-10", "STL-10", "stl10", "STL10", "Stl-10"} {
		if !isSTL10(n) {
			t.Errorf("isSTL10(%q) = false", n)
		}
	}
	for _, n := range []string{"stl", "stl-100", "stl_10", ""} {
		if isSTL10(n) {
			t.Errorf("isSTL10(%q) = true", n)
		}
	}
}

func TestHelpSTL10(t *testing.T) {
	var out, errOut bytes.Buffer
	run(context.Background(), []string{"-h"}, &out, &errOut)
	for _, w := range []string{"stl-10", "DIR/stl10_binary/", data.STL10URL, "md5 " + data.STL10MD5} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("help does not mention %q:\n%s", w, out.String())
		}
	}
	// An unknown name lists STL-10 among the datasets.
	err := run(context.Background(), []string{"-dataset", "../stl"}, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), data.STL10URL) {
		t.Fatalf("bad name: error %v", err)
	}
}
