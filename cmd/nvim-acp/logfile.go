package main

import (
	"fmt"
	"os"
	"sync"
)

// logMode is the log's permissions: it holds what tools printed (an
// allowed `cat .env`), so it is readable by the user alone.
const logMode = 0o600

// maxLogBytes is the size past which the log file is rotated: it becomes
// FILE.1 (replacing the previous one) and a new FILE starts, so the log
// never takes more than twice this.
const maxLogBytes = 10 << 20

// logFile is an append-only log file rotated at a size. Several hosts (one
// per Neovim) may share it: a host that finds the file already rotated by
// another reopens it instead of rotating again.
type logFile struct {
	path string
	max  int64

	mu   sync.Mutex
	f    *os.File
	size int64
}

// openLog opens (creating) the log file at path, rotated past max bytes.
// The log is private (logMode) from its creation; an existing log or
// rotated log readable by others (an older nvim-acp made them 0644) is
// made private.
func openLog(path string, max int64) (*logFile, error) {
	l := &logFile{path: path, max: max}
	if err := l.open(); err != nil {
		return nil, err
	}
	if fi, err := os.Stat(path + ".1"); err == nil && fi.Mode().Perm()&^logMode != 0 {
		if err := os.Chmod(path+".1", logMode); err != nil {
			l.Close()
			return nil, fmt.Errorf("make log %s.1 private: %w", path, err)
		}
	}
	return l, nil
}

func (l *logFile) open() error {
	f, err := os.OpenFile(l.path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, logMode)
	if err != nil {
		return fmt.Errorf("open log %s: %w", l.path, err)
	}
	fi, err := f.Stat()
	if err == nil && fi.Mode().Perm()&^logMode != 0 {
		err = f.Chmod(logMode)
	}
	if err != nil {
		f.Close()
		return fmt.Errorf("log %s: %w", l.path, err)
	}
	l.f, l.size = f, fi.Size()
	return nil
}

// Write appends p, rotating first when p would take the file past max.
func (l *logFile) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.size+int64(len(p)) > l.max && l.size > 0 {
		if err := l.rotate(); err != nil {
			// Keep logging into the file we have rather than losing lines.
			fmt.Fprintln(os.Stderr, "nvim-acp: rotate log:", err)
		}
	}
	n, err := l.f.Write(p)
	l.size += int64(n)
	return n, err
}

// rotate renames the file to path.1 unless another host did it already,
// then opens a fresh path.
func (l *logFile) rotate() error {
	mine, err := l.f.Stat()
	if err != nil {
		return err
	}
	if cur, err := os.Stat(l.path); err == nil && os.SameFile(mine, cur) {
		if err := os.Rename(l.path, l.path+".1"); err != nil {
			return err
		}
	}
	old := l.f
	if err := l.open(); err != nil {
		return err
	}
	return old.Close()
}

// Close closes the file.
func (l *logFile) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.f.Close()
}
