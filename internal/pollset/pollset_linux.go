//go:build linux

package pollset

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// MaxTags bounds the descriptors of a set.
const MaxTags = 32

// Set is a set of descriptors, each with a tag; safe for concurrent use.
type Set struct {
	ep int
}

// New returns an empty set.
func New() (*Set, error) {
	ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("epoll_create1: %w", err)
	}
	return &Set{ep: ep}, nil
}

// Add puts fd in the set under tag (0 to MaxTags-1). The set sees fd until
// it is closed.
func (s *Set) Add(fd int, tag uint) error {
	if tag >= MaxTags {
		return fmt.Errorf("pollset: tag %d out of range", tag)
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(tag)}
	if err := unix.EpollCtl(s.ep, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
		return fmt.Errorf("epoll_ctl add %d: %w", fd, err)
	}
	return nil
}

// Ready returns the tags of the descriptors readable now (or hung up, or
// in error: a read of them would not wait either), bit i for tag i.
func (s *Set) Ready() (uint32, error) {
	var evs [MaxTags]unix.EpollEvent
	for {
		// Raw: with a zero timeout it never waits, so the scheduler need
		// not be told (nor its monitor woken).
		r, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(s.ep), uintptr(unsafe.Pointer(&evs[0])), MaxTags, 0, 0, 0)
		if e == unix.EINTR {
			continue
		}
		if e != 0 {
			return 0, fmt.Errorf("epoll_wait: %w", e)
		}
		n := int(r)
		var mask uint32
		for _, ev := range evs[:n] {
			mask |= 1 << uint(ev.Fd)
		}
		return mask, nil
	}
}

// Close releases the set.
func (s *Set) Close() error {
	return unix.Close(s.ep)
}
