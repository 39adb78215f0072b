//go:build !linux

package pollset

import "errors"

// MaxTags bounds the descriptors of a set.
const MaxTags = 32

// Set is never made here.
type Set struct{}

// New fails: there is no epoll here.
func New() (*Set, error) { return nil, errors.New("pollset: no epoll on this system") }

// Add fails.
func (s *Set) Add(fd int, tag uint) error { return errors.New("pollset: no epoll on this system") }

// Ready fails.
func (s *Set) Ready() (uint32, error) { return 0, errors.New("pollset: no epoll on this system") }

// Close does nothing.
func (s *Set) Close() error { return nil }
