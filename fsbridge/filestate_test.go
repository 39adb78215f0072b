package fsbridge

import (
	"slices"
	"testing"
)

// TestLinesOfIsSplitText checks that linesOf, which skips the split when
// the lines are known, gives what splitText gives, for every line end.
func TestLinesOfIsSplitText(t *testing.T) {
	texts := []string{"", "\n", "a", "a\n", "a\nb", "a\nb\n", "\n\n", "a\r\nb\r\n", "a\rb\r", "x\r\ny\n"}
	for _, sep := range []string{"\n", "\r\n", "\r"} {
		for _, text := range texts {
			lines, eol := splitText(text, sep)
			if len(lines) == 0 {
				lines, eol = []string{""}, false // as applyWrite gives an empty target
			}
			joined := joinText(lines, eol, sep)
			gotLines, gotEOL := linesOf(text, sep, joined, lines, eol)
			wantLines, wantEOL := splitText(text, sep)
			if !slices.Equal(gotLines, wantLines) || gotEOL != wantEOL {
				t.Errorf("linesOf(%q, %q) = %q, %v; splitText gives %q, %v", text, sep, gotLines, gotEOL, wantLines, wantEOL)
			}
		}
	}
	// Lines that are not the text's are never returned.
	if got, _ := linesOf("a\nb\n", "\n", "a\nc\n", []string{"a", "c"}, true); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("linesOf with other lines = %q, want the text's", got)
	}
}
