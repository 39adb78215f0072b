package host

import (
	"context"

	"github.com/nvim-acp/nvim-acp/worktree"
)

// rpcWorktreeCreate is acp_worktree_create(id, dir, opts): a worktree of
// the repository dir is in (worktree.Create), made off Neovim's loop; a
// "worktree" event with id brings it (or the error).
// Once made, the repository's spares are refilled (o.Spares: how many; 0
// removes them) in the background.
func (h *Host) rpcWorktreeCreate(id int, dir string, o worktree.Options) error {
	go func() {
		t, err := worktree.Create(context.Background(), dir, o)
		if t.SpareErr != nil {
			h.log.Warn("spare worktree not usable", "repo", t.Repo, "err", t.SpareErr)
		}
		h.ui.Emit(worktreeEvent(id, t, err))
		if err == nil {
			h.spares.Fill(t.Repo, o, o.Spares)
		}
	}()
	return nil
}

// rpcWorktreeSpares is acp_worktree_spares(dir, opts): the spare
// worktrees of the repository dir is in made (opts.spares of them; 0
// removes them) in the background, before a worktree session asks.
func (h *Host) rpcWorktreeSpares(dir string, o worktree.Options) error {
	h.spares.Fill(dir, o, o.Spares)
	return nil
}

// rpcWorktreeChanges is acp_worktree_changes(tree): what the worktree
// changed since it started.
func (h *Host) rpcWorktreeChanges(t worktree.Tree) ([]worktree.Change, error) {
	cs, err := worktree.Changes(context.Background(), t)
	if cs == nil {
		cs = []worktree.Change{}
	}
	return cs, err
}

// rpcWorktreeTexts is acp_worktree_texts(tree, path): path as the
// worktree started, in it now and in the user's tree.
func (h *Host) rpcWorktreeTexts(t worktree.Tree, rel string) (map[string]any, error) {
	x, err := worktree.FileTexts(context.Background(), t, rel)
	if err != nil {
		return nil, err
	}
	out := map[string]any{}
	for k, b := range map[string][]byte{"base": x.Base, "new": x.New, "main": x.Main} {
		if b != nil {
			out[k] = string(b)
		}
	}
	return out, nil
}

// WorktreeMerge is acp_worktree_merge's request: Ours is the user's text
// when a buffer holds it (else the file on disk is merged and written);
// Theirs the change to carry (nil: the worktree's file; Gone: its
// deletion).
type WorktreeMerge struct {
	Path   string  `msgpack:"path"`
	Ours   *string `msgpack:"ours"`
	Theirs *string `msgpack:"theirs"`
	Gone   bool    `msgpack:"gone"`
}

// rpcWorktreeMerge is acp_worktree_merge(tree, req): one file's change
// (or one hunk of it) carried into the user's tree (worktree.MergeFile).
func (h *Host) rpcWorktreeMerge(t worktree.Tree, r WorktreeMerge) (map[string]any, error) {
	var ours, theirs []byte
	if r.Ours != nil {
		ours = []byte(*r.Ours)
	}
	if r.Theirs != nil {
		theirs = []byte(*r.Theirs)
	}
	res, err := worktree.MergeFile(context.Background(), t, r.Path, ours, theirs, r.Gone)
	if err != nil {
		return nil, err
	}
	out := map[string]any{"delete": res.Delete, "conflicts": res.Conflicts, "wrote": res.Wrote, "unchanged": res.Unchanged}
	if res.Text != nil {
		out["text"] = string(res.Text)
	}
	return out, nil
}

// rpcWorktreeUnmerged is acp_worktree_unmerged(tree, texts): the files
// whose change the user's tree does not hold (texts: loaded buffers'
// texts by relative path).
func (h *Host) rpcWorktreeUnmerged(t worktree.Tree, texts map[string]string) ([]string, error) {
	m := make(map[string][]byte, len(texts))
	for k, v := range texts {
		m[k] = []byte(v)
	}
	out, err := worktree.Unmerged(context.Background(), t, m)
	if out == nil {
		out = []string{}
	}
	return out, err
}

// rpcWorktreeRemove is acp_worktree_remove(tree): the worktree and its
// branch go (the caller made sure nothing is lost, or the user said so).
func (h *Host) rpcWorktreeRemove(t worktree.Tree) error {
	return worktree.Remove(context.Background(), t)
}
