package gctune_test

import (
	"fmt"

	"github.com/batchsampler-go/batchsampler/internal/gctune"
)

// A live heap of 3 GiB with 512 MiB of headroom collects at 16% growth
// instead of Go's default 100%.
func ExamplePercent() {
	fmt.Println(gctune.Percent(3<<30, 512<<20, 10))
	fmt.Println(gctune.Percent(200<<20, 512<<20, 10))
	// Output:
	// 16
	// 100
}
