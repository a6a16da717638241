package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"golang.org/x/term"

	"github.com/batchsampler-go/batchsampler/cellrun"
	"github.com/batchsampler-go/batchsampler/cmd/internal/progress"
	"github.com/batchsampler-go/batchsampler/table"
	"github.com/batchsampler-go/batchsampler/train"
)

// runShard runs task shard of an array job: its cells only, each under its
// lock, and no table (-assemble writes it when every task is done). With
// -plan or -configs it lists or writes the shard's cells instead. A cell
// of the shard that failed (not one another task holds) is an error, so
// the scheduler marks the task failed.
func runShard(modality string, plan *table.Plan, shard cellrun.Shard, out string, parallel int, planOnly bool, configs string) error {
	mine := *plan
	mine.Cells = shard.Select(plan.Cells)
	switch {
	case planOnly && modality == "text":
		printTextPlan(&mine)
		return nil
	case planOnly && modality == "image":
		printImagePlan(os.Stdout, &mine)
		return nil
	case planOnly:
		printPlan(&mine)
		return nil
	case configs != "":
		return writeConfigs(&mine, configs)
	}
	logf := func(msg string) {
		fmt.Fprintf(os.Stderr, "%s shard %s: %s\n", time.Now().Format("15:04:05"), shard, msg)
	}
	if len(mine.Cells) == 0 {
		logf(fmt.Sprintf("no cell (the table has %d): nothing to do", len(plan.Cells)))
		return nil
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	tty := term.IsTerminal(int(os.Stderr.Fd()))
	sts, err := cellrun.Run(ctx, mine.Cells, cellrun.Options{Dir: out, Log: logf, Parallel: parallel,
		ObserverFor: func(c cellrun.Cell) train.Observer { return progress.Observer(tty, c.Dataset+"/"+c.Block+" ") }})
	if err != nil {
		if errors.Is(err, train.ErrInterrupted) {
			return fmt.Errorf("shard %s: %w: continue by running the task again", shard, err)
		}
		return fmt.Errorf("shard %s: %w", shard, err)
	}
	var done, busy, failed []string
	for _, st := range sts {
		name := st.Dataset + "/" + st.Block
		switch {
		case st.Busy:
			busy = append(busy, name)
		case st.Err != nil:
			failed = append(failed, fmt.Sprintf("%s: %v", name, st.Err))
		default:
			done = append(done, name)
		}
	}
	logf(fmt.Sprintf("%d of %d cells finished (%s); %d run by another task (%s); then: cmd/table -assemble -out %s",
		len(done), len(sts), strings.Join(done, ", "), len(busy), strings.Join(busy, ", "), out))
	if len(failed) > 0 {
		return fmt.Errorf("shard %s: %d cell(s) failed:\n%s", shard, len(failed), strings.Join(failed, "\n"))
	}
	return nil
}
