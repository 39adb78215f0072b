// Package editormcp serves the editor to an ACP session's agent as an MCP
// server (github.com/modelcontextprotocol/go-sdk): live buffers, terminals,
// diagnostics and language servers as MCP tools, for agents that read and
// write the disk themselves.
//
// The tools reach the editor only through Editor, which the host implements
// with the same code paths as ACP's fs/read_text_file, fs/write_text_file
// and terminal/create (consent, workspace policy, merges with unsaved
// edits, live views), and LuaQueries for what Neovim knows (diagnostics,
// LSP, buffers). A Hub carries the servers to the agents: a private unix
// socket reached by the `nvim-acp mcp` child (stdio servers), loopback HTTP,
// or the agent's own ACP connection (MCP-over-ACP); each session's server
// is reachable with that session's token only.
package editormcp

import "context"

// Editor is one session's editor, as the tools see it.
type Editor interface {
	// ReadFile returns limit lines of path (absolute) from the 1-based
	// line (0: from the start; limit 0: to the end), as
	// fs/read_text_file serves them: a loaded buffer's text, unsaved edits
	// included. Reads outside the workspace ask the user. With a ctx that
	// IsEditRead, the text is read for edit_file and never shown to the
	// agent: it is not what the agent has seen of the file.
	ReadFile(ctx context.Context, path string, line, limit int) (string, error)
	// WriteFile writes w.Content to w.Path as fs/write_text_file does
	// (consent outside the workspace, merged with the user's unsaved
	// edits, reviewed when the user wants it), shown to the user as a tool
	// block.
	WriteFile(ctx context.Context, w Write) error
	// RunCommand runs a command line in a terminal as terminal/create does
	// (the user's consent, a live view in the chat) and waits for its end.
	RunCommand(ctx context.Context, r RunRequest) (RunResult, error)
	// CheckRead asks the user, as ReadFile does, when path (absolute) is
	// outside the workspace or leads out of it, without reading it: for
	// the queries that read a file by other means (a language server, the
	// selection). An error when the agent may not read it.
	CheckRead(ctx context.Context, path string) error
	// CheckLoad is CheckRead for the queries that make Neovim load path
	// into a buffer (a language server's): unless a buffer of it is loaded
	// already, path must also be a regular file within ReadFile's size
	// bound, as ReadFile checks before it opens anything (a FIFO would
	// block Neovim in open(2) for good; a huge file would be loaded whole).
	// An error the agent is shown when not.
	CheckLoad(ctx context.Context, path string) error
	// InWorkspace reports, for each path (absolute), whether it is in the
	// workspace, asking nothing.
	InWorkspace(ctx context.Context, paths []string) []bool
	Queries
}

// Queries are what the editor knows: diagnostics, language servers,
// buffers, the selection, the quickfix list.
type Queries interface {
	Diagnostics(ctx context.Context, q DiagnosticsQuery) (DiagnosticFiles, error)
	Symbols(ctx context.Context, q SymbolsQuery) ([]Symbol, error)
	Definition(ctx context.Context, p Position) ([]Location, error)
	References(ctx context.Context, p Position) ([]Location, error)
	Hover(ctx context.Context, p Position) (string, error)
	Buffers(ctx context.Context) ([]Buffer, error)
	Selection(ctx context.Context) (Selection, error)
	Quickfix(ctx context.Context) ([]QuickfixItem, error)
}

// Write is a write of a whole file.
type Write struct {
	Path    string // absolute
	Content string
	// Before is the text the content was made from (edit_file's read, which
	// the agent never saw), for the diff the user is shown and as the base
	// the content is merged against; nil when not known (write_file: the
	// content is the agent's whole idea of the file).
	Before *string
	Tool   string // the tool that writes ("write_file", "edit_file")
}

// RunRequest is a command to run.
type RunRequest struct {
	Command string // a shell command line
	Cwd     string // absolute; "" is the workspace
	// Timeout ends the command (SIGTERM, then SIGKILL) when it runs longer.
	TimeoutSeconds int
	// OutputBytes bounds the output returned (its tail is kept).
	OutputBytes int
}

// RunResult is how a command ended and what it printed.
type RunResult struct {
	Output    string // plain text, its tail when Truncated
	Truncated bool
	ExitCode  *int   // nil when a signal ended it
	Signal    string // e.g. "SIGKILL"
	TimedOut  bool
}

// DiagnosticsQuery selects diagnostics: one file's or the workspace's, at
// least as severe as MinSeverity (1 error ... 4 hint; 0: all).
type DiagnosticsQuery struct {
	Path        string `json:"path,omitempty"` // absolute; "" is the workspace
	Root        string `json:"root"`           // the workspace
	MinSeverity int    `json:"min_severity,omitempty"`
	Limit       int    `json:"limit"`
}

// DiagnosticFiles are the diagnostics asked, as the tool's text: Neovim
// writes it (lua/acp/mcp/diagnostics.lua), one line per diagnostic,
//
//	path:line:col: severity: message [source code]
//
// the path relative to the workspace when under it, files by path, lines
// by line and column; each file's lines apart, at most the query's limit in
// all.
type DiagnosticFiles struct {
	Files []DiagnosticFile `msgpack:"files"`
	More  bool             `msgpack:"more"` // there are more than the limit
}

// DiagnosticFile is one file's diagnostics.
type DiagnosticFile struct {
	Path  string `msgpack:"path"` // absolute
	Text  string `msgpack:"text"` // its lines, each ending in "\n"
	Count int    `msgpack:"n"`    // how many
}

// SymbolsQuery asks for one file's symbols (Path) or the workspace's
// symbols matching Query.
type SymbolsQuery struct {
	Path  string `json:"path,omitempty"`
	Query string `json:"query,omitempty"`
	Root  string `json:"root"`
	Limit int    `json:"limit"`
}

// Symbol is a symbol a language server knows.
type Symbol struct {
	Name      string `json:"name"`
	Kind      string `json:"kind"`
	Path      string `json:"path"`
	Line      int    `json:"line"` // 1-based
	Col       int    `json:"col"`  // 1-based, characters
	Container string `json:"container,omitempty"`
}

// Position is a place in a file: a line, and a column (1-based, in
// characters) or a symbol on that line (its first occurrence).
type Position struct {
	Path   string `json:"path"`
	Line   int    `json:"line"`
	Column int    `json:"column,omitempty"`
	Symbol string `json:"symbol,omitempty"`
	Root   string `json:"root"`
	Limit  int    `json:"limit"`
}

// Location is a place a language server pointed to, with its line's text.
type Location struct {
	Path string `json:"path"`
	Line int    `json:"line"` // 1-based
	Col  int    `json:"col"`  // 1-based, characters
	Text string `json:"text,omitempty"`
}

// Buffer is one of the user's listed buffers.
type Buffer struct {
	Path     string `json:"path"`
	Modified bool   `json:"modified"`
	Current  bool   `json:"current,omitempty"` // shown in the window the user last edited in
	Line     int    `json:"line,omitempty"`    // the cursor, when shown in a window
	Col      int    `json:"col,omitempty"`
	Top      int    `json:"top,omitempty"` // visible lines, when shown
	Bottom   int    `json:"bottom,omitempty"`
	Lines    int    `json:"lines"`
	Filetype string `json:"filetype,omitempty"`
}

// Selection is the user's last visual selection, or the cursor line when
// there is none.
type Selection struct {
	Path      string `json:"path"`
	StartLine int    `json:"start_line"`
	EndLine   int    `json:"end_line"`
	Text      string `json:"text"`
	Visual    bool   `json:"visual"` // a visual selection, not the cursor line
}

// QuickfixItem is one entry of the quickfix list.
type QuickfixItem struct {
	Path string `json:"path,omitempty"`
	Line int    `json:"line,omitempty"`
	Col  int    `json:"col,omitempty"`
	Type string `json:"type,omitempty"`
	Text string `json:"text"`
}

// editReadKey marks the context of edit_file's own read (see IsEditRead).
type editReadKey struct{}

// IsEditRead reports whether ctx is that of edit_file's read of the file
// it edits: the text is not shown to the agent.
func IsEditRead(ctx context.Context) bool {
	v, _ := ctx.Value(editReadKey{}).(bool)
	return v
}
