package fsbridge

import (
	"os"
	"strings"
)

// fileState identifies one version of a file on disk well enough to tell our
// own writes from other processes' (size, mtime in ns, inode).
type fileState struct {
	Exists bool
	Size   int64
	MTime  int64
	Ino    uint64
}

func statFile(path string) fileState {
	fi, err := os.Stat(path)
	if err != nil {
		return fileState{}
	}
	return stateOf(fi)
}

func stateOf(fi os.FileInfo) fileState {
	st := fileState{Exists: true, Size: fi.Size(), MTime: fi.ModTime().UnixNano()}
	st.Ino = inode(fi)
	return st
}

// lineEnding is how the lines of b's file end: its 'fileformat' ("dos":
// "\r\n", "mac": "\r", else "\n").
func (b *Buffer) lineEnding() string {
	if b == nil {
		return "\n"
	}
	switch b.FileFormat {
	case "dos":
		return "\r\n"
	case "mac":
		return "\r"
	}
	return "\n"
}

// splitText splits file text into lines the way a buffer whose lines end
// with sep holds them, and reports whether the text ends with a line end.
// With "\r\n" a bare "\n" ends a line too (Neovim writes it back as "\r\n").
func splitText(text, sep string) ([]string, bool) {
	switch sep {
	case "\r\n":
		lines, eol := splitLines(text)
		for i, l := range lines {
			lines[i] = strings.TrimSuffix(l, "\r")
		}
		return lines, eol
	case "\r":
		if text == "" {
			return nil, false
		}
		eol := strings.HasSuffix(text, "\r")
		return strings.Split(strings.TrimSuffix(text, "\r"), "\r"), eol
	}
	return splitLines(text)
}

// linesOf is splitText(text, sep), without splitting again when text is
// known (equal to joined, the text of lines and eol): with "\n" line ends
// those lines are exactly the split's (no line holds a "\n"), except the
// empty text. Other line ends are split again (splitText is not quite the
// inverse of their join). The lines returned must not be changed.
func linesOf(text, sep, joined string, lines []string, eol bool) ([]string, bool) {
	if sep == "\n" && text == joined && len(lines) > 0 && !(len(lines) == 1 && lines[0] == "" && !eol) {
		return lines, eol
	}
	return splitText(text, sep)
}

// spliceText is joinText(lines, eol, sep) for old, the text of oldLines
// and oldEOL (old == joinText(oldLines, oldEOL, sep)): where lines start
// and end as oldLines do, old's bytes are copied whole, and only the lines
// between are joined. A 10,000-line text changed in a few lines is one
// copy, not ten thousand.
func spliceText(old string, oldLines []string, oldEOL bool, lines []string, eol bool, sep string) string {
	n, m := len(lines), len(oldLines)
	p := 0
	for p < n && p < m && lines[p] == oldLines[p] {
		p++
	}
	s := 0
	for s < n-p && s < m-p && lines[n-1-s] == oldLines[m-1-s] {
		s++
	}
	if s == 0 || eol != oldEOL {
		return joinText(lines, eol, sep) // no end of old to keep
	}
	// old is head (each line and sep), middle (the same), tail (the last
	// s lines with sep between, and after them when oldEOL).
	start := 0
	for _, l := range oldLines[:p] {
		start += len(l) + len(sep)
	}
	end := len(old)
	for _, l := range oldLines[m-s:] {
		end -= len(l) + len(sep)
	}
	if !oldEOL {
		end += len(sep)
	}
	mid := lines[p : n-s]
	size := start + len(old) - end
	for _, l := range mid {
		size += len(l) + len(sep)
	}
	var sb strings.Builder
	sb.Grow(size)
	sb.WriteString(old[:start])
	for _, l := range mid {
		sb.WriteString(l)
		sb.WriteString(sep)
	}
	sb.WriteString(old[end:])
	return sb.String()
}

// joinText is the inverse of splitText: the file text of lines.
func joinText(lines []string, eol bool, sep string) string {
	if len(lines) == 0 {
		return ""
	}
	n := len(sep) * (len(lines) - 1)
	if eol {
		n += len(sep)
	}
	for _, l := range lines {
		n += len(l)
	}
	// One allocation: a file's text can be megabytes.
	var sb strings.Builder
	sb.Grow(n)
	for i, l := range lines {
		if i > 0 {
			sb.WriteString(sep)
		}
		sb.WriteString(l)
	}
	if eol {
		sb.WriteString(sep)
	}
	return sb.String()
}
