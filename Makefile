# sitter: see README.md. Every target is safe to run on a fresh clone.
GO      ?= go
BIN     ?= bin
FUZZTIME ?= 20s

.PHONY: all generate check build test fuzz bench vet clean

all: generate build

## generate: regenerate generated/ (and later artifacts/) from atlas/ (the main job)
generate:
	$(GO) run ./gen/cmd/sitter-gen

## check: load and check the atlas without writing anything
check:
	$(GO) run ./gen/cmd/sitter-gen -check

## build: build the sitter runtime binary and the generator into bin/
build:
	$(GO) build -o $(BIN)/sitter ./runtime/cmd/sitter
	$(GO) build -o $(BIN)/sitter-proxy ./runtime/cmd/sitter-proxy
	$(GO) build -o $(BIN)/sitter-gen ./gen/cmd/sitter-gen

vet:
	$(GO) vet ./...

## test: vet, every unit/golden/testscript test, and a short fuzz run
test: vet
	$(GO) test ./...
	$(MAKE) fuzz

## fuzz: fuzz every generated Normalize for FUZZTIME
fuzz:
	$(GO) test ./gen/golden -run '^$$' -fuzz '^FuzzNormalize$$' -fuzztime $(FUZZTIME)

## bench: median wall time of a hook call against a Go start-up floor
bench:
	$(GO) run ./runtime/cmd/hookbench
	$(GO) run ./runtime/cmd/proxybench
	$(GO) test ./runtime/hook -run '^$$' -bench . -benchmem

clean:
	rm -rf $(BIN)
