// Package inotify reads an inotify instance's queue of events.
package inotify

import (
	"bytes"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Drain reads every event queued on the non-blocking inotify instance fd
// into buf (which must hold at least one event with a name: 16 KB does)
// and calls each with the event's watch, mask and name (empty for an
// event on the watched file itself), in order.
func Drain(fd int, buf []byte, each func(wd int32, mask uint32, name []byte)) {
	for fd >= 0 {
		n, err := unix.Read(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n <= 0 {
			return // EAGAIN: none left
		}
		b := buf[:n]
		const head = unix.SizeofInotifyEvent
		for len(b) >= head {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&b[0]))
			size := head + int(ev.Len)
			if size > len(b) {
				break
			}
			name := b[head:size]
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			b = b[size:]
			each(ev.Wd, ev.Mask, name)
		}
	}
}
