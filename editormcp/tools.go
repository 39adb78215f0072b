package editormcp

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nvim-acp/nvim-acp/internal/jsontext"
)

// Bounds of what a tool returns.
const (
	// DefaultReadLines is read_file's limit when none is given (agents' own
	// read tools use the same).
	DefaultReadLines = 2000
	// MaxReadBytes bounds read_file's text (a 10,000-line source file is
	// about 600 KB).
	MaxReadBytes = 1 << 20
	// DefaultOutputBytes is the tail of a command's output run_command
	// returns by default; MaxOutputBytes the most it returns.
	DefaultOutputBytes = 32 << 10
	MaxOutputBytes     = 1 << 20
	// DefaultTimeout and MaxTimeout bound a command's run, in seconds.
	DefaultTimeout = 120
	MaxTimeout     = 1800
	// DefaultItems and MaxItems bound the lists tools return.
	DefaultItems = 200
	MaxItems     = 2000
	// MaxHoverBytes bounds hover's text.
	MaxHoverBytes = 16 << 10
)

// Options configure a session's server.
type Options struct {
	Root    string // the session's workspace: relative paths start there
	Version string // the host's version, as the server's
	// Escape, when set, returns a text as the inside of a JSON string,
	// from the host's copies where it can (see textResultsWith).
	Escape func(string) []byte
}

// Tool names, as the agent lists them (an agent may prefix them, e.g.
// claude's mcp__nvim__read_file).
const (
	ToolReadFile    = "read_file"
	ToolWriteFile   = "write_file"
	ToolEditFile    = "edit_file"
	ToolRunCommand  = "run_command"
	ToolDiagnostics = "diagnostics"
	ToolSymbols     = "symbols"
	ToolDefinition  = "definition"
	ToolReferences  = "references"
	ToolHover       = "hover"
	ToolBuffers     = "open_buffers"
	ToolSelection   = "selection"
	ToolQuickfix    = "quickfix"
)

// instructions tell the agent when to use the server's tools.
const instructions = `This server is the user's Neovim editor. Files open in it may have unsaved edits that the disk does not have yet: read and edit files through read_file, edit_file and write_file to see and keep them. run_command runs in a terminal the user watches. diagnostics, symbols, definition, references and hover answer from the language servers the editor runs; open_buffers, selection and quickfix show what the user is looking at.`

// NewServer returns the MCP server of one session's editor.
func NewServer(ed Editor, o Options) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "nvim", Title: "Neovim", Version: o.Version},
		&mcp.ServerOptions{Instructions: instructions, Capabilities: &mcp.ServerCapabilities{}})
	s.AddReceivingMiddleware(textResultsWith(o.Escape), utf8Args)
	t := &tools{ed: ed, root: o.Root}
	mcp.AddTool(s, &mcp.Tool{Name: ToolReadFile, Title: "Read a file (live buffer)", Annotations: readOnly,
		Description: "Read a text file as the user sees it in their editor: the open buffer's current text, unsaved edits included (the disk may be older). Prefer this to reading the disk. " +
			fmt.Sprintf("Returns up to `limit` lines (default %d) from the 1-based `line` (default 1), each ending in a newline, without line numbers. Relative paths start at the workspace.", DefaultReadLines),
	}, t.readFile)
	mcp.AddTool(s, &mcp.Tool{Name: ToolWriteFile, Title: "Write a file (through the editor)", Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(true)},
		Description: "Create a file or replace its whole content, through the user's editor: an open buffer is updated in place (the user's unsaved edits made since you read it are kept), the user sees the change, and writes outside the workspace ask the user first. Prefer edit_file to change part of a file."}, t.writeFile)
	mcp.AddTool(s, &mcp.Tool{Name: ToolEditFile, Title: "Edit a file (exact string replacement)", Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(true)},
		Description: "Replace an exact string in a file, through the user's editor (unsaved edits in open buffers included and kept). `old_string` must match the current text exactly (whitespace included, no line numbers) and be unique in the file unless `replace_all` is true; read the file with read_file first. An empty `old_string` creates the file with `new_string` when it does not exist."}, t.editFile)
	mcp.AddTool(s, &mcp.Tool{Name: ToolRunCommand, Title: "Run a command (terminal in the editor)", Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(true), OpenWorldHint: ptr(true)},
		Description: "Run a shell command line in a terminal the user watches live in their editor, and wait for it to end. The user may be asked to allow it. Returns the exit status and the tail of the output (escape sequences stripped). " +
			fmt.Sprintf("`cwd` defaults to the workspace; `timeout_seconds` (default %d) stops a command that runs longer. Not for interactive programs.", DefaultTimeout)}, t.runCommand)
	mcp.AddTool(s, &mcp.Tool{Name: ToolDiagnostics, Title: "Diagnostics (errors, warnings)", Annotations: readOnly,
		Description: "The errors, warnings and hints the editor shows right now (from its language servers and linters, for the buffers as they are, unsaved edits included), for one file or the whole workspace. " +
			"Use after editing to check your change. `severity` keeps that level and worse: error, warning, info or hint (default: all)."}, t.diagnostics)
	mcp.AddTool(s, &mcp.Tool{Name: ToolSymbols, Title: "Symbols (language server)", Annotations: readOnly,
		Description: "Symbols from the editor's language server: with `path`, the outline of that file (functions, types, methods with their lines); with `query` (and no path), the workspace's symbols whose names match it. Faster and more precise than searching text."}, t.symbols)
	mcp.AddTool(s, &mcp.Tool{Name: ToolDefinition, Title: "Go to definition (language server)", Annotations: readOnly,
		Description: "Where the symbol at a position is defined, from the editor's language server. Give `path` and the 1-based `line`, and the `symbol` name on that line (or its 1-based `column`)."}, t.definition)
	mcp.AddTool(s, &mcp.Tool{Name: ToolReferences, Title: "Find references (language server)", Annotations: readOnly,
		Description: "Every reference to the symbol at a position, from the editor's language server, each with its line's text. Give `path`, the 1-based `line`, and the `symbol` name on that line (or its 1-based `column`)."}, t.references)
	mcp.AddTool(s, &mcp.Tool{Name: ToolHover, Title: "Hover: type and docs (language server)", Annotations: readOnly,
		Description: "The type signature and documentation of the symbol at a position, from the editor's language server. Give `path`, the 1-based `line`, and the `symbol` name on that line (or its 1-based `column`)."}, t.hover)
	mcp.AddTool(s, &mcp.Tool{Name: ToolBuffers, Title: "Open buffers", Annotations: readOnly,
		Description: "The files the user has open in the editor: path, unsaved changes, the cursor and the lines visible in a window, and which one the user is in. Use it to learn what the user is working on."}, t.buffers)
	mcp.AddTool(s, &mcp.Tool{Name: ToolSelection, Title: "The user's selection", Annotations: readOnly,
		Description: "The text the user last selected in the editor (visual mode), with its file and lines; the cursor line when nothing was selected. Use it when the user says \"this\", \"here\" or \"the selection\"."}, t.selection)
	mcp.AddTool(s, &mcp.Tool{Name: ToolQuickfix, Title: "Quickfix list", Annotations: readOnly,
		Description: "The editor's quickfix list (compiler errors, grep or test results the user collected), each entry with its file, line and text."}, t.quickfix)
	return s
}

var readOnly = &mcp.ToolAnnotations{ReadOnlyHint: true}

// utf8Args refuses a tool call whose arguments' text is not valid UTF-8
// (raw bytes, or a \u escape of half a surrogate pair), before they are
// decoded: encoding/json would put U+FFFD in their place, and the file
// written would silently not be what the agent sent. As fs/write_text_file
// refuses it (host/dispatch.go).
func utf8Args(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if p, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok && method == "tools/call" {
			if at := jsontext.InvalidText(p.Arguments); at >= 0 {
				r := text(fmt.Sprintf("%s: the arguments' text is not valid UTF-8 (byte %d of them): nothing was read or written; "+
					"the tools take UTF-8 text only (JSON strings), so send the text as UTF-8", p.Name, at))
				r.IsError = true
				return r, nil
			}
		}
		return next(ctx, method, req)
	}
}

func ptr[T any](v T) *T { return &v }

type tools struct {
	ed   Editor
	root string
}

// abs makes path absolute (relative to the workspace) and clean.
func (t *tools) abs(path string) (string, error) {
	if strings.TrimSpace(path) == "" {
		return "", errors.New("path is required")
	}
	path = strings.TrimPrefix(path, "file://")
	if !filepath.IsAbs(path) {
		path = filepath.Join(t.root, path)
	}
	return filepath.Clean(path), nil
}

// text is a tool result of one text block.
func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// ReadFileArgs are read_file's arguments.
type ReadFileArgs struct {
	Path  string `json:"path" jsonschema:"the file, absolute or relative to the workspace"`
	Line  int    `json:"line,omitempty" jsonschema:"first line to read, 1-based (default 1)"`
	Limit int    `json:"limit,omitempty" jsonschema:"how many lines to read (default 2000)"`
}

func (t *tools) readFile(ctx context.Context, _ *mcp.CallToolRequest, in ReadFileArgs) (*mcp.CallToolResult, any, error) {
	path, err := t.abs(in.Path)
	if err != nil {
		return nil, nil, err
	}
	if in.Line < 0 || in.Limit < 0 {
		return nil, nil, errors.New("line and limit must not be negative")
	}
	limit := in.Limit
	if limit == 0 {
		limit = DefaultReadLines
	}
	// One line more than asked: whether the file goes on.
	s, err := t.ed.ReadFile(ctx, path, in.Line, limit+1)
	if err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", path, err)
	}
	first := max(in.Line, 1)
	out, n, more := cutLines(s, limit, MaxReadBytes)
	if more {
		out += fmt.Sprintf("[... %s goes on after line %d: read_file with line=%d for more]\n", path, first+n-1, first+n)
	}
	return text(out), nil, nil
}

// cutLines returns s's first limit lines, at most maxBytes of them (whole
// lines, or a part of the first), how many lines that is, and whether s has
// more.
func cutLines(s string, limit, maxBytes int) (string, int, bool) {
	off, n := 0, 0
	for n < limit && off < len(s) {
		i := strings.IndexByte(s[off:], '\n')
		end := len(s)
		if i >= 0 {
			end = off + i + 1
		}
		if end > maxBytes {
			if n == 0 { // one huge line: its start
				cut := maxBytes
				for cut > 0 && !utf8.RuneStart(s[cut]) {
					cut--
				}
				return s[:cut] + "\n", 1, true
			}
			return s[:off], n, true
		}
		off = end
		n++
	}
	return s[:off], n, off < len(s)
}

// WriteFileArgs are write_file's arguments.
type WriteFileArgs struct {
	Path    string `json:"path" jsonschema:"the file, absolute or relative to the workspace"`
	Content string `json:"content" jsonschema:"the file's whole new content"`
}

func (t *tools) writeFile(ctx context.Context, _ *mcp.CallToolRequest, in WriteFileArgs) (*mcp.CallToolResult, any, error) {
	path, err := t.abs(in.Path)
	if err != nil {
		return nil, nil, err
	}
	if err := t.ed.WriteFile(ctx, Write{Path: path, Content: in.Content, Tool: ToolWriteFile}); err != nil {
		return nil, nil, fmt.Errorf("write %s: %w", path, err)
	}
	return text(fmt.Sprintf("wrote %s (%d lines)", path, lineCount(in.Content))), nil, nil
}

// EditFileArgs are edit_file's arguments.
type EditFileArgs struct {
	Path       string `json:"path" jsonschema:"the file, absolute or relative to the workspace"`
	OldString  string `json:"old_string" jsonschema:"the exact text to replace"`
	NewString  string `json:"new_string" jsonschema:"the text to put in its place"`
	ReplaceAll bool   `json:"replace_all,omitempty" jsonschema:"replace every occurrence (default: old_string must be unique)"`
}

func (t *tools) editFile(ctx context.Context, _ *mcp.CallToolRequest, in EditFileArgs) (*mcp.CallToolResult, any, error) {
	path, err := t.abs(in.Path)
	if err != nil {
		return nil, nil, err
	}
	if in.OldString == in.NewString {
		return nil, nil, errors.New("old_string and new_string are the same: nothing to change")
	}
	cur, err := t.ed.ReadFile(context.WithValue(ctx, editReadKey{}, true), path, 0, 0)
	var content string
	switch {
	case in.OldString == "" && err != nil:
		// A new file (a missing file is an error to read).
		content = in.NewString
		if werr := t.ed.WriteFile(ctx, Write{Path: path, Content: content, Tool: ToolEditFile}); werr != nil {
			return nil, nil, fmt.Errorf("create %s: %w", path, werr)
		}
		return text(fmt.Sprintf("created %s (%d lines)", path, lineCount(content))), nil, nil
	case err != nil:
		return nil, nil, fmt.Errorf("read %s: %w", path, err)
	case in.OldString == "" && cur != "":
		return nil, nil, fmt.Errorf("%s is not empty: give the old_string to replace", path)
	case in.OldString == "":
		content = in.NewString
	default:
		n := strings.Count(cur, in.OldString)
		switch {
		case n == 0:
			return nil, nil, fmt.Errorf("old_string was not found in %s: it must match the current text exactly, whitespace included (read_file shows it, with the user's unsaved edits)", path)
		case n > 1 && !in.ReplaceAll:
			return nil, nil, fmt.Errorf("old_string occurs %d times in %s: add surrounding lines to make it unique, or set replace_all", n, path)
		}
		if in.ReplaceAll {
			content = strings.ReplaceAll(cur, in.OldString, in.NewString)
		} else {
			content = strings.Replace(cur, in.OldString, in.NewString, 1)
		}
	}
	if err := t.ed.WriteFile(ctx, Write{Path: path, Content: content, Before: &cur, Tool: ToolEditFile}); err != nil {
		return nil, nil, fmt.Errorf("edit %s: %w", path, err)
	}
	return text(fmt.Sprintf("edited %s", path)), nil, nil
}

// lineCount is the number of lines of s.
func lineCount(s string) int {
	n := strings.Count(s, "\n")
	if s != "" && !strings.HasSuffix(s, "\n") {
		n++
	}
	return n
}
