package fsbridge

import "context"

// CheckRead applies the workspace policy to a read of path (absolute)
// without reading it, as ReadTextFile does first: a path outside the
// workspace, or leading out of it through a symlink, asks the user (or
// follows their "always" answer). For what reads a file by other means
// (a language server's query, the editor's selection).
func (b *Bridge) CheckRead(ctx context.Context, path string) error {
	_, err := b.check(ctx, path, "read")
	return err
}
