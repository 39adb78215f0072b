# nvim-acp: `make` builds the host binary the Lua side starts.
GO ?= go
BIN := bin/nvim-acp

.PHONY: all build tags test bench demo release clean
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

# The host for linux and macOS on amd64 and arm64 (static, CGO_ENABLED=0)
# in dist/ with SHA256SUMS: what a release publishes and build.lua fetches.
# VERSION=0.2.0 names it (default: the tag HEAD is at).
release:
	./scripts/release $(VERSION)

clean:
	rm -rf bin dist
