package gen_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"cuelang.org/go/cue/format"

	"sitter.dev/sitter/gen"
	"sitter.dev/sitter/gen/write"
)

// acmeExample is the example of docs/adding-a-harness.md, as written
// there: the cue block after its "example:" marker, a harness that only
// exists as one CUE file.
func acmeExample(t *testing.T) []byte {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", "adding-a-harness.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := bytes.Cut(doc, []byte("<!-- example: atlas/harnesses/acme.cue"))
	if ok {
		_, rest, ok = bytes.Cut(rest, []byte("```cue\n"))
	}
	block, _, closed := bytes.Cut(rest, []byte("\n```"))
	if !ok || !closed {
		t.Fatal("docs/adding-a-harness.md: no cue block after the example marker")
	}
	return append(block, '\n')
}

// TestAcmeExampleIsCueFmtClean: a contributor copies the example into
// atlas/harnesses/, and `make test` (cue-lint) wants every atlas file as
// `cue fmt` writes it, so the example must already be written that way.
func TestAcmeExampleIsCueFmtClean(t *testing.T) {
	example := acmeExample(t)
	formatted, err := format.Source(example)
	if err != nil {
		t.Fatalf("docs/adding-a-harness.md example: %v", err)
	}
	if !bytes.Equal(formatted, example) {
		t.Errorf("the example of docs/adding-a-harness.md is not as cue fmt writes it; cue fmt makes it:\n%s", formatted)
	}
}

// TestAddHarnessIsCUEOnly copies the repository, adds one harness file to
// the atlas, regenerates, builds sitter and drives the new harness through
// `sitter hook` — with no Go edits.
func TestAddHarnessIsCUEOnly(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a copy of sitter")
	}
	src := repoRoot(t)
	tmp := t.TempDir()
	for _, p := range []string{"go.mod", "go.sum", "atlas", "runtime", "generated"} {
		copyTree(t, filepath.Join(src, p), filepath.Join(tmp, p))
	}
	if err := os.WriteFile(filepath.Join(tmp, "atlas", "harnesses", "acme.cue"), acmeExample(t), 0o644); err != nil {
		t.Fatal(err)
	}
	_, files, err := gen.Generate(tmp)
	if err != nil {
		t.Fatalf("generate: %v", err)
	}
	if _, err := write.Files(tmp, files, gen.Owned); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(tmp, "sitter")
	build := exec.Command("go", "build", "-o", bin, "./runtime/cmd/sitter")
	build.Dir = tmp
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}

	seen := filepath.Join(tmp, "seen.json")
	payload := `{"event":"beforeTool","session":"s-1","roots":["/work/acme"],"tool":"shell","args":"{\"command\":\"rm -rf /\"}"}`
	// The event name comes from the payload (the "-" argument), the alias resolves.
	cmd := exec.Command(bin, "hook", "acme-cli", "-", "--handler", "cat > "+seen+"; echo '{\"decision\":\"deny\",\"reason\":\"no rm\"}'")
	cmd.Stdin = strings.NewReader(payload)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("sitter hook: %v\nstderr: %s", err, stderr.String())
	}
	if got, want := stdout.String(), `{"verdict":"no","why":"no rm"}`+"\n"; got != want {
		t.Errorf("native answer = %q, want %q (stderr %q)", got, want, stderr.String())
	}
	var ev struct {
		Harness, Phase string
		Session        struct{ ID, Cwd string }
		Tool           struct {
			Kind  string
			Input map[string]any
		}
	}
	b, err := os.ReadFile(seen)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &ev); err != nil {
		t.Fatal(err)
	}
	if ev.Harness != "acme" || ev.Phase != "preToolUse" || ev.Session.ID != "s-1" || ev.Session.Cwd != "/work/acme" ||
		ev.Tool.Kind != "shell" || ev.Tool.Input["command"] != "rm -rf /" {
		t.Errorf("handler saw %s", b)
	}
}

func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		dst := filepath.Join(to, rel)
		if d.IsDir() {
			if d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return os.MkdirAll(dst, 0o755)
		}
		copyFile(t, p, dst)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
