// Package checkpoint keeps, for one chat, the state of the workspace
// before each user prompt, as far as the following turns change it, so
// that the workspace can be put back to before any message (rewind) and
// that put back again (redo, until the next prompt).
//
// A checkpoint is taken when a prompt is sent (Begin): it costs nothing
// then, whatever the size of the workspace or the length of the history.
// Its content is filled lazily from the change record the session keeps
// anyway for the review (package review, fed by turnscan and the fs
// bridge): the first time a file is reported changed after a checkpoint
// (Change), the text before the change is that file's pre-image at the
// checkpoint and is stored; the agent's last version of it in that
// checkpoint (Post) is stored too, for undoing the agent's changes while
// keeping the user's later ones (a three-way merge per turn, newest
// first). Files are stored content-addressed (SHA-256, gzip) under the
// chat's own directory (stdpath data or state, given by the caller),
// never in the user's repository: no commits, stashes, index or refs.
// The index of checkpoints is an append-only journal of JSON lines,
// compacted when checkpoints are dropped. A size cap bounds the store:
// past it the oldest checkpoints go.
//
// Why not a shadow git repository (as Cline's checkpoints are)? It would
// snapshot every file at every prompt whatever changed it, with no help
// from the record, but its cost grows with the workspace: `git add -A`
// into a private index lstat()s every file of a 20,000-file tree at each
// prompt (and, outside git, the first snapshot reads and stores all of
// it: far over 2x the changed files), and it cannot tell the agent's
// changes from the user's, which rewinding needs to keep the user's
// edits. The record already knows each changed file, its text before the
// turn (git's index, or the start scan, for changes landing faster than
// the tool call naming them) and who changed it; storing its pre-images
// costs O(files changed). The price is that the checkpoints are only as
// complete as the record: a change the record never saw is not in them,
// and a file whose text on disk is not the one the record last saw is
// left alone by a rewind and named ("changed in a way the record cannot
// explain"), never overwritten.
//
// checkpoint reads and writes files; it knows nothing of Neovim or ACP.
package checkpoint
