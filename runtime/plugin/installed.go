package plugin

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"

	"sitter.dev/sitter/runtime/adapter"
)

// What is installed for a harness, as the harness will see it: read from
// the places and in the shapes Install writes (the atlas's target and the
// bundle layout's hook shape), so that a check of an install agrees with
// the installer on every harness, with no harness's layout written here.

// Copy is a plugin copy sitter plugin install made for a harness.
type Copy struct {
	Plugin string `json:"plugin"`
	Scope  string `json:"scope"`
	Dir    string `json:"dir"`
	// Target is what the harness reads the registration from (a hooks
	// config, a hooks folder, a module file; for a folder target the copy
	// itself); Registered says whether it registers this copy.
	Target     string `json:"target"`
	Registered bool   `json:"registered"`
}

// Registration is one command of a harness's install target that runs
// sitter: a plugin copy's launcher, `sitter hook …`, or, for a module
// target, the copy's entry module that sitter's module file loads.
type Registration struct {
	Scope   string `json:"scope"`
	Target  string `json:"target"` // the file holding it
	Command string `json:"command"`
	// Runs is the absolute path of what it runs; "" when that is a name
	// looked up on PATH or a path the harness expands ($VAR).
	Runs string `json:"runs,omitempty"`
	// Plugin is the plugin of the installed copy Runs is in ("" when it
	// is no copy's: a hook registered by hand).
	Plugin string `json:"plugin,omitempty"`
}

// Installed lists, in the project (o.Dir) and user (o.Home, o.DataHome)
// scopes, the plugin copies sitter installed for harness d and the sitter
// commands registered in d's install targets. A harness without an
// install target has neither; a target that cannot be read (JSON that
// does not parse) holds no registration here.
func Installed(d *adapter.Descriptor, o Options) ([]Copy, []Registration) {
	var copies []Copy
	var regs []Registration
	t := d.Packaging.Target
	f := formatOf(d)
	for _, scope := range []string{"project", "user"} {
		o.Scope = scope
		p, rel, err := scopePlace(o, d)
		if err != nil || filepath.IsAbs(rel) || strings.HasPrefix(filepath.Clean(rel), "..") {
			continue
		}
		target := func(plugin string) string {
			return filepath.Join(p.base, filepath.FromSlash(strings.ReplaceAll(rel, "{plugin}", plugin)))
		}
		// What sitter's own copies run, by plugin: the launcher, or
		// the entry module a module file loads.
		runs := func(copyDir string) string {
			if t.Kind == "module" {
				return filepath.Join(copyDir, filepath.FromSlash(t.Entry))
			}
			return filepath.Join(copyDir, filepath.FromSlash(Launcher))
		}
		var sc []Copy
		if t.Kind == "folder" {
			ms, _ := filepath.Glob(target("*"))
			for _, m := range ms {
				if b, err := OpenBundle(m); err == nil {
					sc = append(sc, Copy{Plugin: b.Marker.Plugin, Scope: scope, Dir: m, Target: m, Registered: true})
				}
			}
			copies = append(copies, sc...)
			continue
		}
		ms, _ := filepath.Glob(filepath.Join(p.root, "plugins", "*", d.ID))
		for _, m := range ms {
			if fi, err := os.Stat(m); err == nil && fi.IsDir() {
				name := filepath.Base(filepath.Dir(m))
				sc = append(sc, Copy{Plugin: name, Scope: scope, Dir: m, Target: target(name)})
			}
		}
		var sr []Registration
		add := func(file, cmd, exe string) {
			r := Registration{Scope: scope, Target: file, Command: cmd, Runs: exe}
			if exe != "" && !filepath.IsAbs(exe) {
				r.Runs = filepath.Join(p.base, exe)
			}
			sr = append(sr, r)
		}
		switch t.Kind {
		case "hooks-config":
			files, _ := filepath.Glob(target("*"))
			for _, file := range files {
				_, root, _, err := readConfig(file)
				if err != nil || root == nil {
					continue
				}
				h, _ := root.get("hooks")
				hooks, ok := h.(*object)
				if !ok {
					continue
				}
				for _, m := range hooks.members {
					items, _ := m.Val.([]any)
					eachCommand(items, f.shape, f.commandKey, func(_ *object, cmd string) {
						if exe, ok := sitterCommand(cmd); ok {
							add(file, cmd, exe)
						}
					})
				}
			}
		case "hooks-folder":
			dirs, _ := filepath.Glob(target("*"))
			for _, dir := range dirs {
				entries, _ := os.ReadDir(dir)
				for _, e := range entries {
					if !e.Type().IsRegular() || strings.HasSuffix(e.Name(), BackupSuffix) {
						continue
					}
					file := filepath.Join(dir, e.Name())
					data, err := os.ReadFile(file)
					if err != nil {
						continue
					}
					for _, line := range strings.Split(string(data), "\n") {
						line = strings.TrimSpace(line)
						if strings.HasPrefix(line, "#") {
							continue
						}
						line = strings.TrimPrefix(line, "exec ")
						if exe, ok := sitterCommand(line); ok {
							add(file, line, exe)
						}
					}
				}
			}
		case "module":
			files, _ := filepath.Glob(target("*"))
			for _, file := range files {
				data, err := os.ReadFile(file)
				if err != nil || !strings.HasPrefix(string(data), moduleHeader) {
					continue
				}
				// The module file re-exports the copy's entry:
				// export … from "<entry>";
				for _, line := range strings.Split(string(data), "\n") {
					_, lit, ok := strings.Cut(line, " from ")
					var entry string
					if !ok || json.Unmarshal([]byte(strings.TrimSuffix(strings.TrimSpace(lit), ";")), &entry) != nil {
						continue
					}
					add(file, strings.TrimSpace(line), filepath.FromSlash(entry))
					break
				}
			}
		}
		// A registration runs a copy of this scope when what it runs is
		// in root/plugins/<plugin>/<harness>/, whether the copy is still
		// there or not.
		sep := string(filepath.Separator)
		under := filepath.Join(p.root, "plugins") + sep
		for i := range sr {
			if rest, ok := strings.CutPrefix(sr[i].Runs, under); ok {
				if name, tail, _ := strings.Cut(rest, sep); strings.HasPrefix(tail, d.ID+sep) {
					sr[i].Plugin = name
				}
			}
			for j := range sc {
				if sr[i].Runs == runs(sc[j].Dir) {
					sc[j].Registered = true
				}
			}
		}
		copies = append(copies, sc...)
		regs = append(regs, sr...)
	}
	return copies, regs
}

// sitterCommand says whether a hook command runs sitter (a plugin copy's
// launcher, or sitter's hook verb), and the path of the executable when
// the command names one: "" for a name looked up on PATH, or a path the
// shell expands ($VAR, ~, a pattern).
func sitterCommand(cmd string) (exe string, ok bool) {
	words, expands := shellFields(cmd, 2)
	if len(words) == 0 {
		return "", false
	}
	base := filepath.Base(words[0])
	switch {
	case base == filepath.Base(Launcher):
	case base == "sitter" && len(words) > 1 && words[1] == "hook":
	default:
		return "", false
	}
	if !strings.Contains(words[0], "/") || expands[0] {
		return "", true
	}
	return words[0], true
}

// shellFields splits the first n words of a POSIX shell command line,
// quotes removed ('…' literally, "…" with \ escaping \ " $ ` and a
// newline, \ outside quotes escaping the next character), and says of
// each whether the shell would expand something in it: a $ or ` outside
// single quotes, or outside any quotes a leading ~ or a * ? [.
func shellFields(s string, n int) (words []string, expands []bool) {
	var w strings.Builder
	in, exp := false, false // a word has begun (an empty quoted word counts)
	end := func() {
		if in {
			words, expands = append(words, w.String()), append(expands, exp)
		}
		w.Reset()
		in, exp = false, false
	}
	for i := 0; i < len(s) && len(words) < n; i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t':
			end()
		case c == '\n' || c == ';' || c == '&' || c == '|':
			end()
			return words, expands
		case c == '\'':
			in = true
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return words, expands // unterminated: no word
			}
			w.WriteString(s[i+1 : i+1+j])
			i += j + 1
		case c == '"':
			in = true
			for i++; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\\\"$`\n", s[i+1]) >= 0 {
					i++
				} else if s[i] == '$' || s[i] == '`' {
					exp = true
				}
				w.WriteByte(s[i])
			}
			if i >= len(s) {
				return words, expands
			}
		case c == '\\' && i+1 < len(s):
			in = true
			i++
			w.WriteByte(s[i])
		default:
			if strings.IndexByte("$`*?[", c) >= 0 || c == '~' && !in {
				exp = true
			}
			in = true
			w.WriteByte(c)
		}
	}
	if len(words) < n {
		end()
	}
	return words, expands
}
