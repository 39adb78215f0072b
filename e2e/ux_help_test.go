package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Bug: `:help acp` failed in the demo (E149): doc/tags was never generated.
// scripts/helptags (run by `make` and scripts/demo) makes it; every |link|
// in doc/acp.txt then resolves.
func TestHelpTagsGenerated(t *testing.T) {
	dir := t.TempDir()
	doc := filepath.Join(dir, "doc")
	if err := os.MkdirAll(doc, 0o755); err != nil {
		t.Fatal(err)
	}
	txt, err := os.ReadFile(filepath.Join(root, "doc", "acp.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(doc, "acp.txt"), txt, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(root, "scripts", "helptags"), doc)
	cmd.Env = append(os.Environ(), "NVIM_BIN="+nvimBin(t))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("scripts/helptags: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(doc, "tags")); err != nil {
		t.Fatalf("no tags generated: %v", err)
	}
	e := startEditor(t)
	var broken []string
	e.Lua(`vim.opt.rtp:prepend(...)
		local bad = {}
		local ok, err = pcall(vim.cmd.help, "acp")
		if not ok or not vim.api.nvim_buf_get_name(0):find("acp.txt", 1, true) then
			return { ":help acp: " .. tostring(err) }
		end
		-- A link jumps to its exact tag: every tags file of the runtime
		-- path read once (a :help per link took over 30 s under load).
		local tags = {}
		for _, file in ipairs(vim.api.nvim_get_runtime_file("doc/tags", true)) do
			for _, line in ipairs(vim.fn.readfile(file)) do
				tags[line:match("^[^\t]+") or ""] = true
			end
		end
		local seen = {}
		for _, line in ipairs(vim.fn.readfile(select(2, ...))) do
			for tag in line:gmatch("|([^|%s]+)|") do
				if not seen[tag] then
					seen[tag] = true
					if not tags[tag] then table.insert(bad, tag) end
				end
			end
		end
		return bad`, &broken, dir, filepath.Join(doc, "acp.txt"))
	if len(broken) > 0 {
		t.Fatalf("help links that do not resolve: %s", strings.Join(broken, ", "))
	}
}
