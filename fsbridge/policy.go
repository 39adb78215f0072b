package fsbridge

import (
	"context"
	"errors"
	"io/fs"
	"os"
)

// CheckRead applies the workspace policy to a read of path (absolute)
// without reading it, as ReadTextFile does first: a path outside the
// workspace, or leading out of it through a symlink, asks the user (or
// follows their "always" answer). For what reads a file by other means
// (a language server's query, the editor's selection).
func (b *Bridge) CheckRead(ctx context.Context, path string) error {
	_, err := b.check(ctx, path, "read")
	return err
}

// CheckLoad is CheckRead for a door that makes the editor load path into a
// buffer (a language server's query about a file): unless a buffer of it
// is loaded already (nothing is opened then), what is there must be a
// regular file of at most Config.MaxBytes, as ReadTextFile checks before
// it opens anything. A FIFO would block Neovim in open(2) for good, a
// device could act, and a huge file would be loaded whole. Opens nothing;
// the editor still loads the file guarded (a FIFO swapped in after this
// check must not block it either).
func (b *Bridge) CheckLoad(ctx context.Context, path string) error {
	for attempt := 1; ; attempt++ {
		r, err := b.check(ctx, path, "read")
		if err != nil {
			return err
		}
		real := r.Path
		if b.isLoaded(real) {
			return nil
		}
		if r.Phantom || r.Missing > 0 {
			return reqErr(CodeResourceNotFound, real, ReasonNotFound, "file not found: %s", real)
		}
		err = checkRegular(real)
		var nr *notRegularError
		switch {
		case errors.Is(err, ErrPathChanged) && attempt < maxPathAttempts:
			continue
		case errors.Is(err, ErrPathChanged):
			return pathChanged(real)
		case errors.Is(err, fs.ErrNotExist):
			return reqErr(CodeResourceNotFound, real, ReasonNotFound, "file not found: %s", real)
		case errors.As(err, &nr) && nr.Mode.IsDir():
			return reqErr(CodeInvalidParams, real, ReasonIsDir, "is a directory, not a file: %s", real)
		case errors.As(err, &nr):
			return notRegular(real, nr.Mode)
		case err != nil:
			return osErr(real, err)
		}
		fi, err := os.Lstat(real)
		if err != nil {
			return osErr(real, err)
		}
		if fi.Size() > b.cfg.MaxBytes {
			return tooLarge(real, fi.Size(), b.cfg.MaxBytes)
		}
		return nil
	}
}
