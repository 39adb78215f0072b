package fsbridge

import (
	"context"
	"errors"
)

// ErrWouldWait is what ReadTextFile returns, under a context from
// WithNoWait, for a read it cannot serve without waiting. Nothing was
// recorded: the same read made without WithNoWait is served as usual.
var ErrWouldWait = errors.New("fsbridge: the read would wait")

// readNowMax bounds the files readNow reads (Linux's, readnow_linux.go):
// a larger one is read by a worker, so that it does not hold up the
// agent's other messages.
const readNowMax = 128 << 10

type noWaitKey struct{}

// WithNoWait makes ReadTextFile calls with the returned context serve a
// read only from the texts the bridge and its editor hold (Config.Texts,
// HeldEditor) or, for a small file no buffer holds, from bytes the kernel
// has in memory now (readNow), and return ErrWouldWait instead of anything
// that may wait: a question to the user (a path outside the workspace), a
// call into the editor (a buffer whose held copy is not known current, a
// load not yet reported, a stale buffer), a file's bytes read from the
// disk (a large file, bytes not in memory, a slow disk), or a path that
// changes while it is located or read.
// The host serves agents' reads this way on the goroutine that reads the
// agent's messages (host/fastfs.go), where a wait on Neovim could deadlock.
//
// What such a read may still do, and why none of it waits on Neovim or
// the user:
//   - locate's system calls on the path (an O_PATH open, which neither
//     blocks on a FIFO nor acts on a device, fstat, perhaps a readlinkat,
//     close);
//   - readNow's, on a file locate found regular: an open as openRegular's
//     (O_NONBLOCK: a FIFO swapped in does not block), fstat, preadv2 with
//     RWF_NOWAIT (which fails rather than wait for the disk or a lock),
//     fstat, close;
//   - the locks b.mu, b.checked's, the watcher's, and the Texts cache's:
//     each is held only around map updates and system calls on files,
//     never across a call into the editor, the user or the agent (the
//     watcher's track reads a file's text when it first watches it: a
//     file not yet watched for the agent is ErrWouldWait);
//   - HeldEditor's methods, which by their contract answer from the host's
//     own copy.
func WithNoWait(ctx context.Context) context.Context {
	// An agent's read (readKey) too, made once here rather than per read.
	return context.WithValue(context.WithValue(ctx, readKey{}, true), noWaitKey{}, true)
}

type drainedKey struct{}

// WithDrained says, for reads under WithNoWait with the returned context,
// that the caller drained the queues such a read otherwise reads first,
// after the read was asked: KnownPathsQueue's, and its HeldEditor's own
// (which tells by Drained). One poll over them all costs less than a read
// of each. The context holds for the read it was made for only.
func WithDrained(ctx context.Context) context.Context {
	return context.WithValue(ctx, drainedKey{}, true)
}

// Drained reports whether ctx is from WithDrained.
func Drained(ctx context.Context) bool {
	v, _ := ctx.Value(drainedKey{}).(bool)
	return v
}

// drainedFor is Drained for a read under WithNoWait.
func drainedFor(ctx context.Context) bool {
	return noWait(ctx) && Drained(ctx)
}

func noWait(ctx context.Context) bool {
	v, _ := ctx.Value(noWaitKey{}).(bool)
	return v
}

// HeldEditor is an Editor that can answer, from the copies it holds and
// without calling into the editor or waiting on anything that does, what
// a read needs: whether loads are pending (LoadChecker) and a buffer's text
// (VersionSnapshotter). known and ok are false when only the editor can
// tell; the read is then served the ordinary way.
type HeldEditor interface {
	HeldLoadsPending(ctx context.Context) (pending, known bool)
	HeldSnapshot(ctx context.Context, realPath string, disk FileVersion) (b Buffer, ok bool)
}

// heldBuffer is currentAt's editor step for a read under WithNoWait:
// done reports whether st (or err) is the answer; ErrWouldWait when the
// held copies cannot tell.
func (b *Bridge) heldBuffer(ctx context.Context, real string, strict bool, known fileState) (st state, done bool, err error) {
	he, ok := b.ed.(HeldEditor)
	if !ok {
		return st, true, ErrWouldWait
	}
	if !b.isLoaded(real) {
		pending, sure := he.HeldLoadsPending(ctx)
		if !sure {
			return st, true, ErrWouldWait
		}
		if !pending {
			return st, false, nil // the disk's
		}
	}
	buf, ok := he.HeldSnapshot(ctx, real, FileVersion{known})
	if !ok || (buf.Stale && !buf.Modified) {
		// Not held, not current, or stale (the disk's text is then read
		// and the buffer confirmed or reconciled: editor calls).
		return st, true, ErrWouldWait
	}
	st, err = b.bufferStateOf(real, buf, strict, known)
	return st, true, err
}
