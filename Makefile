# sitter: see README.md. Every target is safe to run on a fresh clone.
GO      ?= go
BIN     ?= bin
FUZZTIME ?= 20s
# Release flags: a stripped binary starts measurably faster on every hook call;
# sitter version says the version and commit they name.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)
COMMIT  ?= $(shell git rev-parse HEAD 2>/dev/null)
VERSIONPKG = sitter.dev/sitter/runtime/internal/hookcli
RELEASE ?= -trimpath -ldflags="-s -w -X $(VERSIONPKG).Version=$(VERSION) -X $(VERSIONPKG).Commit=$(COMMIT)"
# make install: binaries into $(PREFIX)/bin, the plugin bundles `sitter plugin
# install <name>` finds by name into $(PREFIX)/share/sitter/artifacts.
PREFIX  ?= /usr/local
DESTDIR ?=
# make dist: one archive per platform, same layout as an install prefix.
DIST    ?= dist
PLATFORMS ?= linux/amd64 linux/arm64 darwin/amd64 darwin/arm64

.PHONY: all generate check cue-lint fmt-check build install dist dist-check test fuzz bench vet clean e2e chaos golden

all: generate build

## generate: regenerate generated/ (and later artifacts/) from atlas/ (the main job),
## then the CLI reference docs/cli from the command tree
generate:
	@[ -x $(BIN)/sitter-gen ] || echo "sitter-gen: building the generator (a first build compiles CUE: about a minute)"
	@$(GO) build -o $(BIN)/sitter-gen ./gen/cmd/sitter-gen
	@$(BIN)/sitter-gen
	$(GO) run ./runtime/cmd/sitter-clidoc docs/cli

## check: load and check the atlas without writing anything
check:
	@[ -x $(BIN)/sitter-gen ] || echo "sitter-gen: building the generator (a first build compiles CUE: about a minute)"
	@$(GO) build -o $(BIN)/sitter-gen ./gen/cmd/sitter-gen
	@$(BIN)/sitter-gen -check

## cue-lint: the atlas is cue fmt-clean and cue vet-clean (cue is the go.mod tool, not a download)
cue-lint:
	@$(GO) tool cue fmt --check ./atlas/... || { echo "cue-lint: the files above are not as cue fmt writes them: $(GO) tool cue fmt ./atlas/... rewrites them" >&2; exit 1; }
	cd atlas && $(GO) tool cue vet -c ./harnesses

## build: build sitter (the hook path), sitter-host (the other verbs, which sitter execs),
## sitter-proxy (the LLM gateway) and the generator into bin/
build:
	$(GO) build $(RELEASE) -o $(BIN)/sitter ./runtime/cmd/sitter
	$(GO) build $(RELEASE) -o $(BIN)/sitter-host ./runtime/cmd/sitter-host
	$(GO) build $(RELEASE) -o $(BIN)/sitter-proxy ./runtime/cmd/sitter-proxy
	$(GO) build -o $(BIN)/sitter-gen ./gen/cmd/sitter-gen

## install: sitter, sitter-host, sitter-proxy into $(PREFIX)/bin and the plugin
## bundles into $(PREFIX)/share/sitter/artifacts (make install PREFIX=$$HOME/.local)
install:
	@case "$(PREFIX)" in "~"*) echo "make install: PREFIX=$(PREFIX) was not expanded by your shell (zsh and sh leave ~ after =, make does not expand it): write PREFIX=\$$HOME/.local" >&2; exit 2;; esac
	@mkdir -p "$(DESTDIR)$(PREFIX)/bin" "$(DESTDIR)$(PREFIX)/share/sitter"
	$(GO) build $(RELEASE) -o "$(DESTDIR)$(PREFIX)/bin/sitter" ./runtime/cmd/sitter
	$(GO) build $(RELEASE) -o "$(DESTDIR)$(PREFIX)/bin/sitter-host" ./runtime/cmd/sitter-host
	$(GO) build $(RELEASE) -o "$(DESTDIR)$(PREFIX)/bin/sitter-proxy" ./runtime/cmd/sitter-proxy
	rm -rf "$(DESTDIR)$(PREFIX)/share/sitter/artifacts"
	cp -R artifacts "$(DESTDIR)$(PREFIX)/share/sitter/artifacts"
	@echo "installed sitter $(VERSION) into $(DESTDIR)$(PREFIX) (bin/, share/sitter/artifacts/)"
	@[ -n "$(DESTDIR)" ] || case ":$$PATH:" in \
	  *":$(PREFIX)/bin:"*) first=$$(command -v sitter); [ "$$first" = "$(PREFIX)/bin/sitter" ] || echo "make install: $$first comes before $(PREFIX)/bin/sitter on your PATH: put $(PREFIX)/bin first";; \
	  *) echo "make install: $(PREFIX)/bin is not on your PATH; to run sitter by name: export PATH=\"$(PREFIX)/bin:\$$PATH\" (and in your shell's profile)";; esac

## dist: release archives dist/sitter-VERSION-OS-ARCH.tar.gz for PLATFORMS and
## dist/SHA256SUMS, built offline from the module cache (run go mod download once)
dist:
	@VERSION="$(VERSION)" COMMIT="$(COMMIT)" DIST="$(DIST)" PLATFORMS="$(PLATFORMS)" GO="$(GO)" sh .ci/dist

## dist-check: build this platform's archive, unpack it in a temp dir and run
## sitter version --json, the README's hook example and plugin install from it
dist-check:
	@GO="$(GO)" sh .ci/dist-check

vet:
	$(GO) vet ./...

## fmt-check: every Go file is gofmt-clean (gofmt of the Go that builds it; writes nothing)
fmt-check:
	@out=$$("$$($(GO) env GOROOT)/bin/gofmt" -l .) && [ -z "$$out" ] || { echo "gofmt -l: not formatted (run gofmt -w on them):"; echo "$$out"; exit 1; } >&2

## test: vet, gofmt, cue fmt/vet of the atlas, every unit/golden/testscript test, and a short fuzz run
test: vet fmt-check cue-lint
	$(GO) test -timeout 20m ./...
	$(MAKE) dist-check
	$(MAKE) fuzz

## golden: rewrite every golden (txtar sections, golden files, testscript
## scripts) from what the code produces now; review the diff before committing
golden:
	$(GO) test -short $$($(GO) list -f '{{.ImportPath}} {{join .TestImports " "}} {{join .XTestImports " "}}' ./... | grep sitter.dev/sitter/internal/golden | cut -d' ' -f1) -update

## fuzz: fuzz every generated Normalize for FUZZTIME
fuzz:
	$(GO) test ./gen/golden -run '^$$' -fuzz '^FuzzNormalize$$' -fuzztime $(FUZZTIME)

## bench: median wall time of a hook call against a Go start-up floor; the babysitter stop
## check on a 1,000-event run against the same floor; run cycle vs the npm SDK; make generate's
## growth per harness; the observe dashboard with 1,000 runs of 100 events; journal appends
## and a run cycle on the local store vs NATS JetStream at 1k and 10k events
bench:
	$(GO) run ./runtime/cmd/hookbench
	$(GO) run ./runtime/cmd/stopbench
	$(GO) run ./runtime/cmd/runbench
	$(GO) run ./runtime/cmd/proxybench
	$(GO) run ./runtime/cmd/transcriptbench
	$(GO) run ./runtime/cmd/genbench
	$(GO) run ./runtime/cmd/observebench
	$(GO) run ./runtime/cmd/storebench
	$(GO) test ./runtime/hook -run '^$$' -bench . -benchmem

## chaos: the fault suite (every TestChaos* test: concurrency, floods, signals,
## cut streams, symlinks, the redaction corpus, the run store against a real
## nats-server process killed mid-run) with a table of cases tried/passed
chaos:
	$(GO) run ./runtime/cmd/chaos

## e2e: the real harness CLIs (pinned, installed on demand into ~/.cache/sitter-e2e)
## run headless against a fake LLM on 127.0.0.1; writes docs/fidelity.md
e2e: generate
	cd e2e && SITTER_E2E_FIDELITY=1 $(GO) test -tags e2e -count=1 -v -timeout 60m .

clean:
	rm -rf $(BIN) $(DIST)
