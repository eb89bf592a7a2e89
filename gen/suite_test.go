package gen_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// innerEnv marks the test suite run inside the copy, so that it does not
// start another copy.
const innerEnv = "SITTER_SUITE_IN_COPY"

// TestAddedHarnessPassesTheSuite is the contributor's path: a copy of the
// repository gets more harness files, each on its own
// (testdata/synth/synth.cue, with a plugin format of its own, a deny and
// a stop that continues; testdata/synth/synth-dir.cue, whose format is a
// folder of one hook script per event), `make generate` runs, the bundles
// take the declared layouts, and the whole test suite passes with no edit
// anywhere else. Generation may
// touch only atlas/, generated/, artifacts/ and docs/fidelity.md.
func TestAddedHarnessPassesTheSuite(t *testing.T) {
	if testing.Short() || os.Getenv(innerEnv) != "" {
		t.Skip("copies the repository and runs the whole suite in it")
	}
	src := repoRoot(t)
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git to list the repository's files")
	}
	out, err := exec.Command("git", "-C", src, "ls-files", "-z").Output()
	if err != nil {
		t.Skipf("not a git checkout: %v", err)
	}
	tmp := t.TempDir()
	for _, f := range strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00") {
		fi, err := os.Lstat(filepath.Join(src, f))
		if err != nil || !fi.Mode().IsRegular() {
			continue // deleted in the work tree, or a link
		}
		copyFile(t, filepath.Join(src, f), filepath.Join(tmp, f))
		if err := os.Chmod(filepath.Join(tmp, f), fi.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
	before := digests(t, tmp)
	synths, _ := filepath.Glob("testdata/synth/*.cue")
	if len(synths) == 0 {
		t.Fatal("no synthetic harness in testdata/synth")
	}
	for _, f := range synths {
		synth, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(tmp, "atlas", "harnesses", filepath.Base(f)), synth, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run(t, tmp, "go", "run", "./gen/cmd/sitter-gen")
	for path, sum := range digests(t, tmp) {
		if before[path] == sum || allowed(path) {
			continue
		}
		t.Errorf("generating for a new harness changed %s, outside atlas/, generated/, artifacts/ and docs/fidelity.md", path)
	}
	checkSynthLayout(t, filepath.Join(tmp, "artifacts"))
	checkSynthScripts(t, filepath.Join(tmp, "artifacts"))
	checkSynthVerify(t, tmp)
	run(t, tmp, "go", "vet", "./...")
	run(t, tmp, "go", "test", "-count=1", "./...")
}

func allowed(path string) bool {
	for _, p := range []string{"atlas/", "generated/", "artifacts/", "docs/fidelity.md"} {
		if strings.HasPrefix(path, p) {
			return true
		}
	}
	return false
}

// digests maps every file under root to its content hash.
func digests(t *testing.T, root string) map[string][32]byte {
	t.Helper()
	m := map[string][32]byte{}
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		m[filepath.ToSlash(rel)] = sha256.Sum256(b)
		return nil
	})
	return m
}

func run(t *testing.T, dir string, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), innerEnv+"=1")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s in the copy: %v\n%s", name, strings.Join(args, " "), err, tail(out.String(), 8000))
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// checkSynthLayout reads the bundles written in synth's own layout
// (synth-pack, declared in testdata/synth/synth.cue): the manifest has the
// declared fields, the hook config parses in the declared shape and runs
// the launcher with synth's root variable, skills and commands land where
// the layout puts them, without the $ARGUMENTS synth has no placeholder for.
func checkSynthLayout(t *testing.T, artifacts string) {
	t.Helper()
	readJSON := func(rel string) map[string]any {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(artifacts, rel))
		if err != nil {
			t.Errorf("synth layout: %v", err)
			return nil
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Errorf("synth layout: %s: %v", rel, err)
		}
		return m
	}
	m := readJSON("guard/synth/synth-pack.json")
	want := map[string]any{"id": "guard", "hooks": "hooks/synth-hooks.json"}
	for k, v := range want {
		if m != nil && m[k] != v {
			t.Errorf("synth-pack.json %s = %v, want %v (the layout's manifest template)", k, m[k], v)
		}
	}
	if _, ok := m["abilities"]; ok {
		t.Errorf("synth-pack.json names abilities, but guard has no skills (keyWhen)")
	}
	for _, k := range []string{"release", "summary", "by"} {
		if s, _ := m[k].(string); m != nil && s == "" {
			t.Errorf("synth-pack.json has no %s (the plugin's metadata)", k)
		}
	}
	hooks := readJSON("guard/synth/hooks/synth-hooks.json")
	if hooks != nil {
		if hooks["format"] != float64(2) {
			t.Errorf("synth-hooks.json format = %v, want 2 (the layout's hook document)", hooks["format"])
		}
		list, _ := hooks["hooks"].(map[string]any)["BeforeTool"].([]any)
		entry, _ := func() (map[string]any, bool) {
			if len(list) != 1 {
				return nil, false
			}
			e, ok := list[0].(map[string]any)
			return e, ok
		}()
		if entry == nil || entry["run"] != `"${SYNTH_PLUGIN_DIR}/bin/sitter-hook" synth BeforeTool` || entry["tools"] != "^(sh)$" {
			t.Errorf("synth-hooks.json BeforeTool = %v, want one versioned-list entry running the launcher with ${SYNTH_PLUGIN_DIR}, tools ^(sh)$", list)
		}
		if _, ok := entry["seconds"].(float64); !ok {
			t.Errorf("synth-hooks.json BeforeTool entry has no numeric seconds: %v", entry)
		}
	}
	for _, rel := range []string{"babysitter/synth/abilities/babysit/SKILL.md", "babysitter/synth/macros/plan.toml"} {
		if _, err := os.Stat(filepath.Join(artifacts, rel)); err != nil {
			t.Errorf("synth layout: %v", err)
		}
	}
	// synth has no argument placeholder: the command's $ARGUMENTS is dropped.
	if toml, err := os.ReadFile(filepath.Join(artifacts, "babysitter/synth/macros/call.toml")); err != nil || !strings.Contains(string(toml), "\nTask:\n") || strings.Contains(string(toml), "$ARGUMENTS") {
		t.Errorf("synth layout: macros/call.toml = %q, %v; want Task: without $ARGUMENTS", toml, err)
	}
	if md, err := os.ReadFile(filepath.Join(artifacts, "babysitter/synth/SYNTH.md")); err != nil || !strings.Contains(string(md), "# babysitter for synth\n- babysit: ") {
		t.Errorf("synth layout: SYNTH.md = %q, %v; want the title and one line per skill", md, err)
	}
}

// checkSynthScripts reads the bundle written in synth-dir's layout
// (synth-dir-hooks, testdata/synth/synth-dir.cue): one executable script
// per registered event, named from the event, running the launcher with
// synth-dir's root variable.
func checkSynthScripts(t *testing.T, artifacts string) {
	t.Helper()
	p := filepath.Join(artifacts, "guard", "synth-dir", "hooks", "BeforeTool.sh")
	fi, err := os.Stat(p)
	if err != nil {
		t.Errorf("synth-dir layout: %v", err)
		return
	}
	if fi.Mode().Perm()&0o111 != 0o111 {
		t.Errorf("synth-dir layout: %s mode %04o, want executable", p, fi.Mode().Perm())
	}
	b, _ := os.ReadFile(p)
	for _, want := range []string{"#!/bin/sh\n", "# guard: BeforeTool (timeout 15s)\n", "\nexec \"${0%/*}/../bin/sitter-hook\" synth-dir BeforeTool\n"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("synth-dir layout: %s has no %q:\n%s", p, want, b)
		}
	}
}

// checkSynthVerify runs the copy's `sitter plugin verify` on synth bundles:
// what synth-pack declares about its manifest (paths: abilities names a
// folder of skills; requires: by is "sitter") is checked from the CUE
// alone. Each broken copy must report exactly the declared problem.
func checkSynthVerify(t *testing.T, repo string) {
	t.Helper()
	host := filepath.Join(t.TempDir(), "sitter-host")
	run(t, repo, "go", "build", "-o", host, "./runtime/cmd/sitter-host")
	bundle := filepath.Join(repo, "artifacts", "babysitter", "synth")
	if out, err := verifyOut(host, bundle); err != nil {
		t.Fatalf("plugin verify of the generated synth bundle: %v\n%s", err, out)
	}
	// synth-dir's scripts install into its hooks folder, calling the
	// installed copy's launcher.
	project := t.TempDir()
	if out, err := exec.Command(host, "plugin", "install", filepath.Join(repo, "artifacts", "guard", "synth-dir"), "--harness", "synth-dir", "--dir", project).CombinedOutput(); err != nil {
		t.Errorf("plugin install of the synth-dir guard bundle: %v\n%s", err, out)
	} else {
		b, err := os.ReadFile(filepath.Join(project, ".synth-dir", "hooks", "BeforeTool.sh"))
		want := "\nexec '" + filepath.Join(project, ".sitter", "plugins", "guard", "synth-dir", "bin", "sitter-hook") + "' synth-dir BeforeTool\n"
		if err != nil || !strings.Contains(string(b), want) {
			t.Errorf("installed synth-dir script (%v):\n%s\nwant the line %q", err, b, want)
		}
	}
	for _, c := range []struct {
		name    string
		breakIt func(dir string) error
		want    string
	}{
		{"abilities names a missing folder", func(dir string) error {
			return editFile(filepath.Join(dir, "synth-pack.json"), `"abilities": "abilities"`, `"abilities": "./powers"`)
		}, `synth-pack.json: abilities: "./powers" does not exist`},
		{"abilities names a file", func(dir string) error {
			return editFile(filepath.Join(dir, "synth-pack.json"), `"abilities": "abilities"`, `"abilities": "SYNTH.md"`)
		}, `synth-pack.json: abilities: "SYNTH.md" is not a folder`},
		{"a skill of abilities without SKILL.md", func(dir string) error {
			if err := os.MkdirAll(filepath.Join(dir, "powers", "fly"), 0o755); err != nil {
				return err
			}
			return editFile(filepath.Join(dir, "synth-pack.json"), `"abilities": "abilities"`, `"abilities": "powers"`)
		}, `powers/fly/SKILL.md: missing`},
		{"by is not sitter", func(dir string) error {
			return editFile(filepath.Join(dir, "synth-pack.json"), `"by": "sitter"`, `"by": "someone"`)
		}, `synth-pack.json: by: want "sitter" (synth loads packs by sitter's maintainers only)`},
	} {
		dir := filepath.Join(t.TempDir(), "synth")
		run(t, repo, "cp", "-R", bundle, dir)
		if err := c.breakIt(dir); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		out, err := verifyOut(host, dir)
		want := dir + "/" + c.want
		if err == nil || strings.Count(out, "\n") != 1 || !strings.HasPrefix(out, want) {
			t.Errorf("%s: plugin verify said (%v)\n%s\nwant one problem: %s", c.name, err, out, want)
		}
	}
}

func verifyOut(host, bundle string) (string, error) {
	cmd := exec.Command(host, "plugin", "verify", bundle)
	var out bytes.Buffer
	cmd.Stdout = &out
	err := cmd.Run()
	return out.String(), err
}

func editFile(path, old, new string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if !bytes.Contains(b, []byte(old)) {
		return fmt.Errorf("%s has no %s", path, old)
	}
	return os.WriteFile(path, bytes.Replace(b, []byte(old), []byte(new), 1), 0o644)
}
