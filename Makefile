# nvim-acp: `make` builds the host binary the Lua side starts.
GO ?= go
BIN := bin/nvim-acp

.PHONY: all build test bench demo clean
all: build

build:
	$(GO) build -o $(BIN) ./cmd/nvim-acp

test:
	./scripts/test

# nvim-acp against the reference client and script(1) in the same run, on
# both Neovims, then the package benchmarks (scripts/bench says how to pick).
bench: build
	./scripts/bench

demo: build
	./scripts/demo

clean:
	rm -rf bin
