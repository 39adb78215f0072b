# nvim-acp: `make` builds the host binary the Lua side starts.
GO ?= go
BIN := bin/nvim-acp

.PHONY: all build test bench demo clean
all: build

build:
	$(GO) build -o $(BIN) ./cmd/nvim-acp

test:
	./scripts/test

bench: build
	NVIM_BIN=$$(scripts/install-nvim --ensure) $(GO) test -run '^$$' -bench . -benchtime 3x ./...

demo: build
	./scripts/demo

clean:
	rm -rf bin
