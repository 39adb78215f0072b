//go:build !linux

package proctree

import (
	"context"
	"log/slog"
	"time"
)

// proc is one process; without /proc none are listed.
type proc struct {
	pid, ppid, pgid int
	state           byte
}

func list() []proc                  { return nil }
func candidates() []proc            { return nil }
func owner(int) string              { return "" }
func Subreaper() error              { return nil }
func reapOnce(string, *slog.Logger) {}

// Reap does nothing but wait for ctx without /proc.
func Reap(ctx context.Context, prefix string, interval time.Duration, log *slog.Logger) {
	<-ctx.Done()
}
