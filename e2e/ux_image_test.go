package e2e

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A 1x1 PNG.
var tinyPNG = []byte{0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0, 0, 13, 'I', 'H', 'D', 'R', 0, 0, 0, 1, 0, 0, 0, 1,
	8, 6, 0, 0, 0, 0x1f, 0x15, 0xc4, 0x89, 0, 0, 0, 13, 'I', 'D', 'A', 'T', 0x78, 0x9c, 0x63, 0, 1, 0, 0, 5, 0, 1,
	0x0d, 0x0a, 0x2d, 0xb4, 0, 0, 0, 0, 'I', 'E', 'N', 'D', 0xae, 0x42, 0x60, 0x82}

// :AcpAdd image.png and an image path pasted into the prompt send image
// blocks to an agent that takes images (promptCapabilities.image); others
// get a link and a word about it.
func TestImagesGoAsImageBlocks(t *testing.T) {
	parallel(t)
	for _, takesImages := range []bool{true, false} {
		t.Run(map[bool]string{true: "agent takes images", false: "agent does not"}[takesImages], func(t *testing.T) {
			e := startEditor(t)
			shot := filepath.Join(e.Dir, "shot.png")
			dropped := filepath.Join(e.Dir, "my screenshots", "drop it.png")
			for _, p := range []string{shot, dropped} {
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, tinyPNG, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			e.SetupFake(M{
				"initialize": M{"agentCapabilities": M{"promptCapabilities": M{"image": takesImages}}},
				"turns":      []any{[]any{text("seen")}},
			}, nil)
			e.Chat("fake")
			e.WaitState("ready")
			e.Lua(`vim.cmd("AcpAdd shot.png")`, nil)
			// As a terminal pastes a dropped file: spaces escaped.
			e.Send("what is in " + strings.ReplaceAll(dropped, " ", `\ `) + "?")
			e.WaitState("ready")
			blocks := promptBlocks(e)
			var images, links int
			for _, b := range blocks[1:] {
				switch b["type"] {
				case "image":
					images++
					if b["mimeType"] != "image/png" || b["data"] != base64.StdEncoding.EncodeToString(tinyPNG) {
						t.Fatalf("image block %v", b)
					}
				case "resource_link":
					links++
				}
			}
			if takesImages && (images != 2 || links != 0) {
				t.Fatalf("%d image blocks and %d links, want 2 images: %v", images, links, blocks)
			}
			if !takesImages {
				if images != 0 || links != 1 {
					t.Fatalf("%d image blocks and %d links, want the added file as a link: %v", images, links, blocks)
				}
				if !e.Told("does not take images") {
					t.Fatalf("no word that the agent does not take images: %s", e.Messages())
				}
			}
			if takesImages && !strings.Contains(e.ChatText(), "shot.png (image)") {
				t.Fatalf("the prompt's context does not list the image:\n%s", e.ChatText())
			}
		})
	}
}
