// Package configs embeds the shipped experiment configs (this directory's
// *.yaml), so that a command can run one without a path relative to the
// repository: the text table (package table) runs simcse-stsb.yaml,
// simcse-stsb-dcl.yaml and simcse-stsb-hcl.yaml exactly as shipped.
package configs

import (
	"embed"
	"fmt"
	"io/fs"
	"strings"
)

//go:embed *.yaml
var files embed.FS

// Read returns the shipped config name ("simcse-stsb.yaml"), or an error
// listing the shipped configs.
func Read(name string) ([]byte, error) {
	b, err := files.ReadFile(name)
	if err != nil {
		names, _ := fs.Glob(files, "*.yaml")
		return nil, fmt.Errorf("config %q: not among the shipped configs (%s)", name, strings.Join(names, ", "))
	}
	return b, nil
}
