# nvim-acp: `make` builds the host binary the Lua side starts.
GO ?= go
BIN := bin/nvim-acp

.PHONY: all build tags test bench demo clean
all: build tags

build:
	$(GO) build -o $(BIN) ./cmd/nvim-acp

# doc/tags for :help acp (skipped with a note when there is no nvim on PATH).
tags:
	./scripts/helptags

test:
	./scripts/test

# nvim-acp against the reference client and script(1) in the same run, on
# both Neovims, then the package benchmarks (scripts/bench says how to pick).
bench: build
	./scripts/bench

# scripts/demo builds the host itself, saying so.
demo:
	./scripts/demo

clean:
	rm -rf bin
