// Package pollset tells, in one system call, which of a few descriptors
// have something to read now: an epoll_wait that does not wait.
package pollset
