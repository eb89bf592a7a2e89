package gen_test

import (
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"sitter.dev/sitter/gen"
)

// TestBundleReadmesNameWhatShips generates every bundle of the shipped
// plugins and of the kitchen-sink plugin built for every harness, and
// checks that each skill and command a bundle's README.md lists is in that
// bundle: a layout that carries no skills or commands lists none.
func TestBundleReadmesNameWhatShips(t *testing.T) {
	root := withAtlas(t)
	copyTree(t, filepath.Join(repoRoot(t), "plugins-src"), filepath.Join(root, "plugins-src"))
	ar, err := txtar.ParseFile("testdata/bundles/kitchen-sink.txtar")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range ar.Files {
		if !strings.HasPrefix(f.Name, "plugins-src/") {
			continue
		}
		data := f.Data
		if strings.HasSuffix(f.Name, "/plugin.yaml") {
			// Every harness, not the golden's one per layout.
			data = regexp.MustCompile(`(?m)^harnesses: .*\n`).ReplaceAll(data, nil)
		}
		p := filepath.Join(root, f.Name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		mode := os.FileMode(0o644)
		if strings.HasSuffix(f.Name, ".sh") {
			mode = 0o755
		}
		if err := os.WriteFile(p, data, mode); err != nil {
			t.Fatal(err)
		}
	}
	_, files, err := gen.Generate(root)
	if err != nil {
		t.Fatal(err)
	}
	item := regexp.MustCompile("^- `/?([^`]+)`")
	readmes := 0
	for _, rf := range files {
		if path.Base(rf.Path) != "README.md" || strings.Count(rf.Path, "/") < 3 || !strings.HasPrefix(rf.Path, "artifacts/") {
			continue
		}
		dir := path.Dir(rf.Path) + "/"
		plugin := strings.Split(rf.Path, "/")[1] // artifacts/<plugin>/…
		var shipped []string
		for _, f := range files {
			if rest, ok := strings.CutPrefix(f.Path, dir); ok {
				shipped = append(shipped, rest)
			}
		}
		has := func(section, name string) bool {
			for _, s := range shipped {
				parts := strings.Split(s, "/")
				switch section {
				case "Skills": // a skill folder: <dir>/<name>/SKILL.md
					if len(parts) >= 2 && parts[len(parts)-2] == name && parts[len(parts)-1] == "SKILL.md" {
						return true
					}
				case "Commands": // a command file: <dir>/<name>.<ext>, listed as the layout's commandForm types it (/plugin:name in Claude Code)
					name := strings.TrimPrefix(name, plugin+":")
					if base := parts[len(parts)-1]; strings.TrimSuffix(base, path.Ext(base)) == name && len(parts) > 1 {
						return true
					}
				}
			}
			return false
		}
		readmes++
		section := ""
		for line := range strings.Lines(string(rf.Bytes)) {
			if h, ok := strings.CutPrefix(line, "## "); ok {
				section = strings.TrimSpace(h)
				continue
			}
			m := item.FindStringSubmatch(line)
			if m == nil || section != "Skills" && section != "Commands" {
				continue
			}
			if !has(section, m[1]) {
				t.Errorf("%s lists %s %q, which the bundle does not carry", rf.Path, strings.ToLower(strings.TrimSuffix(section, "s")), m[1])
			}
		}
	}
	if readmes == 0 {
		t.Fatal("no bundle README.md generated")
	}
}
