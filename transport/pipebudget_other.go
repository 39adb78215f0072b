//go:build !linux

package transport

import (
	"errors"
	"syscall"
)

// userPipeBudget is the budget of grown pipes; no pipe grows here.
func userPipeBudget() int { return fallbackPipeBudget }

// pipeCapacity is unknown: a pipe's size is fixed here.
func pipeCapacity(c syscall.RawConn) (int, error) { return 0, errors.ErrUnsupported }

// setPipeCapacity fails: a pipe's size is fixed here.
func setPipeCapacity(c syscall.RawConn, size int) (int, error) {
	return 0, errors.ErrUnsupported
}
