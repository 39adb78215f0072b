module github.com/nvim-acp/nvim-acp

go 1.23

require (
	github.com/coder/acp-go-sdk v0.13.0
	github.com/creack/pty v1.1.24
	github.com/fsnotify/fsnotify v1.9.0
	github.com/google/uuid v1.6.0
	github.com/neovim/go-client v1.2.1
	golang.org/x/sys v0.13.0
)

require github.com/coder/websocket v1.8.15 // indirect
