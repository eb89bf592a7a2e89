// Package agents answers which coding-agent harnesses a project uses and
// whether each is ready for sitter: binary found and its version against
// the versions the atlas verified, project detected, sitter hooks or
// plugins installed, hook configs valid. It reads the presence facts of the
// atlas (runtime/transcript.Presences, generated from atlas/transcripts.cue)
// and the descriptors of runtime/adapter; no harness has code of its own.
package agents

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"sitter.dev/sitter/runtime/adapter"
	"sitter.dev/sitter/runtime/hook"
	"sitter.dev/sitter/runtime/internal/jsonpos"
	"sitter.dev/sitter/runtime/plugin"
	"sitter.dev/sitter/runtime/transcript"
)

// Failure and warning codes of a readiness check.
const (
	CodeNoPresence       = "no-presence-facts"     // the atlas says nothing to check
	CodeBinaryMissing    = "binary-not-found"      // none of the binaries is on PATH
	CodeVersionUnknown   = "version-unreadable"    // warning: --version failed or printed no version
	CodeVersionUnverfied = "version-unverified"    // warning: not a version the atlas verified
	CodeNotDetected      = "project-not-detected"  // warning: the project has none of its files
	CodeNotInstalled     = "hooks-not-installed"   // no sitter registration in any hook config
	CodeConfigInvalid    = "config-invalid"        // a JSON hook config does not parse
	CodeNoHooks          = "no-hooks"              // no native event reaches a sitter hook
	CodeNotRegistered    = "plugin-not-registered" // a plugin copy the harness's hook config does not register
	CodeCommandMissing   = "hook-command-missing"  // a registered sitter command runs a path that is not there
)

// Env is what a check looks at; the zero value uses the process's.
type Env struct {
	Dir      string // the project; "" = working directory
	Home     string // "" = the user's home
	DataHome string // sitter's user data root parent; "" = $XDG_DATA_HOME or ~/.local/share
	LookPath func(string) (string, error)
	// Timeout bounds one `<binary> --version`; 0 = 10s.
	Timeout time.Duration
}

func (e Env) norm() Env {
	if e.Dir == "" {
		e.Dir, _ = os.Getwd()
	}
	if e.Home == "" {
		e.Home, _ = os.UserHomeDir()
	}
	if e.DataHome == "" {
		if x := os.Getenv("XDG_DATA_HOME"); filepath.IsAbs(x) {
			e.DataHome = x
		} else {
			e.DataHome = filepath.Join(e.Home, ".local", "share")
		}
	}
	if e.LookPath == nil {
		e.LookPath = exec.LookPath
	}
	if e.Timeout == 0 {
		e.Timeout = 10 * time.Second
	}
	return e
}

// Detection says whether a project uses a harness, and by what.
type Detection struct {
	Harness  string   `json:"harness"`
	Detected bool     `json:"detected"`
	Found    []string `json:"found"` // project-relative dirs and files present
}

// Detect lists, per harness with presence facts, the project dirs and
// files of env.Dir that show the project uses it.
func Detect(env Env) []Detection {
	env = env.norm()
	var out []Detection
	for _, p := range transcript.Presences {
		out = append(out, detect(env, p))
	}
	return out
}

func detect(env Env, p transcript.Presence) Detection {
	d := Detection{Harness: p.Harness, Found: []string{}}
	for _, x := range p.ProjectDirs {
		if st, err := os.Stat(filepath.Join(env.Dir, x)); err == nil && st.IsDir() {
			d.Found = append(d.Found, x+"/")
		}
	}
	for _, x := range p.ProjectFiles {
		if st, err := os.Stat(filepath.Join(env.Dir, x)); err == nil && !st.IsDir() {
			d.Found = append(d.Found, x)
		}
	}
	d.Detected = len(d.Found) > 0
	return d
}

// Problem is one failed or warned check.
type Problem struct {
	Code    string `json:"code"`
	Warning bool   `json:"warning,omitempty"` // does not make the harness unready
	Detail  string `json:"detail"`
	// Fix is the command (or, where no command can, the step) that
	// resolves the problem, with this check's harness and project filled in.
	Fix string `json:"fix"`
}

// Report is the readiness of one harness.
type Report struct {
	Harness         string    `json:"harness"`
	Ready           bool      `json:"ready"`
	Binary          string    `json:"binary,omitempty"` // path found
	Version         string    `json:"version,omitempty"`
	Verified        []string  `json:"verifiedVersions"`
	VersionVerified bool      `json:"versionVerified"`
	Detected        Detection `json:"project"`
	// Hooks lists the hook configs holding a sitter registration;
	// Plugins the sitter plugins installed for the harness (copies under
	// .sitter/plugins, or named in a registration).
	Hooks    []string  `json:"hooks"`
	Plugins  []string  `json:"plugins"`
	Configs  []string  `json:"configsChecked"`
	Problems []Problem `json:"problems"`
	Trace    []string  `json:"resolution"`
}

// The regexps compile on first use: every hook call links this package.
//
// versionRE finds a version in --version output: three numbers and a
// pre-release suffix if any (Amp's 0.0.1790142911-g7618fb).
var versionRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\d+\.\d+\.\d+(?:-[0-9A-Za-z.]+)?`) })

// hookable says whether any native event of the harness reaches a sitter
// hook (its support is not "unsupported").
func hookable(d *adapter.Descriptor) bool {
	for _, e := range d.Events {
		if e.Support != "unsupported" {
			return true
		}
	}
	return false
}

// pluginRE finds the plugin and harness of an installed launcher path.
var pluginRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`plugins/([a-z0-9][a-z0-9-]*)/([a-z0-9-]+)/`)
})

// Doctor checks one harness (resolved by id or alias through r). A
// harness is ready when its binary is found, its hook configs are valid
// and a sitter registration or plugin is installed for it.
func Doctor(ctx context.Context, r *adapter.Registry, name string, env Env) (*Report, error) {
	d, trace, err := r.Resolve(name)
	if err != nil {
		return &Report{Harness: name, Trace: trace, Problems: []Problem{}}, err
	}
	userDir := env.Dir // as the user typed it, for the fix commands
	if userDir == "" {
		userDir = "."
	}
	env = env.norm()
	rep := &Report{Harness: d.ID, Verified: nonNil(d.Verified), Trace: trace, Hooks: []string{}, Plugins: []string{}, Configs: []string{}, Problems: []Problem{}}
	add := func(code string, warn bool, detail, fix string) {
		rep.Problems = append(rep.Problems, Problem{Code: code, Warning: warn, Detail: detail, Fix: fix})
	}
	install := func() string { return InstallFix(d) }
	p, ok := transcript.LookupPresence(d.ID)
	if !ok {
		add(CodeNoPresence, false, "the atlas has no presence facts for "+d.ID,
			"add a presence block (binaries, versionArgs, projectDirs, hookConfigs) to atlas/harnesses/"+d.ID+".cue, then make generate && make build")
		return rep, nil
	}
	// Binary and version.
	for _, b := range p.Binaries {
		if path, err := env.LookPath(b); err == nil {
			rep.Binary = path
			rep.Trace = append(rep.Trace, "binary "+b+": "+path)
			break
		}
		rep.Trace = append(rep.Trace, "binary "+b+": not on PATH")
	}
	if rep.Binary == "" {
		add(CodeBinaryMissing, false, "none of "+strings.Join(p.Binaries, ", ")+" is on PATH", install())
	} else {
		c, cancel := context.WithTimeout(ctx, env.Timeout)
		cmd := exec.CommandContext(c, rep.Binary, p.VersionArgs...)
		cmd.Dir = env.Dir
		out, runErr := cmd.CombinedOutput()
		cancel()
		rep.Version = versionRE().FindString(string(out))
		// A --version that fails or prints no version is named with how:
		// its exit status and first output line (a broken install says
		// what to run), not only that no version came.
		said := hook.FirstLine(out)
		switch {
		case rep.Version == "":
			detail := rep.Binary + " " + strings.Join(p.VersionArgs, " ")
			switch {
			case runErr != nil:
				detail += " failed (" + runErr.Error() + ")"
				if said != "" {
					detail += ": " + said
				}
			case said != "":
				detail += " printed no version: " + said
			default:
				detail += " printed nothing"
			}
			add(CodeVersionUnknown, true, detail, install())
		case len(d.Verified) == 0:
			add(CodeVersionUnverfied, true, "the atlas verified no version of "+d.DisplayName+" on its real CLI: its facts come from "+d.DisplayName+"'s package or docs", "")
		case !contains(d.Verified, rep.Version):
			add(CodeVersionUnverfied, true, "version "+rep.Version+" is not one the atlas verified ("+strings.Join(d.Verified, ", ")+")", install())
		default:
			rep.VersionVerified = true
		}
	}
	// Project.
	rep.Detected = detect(env, *p)
	// A harness that keeps nothing in a project (its hooks and settings in
	// the user's folder) has nothing to detect there.
	if markers := len(p.ProjectDirs) + len(p.ProjectFiles); !rep.Detected.Detected && markers > 0 {
		// Running a harness need not write any of its project files (Amp
		// reads AGENTS.md, never writes it): the fix makes the first
		// project folder, else the first project file, empty.
		var fix string
		if len(p.ProjectDirs) > 0 {
			fix = "mkdir -p " + shellQuote(filepath.Join(userDir, p.ProjectDirs[0]))
		} else {
			fix = "touch " + shellQuote(filepath.Join(userDir, p.ProjectFiles[0]))
		}
		// A name can be a folder or a file (Cline's .clinerules): once.
		var names []string
		for _, n := range append(append([]string{}, p.ProjectDirs...), p.ProjectFiles...) {
			if !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
		add(CodeNotDetected, true, "the project has none of "+strings.Join(names, ", "), fix)
	}
	// Hook configs: valid, and holding a sitter registration?
	plugins := map[string]bool{}
	for _, pat := range p.HookConfigs {
		full := filepath.Join(env.Dir, pat)
		if rest, ok := strings.CutPrefix(pat, "~/"); ok {
			full = filepath.Join(env.Home, rest)
		}
		ms, _ := filepath.Glob(full)
		for _, f := range ms {
			b, err := os.ReadFile(f)
			if err != nil {
				continue
			}
			rep.Configs = append(rep.Configs, f)
			if strings.HasSuffix(f, ".json") && len(bytes.TrimSpace(b)) > 0 {
				if e := jsonpos.Syntax(f, b); e != nil {
					add(CodeConfigInvalid, false, e.Error()+": the harness ignores the file until it parses", "python3 -m json.tool "+shellQuote(f))
				}
			}
			if bytes.Contains(b, []byte("sitter-hook")) || bytes.Contains(b, []byte("sitter hook")) || bytes.Contains(b, []byte(".sitter/plugins/")) {
				rep.Hooks = append(rep.Hooks, f)
				for _, m := range pluginRE().FindAllSubmatch(b, -1) {
					if string(m[2]) == d.ID {
						plugins[string(m[1])] = true
					}
				}
			}
		}
	}
	// Plugin copies sitter plugin install made and the sitter commands
	// registered, project and user scope, read where and as the installer
	// writes them (the atlas's install target and hook shape).
	copies, regs := plugin.Installed(d, plugin.Options{Dir: env.Dir, Home: env.Home, DataHome: env.DataHome})
	for _, c := range copies {
		plugins[c.Plugin] = true
		rep.Trace = append(rep.Trace, "plugin copy "+c.Dir)
		if !c.Registered {
			add(CodeNotRegistered, false, c.Dir+" is installed, but "+c.Target+" does not register it: "+d.DisplayName+" runs none of its hooks",
				reinstall(r, d, c.Plugin, c.Scope, userDir))
		}
	}
	missing := map[string]bool{}
	for _, g := range regs {
		if !slices.ContainsFunc(rep.Hooks, func(h string) bool { return samePath(h, g.Target) }) {
			rep.Hooks = append(rep.Hooks, g.Target)
		}
		if g.Plugin != "" {
			plugins[g.Plugin] = true
		}
		if g.Runs == "" || missing[g.Runs] {
			continue
		}
		if _, err := os.Stat(g.Runs); err == nil {
			continue
		}
		missing[g.Runs] = true
		fix := "point the command in " + g.Target + " at sitter as it is installed now, or remove it"
		if g.Plugin != "" {
			fix = reinstall(r, d, g.Plugin, g.Scope, userDir) + " (or sitter plugin uninstall " + g.Plugin + " --harness " + d.ID + scopeFlag(g.Scope, userDir) + " to drop the registration)"
		}
		add(CodeCommandMissing, false, g.Target+" runs "+g.Runs+", which is not there: every "+d.DisplayName+" hook call of it fails", fix)
	}
	for k := range plugins {
		rep.Plugins = append(rep.Plugins, k)
	}
	sort.Strings(rep.Plugins)
	switch {
	case !hookable(d):
		// Nothing to install: say why no sitter hook can run.
		why := "no event of the atlas reaches a hook"
		if len(d.Events) > 0 && d.Events[0].Note != "" {
			why = d.Events[0].Note
		}
		add(CodeNoHooks, false, d.DisplayName+" runs no sitter hook: "+why,
			"none in sitter today; `sitter agents list` shows the harnesses whose hooks sitter drives")
	case len(rep.Hooks) > 0 || len(rep.Plugins) > 0:
	case d.Packaging.Format == "":
		// No bundle to install: the hooks are registered by hand.
		where := "the harness's hook config"
		if len(p.HookConfigs) > 0 {
			where = p.HookConfigs[0]
		}
		add(CodeNotInstalled, false, "no sitter registration in "+strings.Join(p.HookConfigs, ", ")+"; sitter has no plugin bundle for "+d.DisplayName,
			"register `sitter hook "+d.ID+" <event> --handler <command>` in "+where+" for each event your plugin handles (the README's \"Use it as a hook\")")
	default:
		add(CodeNotInstalled, false, "no sitter registration in "+strings.Join(p.HookConfigs, ", ")+" and no plugin copy; the fix installs sitter's guard plugin (your own installs the same way, by name or bundle folder)",
			reinstall(r, d, "guard", "project", userDir))
	}
	rep.Ready = true
	for _, pr := range rep.Problems {
		if !pr.Warning {
			rep.Ready = false
		}
	}
	return rep, nil
}

// reinstall is the command that installs plugin name for harness d in
// scope (again) when sitter finds its bundle by name from the working
// directory, where the fix is run. Else the fix says so, where it looked
// and what works instead: from a checkout or an install, or with the
// bundle folder named.
func reinstall(r *adapter.Registry, d *adapter.Descriptor, name, scope, dir string) string {
	cmd := func(what string) string {
		return "sitter plugin install " + what + " --harness " + d.ID + scopeFlag(scope, dir)
	}
	_, err := plugin.FindBundle(name, d, r)
	if err == nil {
		return cmd(name)
	}
	return "from here " + err.Error() + ": run `" + cmd(name) + "` in a sitter checkout or with sitter installed with its bundles (make install, a release archive), or name the bundle folder: `" +
		cmd("FOLDER/"+name+"/"+d.ID) + "`, FOLDER a checkout's artifacts or an install's share/sitter/artifacts"
}

// scopeFlag is the scope part of a plugin command: the project folder, or
// the user scope.
func scopeFlag(scope, dir string) string {
	if scope == "user" {
		return " --scope user"
	}
	return " --dir " + shellQuote(dir)
}

// InstallFix is the command that puts a verified version of harness d on
// PATH, where the atlas knows its package: the package at the newest
// verified version, or the specs the atlas gives when that version is not
// one of the package's own.
func InstallFix(d *adapter.Descriptor) string {
	if d.Package.Source != "npm" || d.Package.Name == "" {
		return "install " + d.DisplayName + " (see " + d.ID + "'s vendor docs) so its binary is on PATH"
	}
	specs := d.Package.NpmInstall
	if len(specs) == 0 {
		pkg := d.Package.Name
		if v := newest(d.Verified); v != "" {
			pkg += "@" + v
		}
		specs = []string{pkg}
	}
	words := make([]string, len(specs))
	for i, s := range specs {
		words[i] = shellQuote(s)
	}
	return "npm install -g " + strings.Join(words, " ")
}

// newest is the highest of dotted numeric versions ("" for none).
func newest(vs []string) string {
	best := ""
	for _, v := range vs {
		if best == "" || versionLess(best, v) {
			best = v
		}
	}
	return best
}

func versionLess(a, b string) bool {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(as) && i < len(bs); i++ {
		x, errx := strconv.Atoi(as[i])
		y, erry := strconv.Atoi(bs[i])
		if errx != nil || erry != nil {
			if as[i] != bs[i] {
				return as[i] < bs[i]
			}
			continue
		}
		if x != y {
			return x < y
		}
	}
	return len(as) < len(bs)
}

// shellQuote quotes s for a POSIX shell when it needs it.
// samePath says whether a and b name one file: the hook configs are
// found relative to --dir as typed, the installer's targets absolute with
// symlinks resolved.
func samePath(a, b string) bool {
	return canonical(a) == canonical(b)
}

func canonical(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	if real, err := filepath.EvalSymlinks(p); err == nil {
		return real
	}
	return filepath.Clean(p)
}

func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@%+=:,./_-") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
