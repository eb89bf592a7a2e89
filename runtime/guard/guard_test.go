package guard

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"sitter.dev/sitter/runtime/hook"
)

const (
	cwd  = "/home/dev/acme-api"
	home = "/home/dev"
)

// shellEvent is a Claude-style Bash PreToolUse event for command.
func shellEvent(command, cwd string) hook.Event {
	in, _ := json.Marshal(map[string]string{"command": command})
	return hook.Event{
		Version: hook.Version, Harness: "claude-code", NativeEvent: "PreToolUse", Phase: "preToolUse",
		Session: hook.Session{Cwd: cwd},
		Tool:    &hook.Tool{Name: "Bash", Kind: hook.KindShell, Input: in},
	}
}

// rule is the rule a result names: "" for a noop.
func rule(t *testing.T, r hook.Result) string {
	t.Helper()
	switch r.Decision {
	case hook.Noop:
		if r.Reason != "" {
			t.Errorf("noop with reason %q", r.Reason)
		}
		return ""
	case hook.Deny:
		rest, ok := strings.CutPrefix(r.Reason, "guard: ")
		name, detail, ok2 := strings.Cut(rest, ": ")
		if !ok || !ok2 || detail == "" {
			t.Errorf("deny reason %q is not \"guard: <rule>: <detail>\"", r.Reason)
		}
		return name
	}
	t.Errorf("decision %q, want deny or noop", r.Decision)
	return string(r.Decision)
}

const (
	del   = RuleRecursiveDelete
	force = RuleForcePush
	ok    = ""
)

func TestCheckCommands(t *testing.T) {
	tests := []struct {
		cmd  string
		want string // rule, or "" for allowed
		cwd  string // default cwd; "-" for none
	}{
		// recursive-delete: the flags, in every spelling.
		{cmd: "rm -rf /", want: del},
		{cmd: "rm -fr /", want: del},
		{cmd: "rm -Rf /", want: del},
		{cmd: "rm -r -f /", want: del},
		{cmd: "rm -r /", want: del},
		{cmd: "rm --recursive --force /", want: del},
		{cmd: "rm --rec /", want: del},
		{cmd: "rm -rvf /", want: del},
		{cmd: "rm -rf -- /", want: del},
		{cmd: "rm / -rf", want: del},
		{cmd: "rm -f /etc/passwd", want: ok}, // not recursive
		{cmd: "rm -- -rf /x", want: ok},      // "-rf" is a file name here
		// The targets: root, home, outside, the project itself.
		{cmd: "rm -rf /*", want: del},
		{cmd: "rm -rf ~", want: del},
		{cmd: "rm -rf ~/", want: del},
		{cmd: "rm -rf $HOME", want: del},
		{cmd: "rm -rf ${HOME}", want: del},
		{cmd: `rm -rf "$HOME"`, want: del},
		{cmd: `rm -rf "${HOME}/"`, want: del},
		{cmd: "rm -rf ~/Documents", want: del},
		{cmd: "rm -rf ~other", want: del},
		{cmd: "rm -rf ~/acme-api/build", want: ok}, // in the project, through ~
		{cmd: "rm -rf ..", want: del},
		{cmd: "rm -rf ../other-project", want: del},
		{cmd: "rm -rf ./../x", want: del},
		{cmd: "rm -rf build/../../x", want: del},
		{cmd: "rm -rf /tmp/x", want: del},
		{cmd: "rm -rf /tmp/*", want: del},
		{cmd: "rm -rf /home/dev/acme-api-old", want: del}, // a sibling sharing the prefix
		{cmd: "rm -rf /home/dev/acme-api/build", want: ok},
		{cmd: "rm -rf .", want: del},
		{cmd: "rm -rf ./", want: del},
		{cmd: `rm -rf "$PWD"`, want: del},
		{cmd: "rm -rf /home/dev/acme-api", want: del},
		{cmd: "rm -rf *", want: del},
		{cmd: "rm -rf .*", want: del},
		{cmd: "rm -rf build/..", want: del},
		{cmd: `rm -rf "/my dir"`, want: del},
		{cmd: `rm -rf "my dir"`, want: ok},
		{cmd: `rm -rf '/'`, want: del},
		{cmd: `rm -rf /\ x`, want: del},
		{cmd: "rm -rf build dist /opt", want: del}, // one bad operand is enough
		{cmd: "rm -rf ''", want: ok},
		// Safe deletes.
		{cmd: "rm -rf build", want: ok},
		{cmd: "rm -rf ./node_modules", want: ok},
		{cmd: "rm -rf build/*", want: ok},
		{cmd: "rm -rf $PWD/build", want: ok},
		{cmd: "rm file.txt", want: ok},
		{cmd: "rm -f *.log", want: ok},
		{cmd: "rmdir /tmp/x", want: ok},
		// Unknown values.
		{cmd: "rm -rf $DIR", want: ok},
		{cmd: `rm -rf "$BUILD_DIR"/*`, want: ok},
		{cmd: "rm -rf $(mktemp -d)", want: ok},
		{cmd: "rm -rf build/$X", want: ok},
		{cmd: "rm -rf /tmp/$X", want: del}, // the known part is already outside
		{cmd: "rm -rf ../$X", want: del},
		{cmd: "rm -rf $HOME/$X", want: del},
		{cmd: "X=/; rm -rf $X", want: del}, // a variable the script set
		{cmd: "X=build; rm -rf $X", want: ok},
		{cmd: "export T=/opt && rm -rf $T", want: del},
		// Not commands: arguments and comments.
		{cmd: "echo rm -rf /", want: ok},
		{cmd: "echo 'rm -rf /'", want: ok},
		{cmd: "grep -r foo /etc", want: ok},
		{cmd: "ls -R /", want: ok},
		{cmd: "git rm -r --cached /x", want: ok},
		{cmd: "ls # rm -rf /", want: ok},
		{cmd: "cat <<EOF\nrm -rf /\nEOF", want: ok},
		{cmd: "echo \"$(echo rm -rf /)\"", want: ok},
		// Chains, pipes, subshells, substitutions.
		{cmd: "cd /tmp && rm -rf /var/x", want: del},
		{cmd: "true; rm -rf ~", want: del},
		{cmd: "make || rm -rf /", want: del},
		{cmd: "ls | rm -rf /", want: del},
		{cmd: "sleep 1 & rm -rf /", want: del},
		{cmd: "ls\nrm -rf /", want: del},
		{cmd: "(rm -rf /)", want: del},
		{cmd: "{ rm -rf /; }", want: del},
		{cmd: "if true; then rm -rf /; fi", want: del},
		{cmd: "for d in a b; do rm -rf /$d; done", want: del},
		{cmd: "echo $(rm -rf /)", want: del},
		{cmd: "echo `rm -rf /`", want: del},
		{cmd: `echo "$(rm -rf ~)"`, want: del},
		{cmd: "diff <(rm -rf /) x", want: del},
		{cmd: "ls > $(rm -rf /)", want: del},
		{cmd: "rm -rf / 2>/dev/null", want: del},
		{cmd: "rm -rf build 2>&1 >/tmp/log", want: ok}, // redirection targets are not operands
		// cd moves the current directory.
		{cmd: "cd /tmp && rm -rf x", want: del},
		{cmd: "cd build && rm -rf ..", want: del},
		{cmd: "cd build && rm -rf out", want: ok},
		{cmd: "cd packages/web && rm -rf ../api/dist", want: ok},
		{cmd: "(cd /tmp); rm -rf x", want: ok}, // the cd ended with its subshell
		{cmd: "cd $SOMEWHERE && rm -rf x", want: ok},
		{cmd: "cd $SOMEWHERE && rm -rf ../x", want: del},
		{cmd: "cd && rm -rf x", want: del}, // cd alone goes home
		// Other shells, wrappers, command words.
		{cmd: "sh -c 'rm -rf /'", want: del},
		{cmd: `bash -lc "cd x && rm -fr /opt"`, want: del},
		{cmd: `zsh -c "rm -rf ~"`, want: del},
		{cmd: "bash -o pipefail -c 'rm -rf /'", want: del},
		{cmd: `sh -c 'sh -c "rm -rf /"'`, want: del},
		{cmd: `sh -c 'rm -rf "$1"' _ /`, want: del},
		{cmd: "sh -c 'echo rm -rf /'", want: ok},
		{cmd: "bash script.sh /", want: ok},
		{cmd: "env rm -rf /", want: del},
		{cmd: "env -i FOO=1 rm -rf /", want: del},
		{cmd: "env -C /tmp rm -rf x", want: del},
		{cmd: "FOO=1 rm -rf /", want: del},
		{cmd: "sudo rm -rf /", want: del},
		{cmd: "sudo -u root -E rm -rf /", want: del},
		{cmd: "sudo sh -c 'rm -rf /'", want: del},
		{cmd: "find / -name x | xargs rm -rf", want: ok}, // the items are not known
		{cmd: "xargs rm -rf /", want: del},
		{cmd: "echo / | xargs rm -rf", want: del},
		{cmd: "echo build | xargs -n1 rm -rf", want: ok},
		{cmd: "command rm -rf /", want: del},
		{cmd: "command -v rm", want: ok},
		{cmd: `\rm -rf /`, want: del},
		{cmd: `"rm" -rf /`, want: del},
		{cmd: "/bin/rm -rf /", want: del},
		{cmd: "/usr/bin/rm -rf /", want: del},
		{cmd: "nohup nice -n 5 timeout 10 rm -rf /", want: del},
		{cmd: "time rm -rf /", want: del},
		{cmd: "exec rm -rf /", want: del},
		{cmd: "busybox rm -rf /", want: del},
		{cmd: "eval 'rm -rf /'", want: del},
		{cmd: "eval rm -rf build", want: ok},
		{cmd: "su -c 'rm -rf /'", want: del},
		{cmd: "echo 'rm -rf /' | sh", want: del},
		{cmd: "printf 'ls\\nrm -rf /\\n' | bash", want: del},
		{cmd: "sh <<'EOF'\nrm -rf /\nEOF", want: del},
		{cmd: "bash <<< 'rm -rf ~'", want: del},
		// Tokenizer edge cases: an unterminated quote keeps the tokens so far.
		{cmd: `rm -rf "/`, want: del},
		{cmd: `rm -rf '/tmp`, want: del},
		{cmd: `echo "unterminated`, want: ok},
		{cmd: `rm -rf "build`, want: ok},
		{cmd: "rm -rf $(", want: ok},
		{cmd: "sh -c 'rm -rf /", want: del},
		{cmd: "rm -rf \\\n /", want: del},
		{cmd: "rm -rf /$'\\n'", want: del},
		{cmd: "", want: ok},
		{cmd: ";;;&&||", want: ok},
		// force-push.
		{cmd: "git push --force", want: force},
		{cmd: "git push -f", want: force},
		{cmd: "git push -f origin main", want: force},
		{cmd: "git push origin main --force", want: force},
		{cmd: "git push -uf origin main", want: force},
		{cmd: "git push origin +main", want: force},
		{cmd: "git push origin +HEAD:refs/heads/main", want: force},
		{cmd: "git -C ../repo push -f", want: force},
		{cmd: "git -c core.x=y --no-pager push --force", want: force},
		{cmd: "git push --mirror", want: force},
		{cmd: "cd repo && git push -f", want: force},
		{cmd: "sh -c 'git push --force'", want: force},
		{cmd: "git push", want: ok},
		{cmd: "git push origin main", want: ok},
		{cmd: "git push -u origin feature", want: ok},
		{cmd: "git push --force-with-lease", want: ok},
		{cmd: "git push --force-with-lease=main:abc123 origin main", want: ok},
		{cmd: "git push --force-with-lease --force-if-includes", want: ok},
		{cmd: "git push -o ci.skip origin main", want: ok},
		{cmd: "git push origin :old-branch", want: ok},
		{cmd: "git commit -m 'git push -f'", want: ok},
		{cmd: "echo git push --force", want: ok},
		{cmd: "git log -f", want: ok},
		// No working directory: every absolute path and every ".." is outside.
		{cmd: "rm -rf /tmp/x", want: del, cwd: "-"},
		{cmd: "rm -rf ../x", want: del, cwd: "-"},
		{cmd: "rm -rf a/../b", want: del, cwd: "-"},
		{cmd: "rm -rf .", want: del, cwd: "-"},
		{cmd: "rm -rf build", want: ok, cwd: "-"},
		// A root working directory: everything is in it but / itself.
		{cmd: "rm -rf /", want: del, cwd: "/"},
		{cmd: "rm -rf /srv/x", want: ok, cwd: "/"},
	}
	g := Checker{Home: home}
	for _, tt := range tests {
		dir := cwd
		switch tt.cwd {
		case "-":
			dir = ""
		case "":
		default:
			dir = tt.cwd
		}
		res := g.Check(shellEvent(tt.cmd, dir))
		if got := rule(t, res); got != tt.want {
			t.Errorf("%q in %q: rule %q, want %q (reason %q)", tt.cmd, dir, got, tt.want, res.Reason)
		}
	}
}

func TestCheckInputs(t *testing.T) {
	g := Checker{Home: home}
	tests := []struct {
		name  string
		kind  string
		phase string
		input string
		want  string
	}{
		{"command string", hook.KindShell, "preToolUse", `{"command":"rm -rf /"}`, del},
		{"cmd string", hook.KindShell, "preToolUse", `{"cmd":"rm -rf /"}`, del},
		{"argv under command", hook.KindShell, "preToolUse", `{"command":["rm","-rf","/"]}`, del},
		{"argv under argv", hook.KindShell, "preToolUse", `{"argv":["git","push","-f"]}`, force},
		{"codex bash -lc argv", hook.KindShell, "preToolUse", `{"command":["bash","-lc","rm -rf ~"]}`, del},
		{"argv is not expanded", hook.KindShell, "preToolUse", `{"command":["rm","-rf","~"]}`, ok}, // a file named ~
		{"argv with spaces", hook.KindShell, "preToolUse", `{"command":["rm","-rf","/my dir"]}`, del},
		{"input as a JSON string", hook.KindShell, "preToolUse", `"{\"command\":\"rm -rf /\"}"`, del},
		{"codex workdir", hook.KindShell, "preToolUse", `{"command":["rm","-rf","."],"workdir":"/home/dev/acme-api/build"}`, ok},
		{"gemini directory", hook.KindShell, "preToolUse", `{"command":"rm -rf ..","directory":"packages"}`, del},
		{"gemini directory inside", hook.KindShell, "preToolUse", `{"command":"rm -rf dist","directory":"packages"}`, ok},
		{"workdir outside", hook.KindShell, "preToolUse", `{"command":"rm -rf x","workdir":"/tmp"}`, del},
		{"no command", hook.KindShell, "preToolUse", `{"description":"rm -rf /"}`, ok},
		{"not an object", hook.KindShell, "preToolUse", `[1,2]`, ok},
		{"no input", hook.KindShell, "preToolUse", ``, ok},
		{"read tool", hook.KindRead, "preToolUse", `{"command":"rm -rf /"}`, ok},
		{"edit tool", hook.KindEdit, "preToolUse", `{"command":"git push -f"}`, ok},
		{"other tool", hook.KindOther, "preToolUse", `{"command":"rm -rf /"}`, ok},
		{"permission request", hook.KindShell, "permissionRequest", `{"command":"rm -rf /"}`, del},
		{"post tool use", hook.KindShell, "postToolUse", `{"command":"rm -rf /"}`, ok},
		{"no phase", hook.KindShell, "", `{"command":"rm -rf /"}`, del},
	}
	for _, tt := range tests {
		ev := hook.Event{
			Phase:   tt.phase,
			Session: hook.Session{Cwd: cwd},
			Tool:    &hook.Tool{Kind: tt.kind, Input: json.RawMessage(tt.input)},
		}
		if got := rule(t, g.Check(ev)); got != tt.want {
			t.Errorf("%s: rule %q, want %q", tt.name, got, tt.want)
		}
	}
	if got := rule(t, g.Check(hook.Event{Phase: "preToolUse"})); got != ok {
		t.Errorf("event without tool: rule %q", got)
	}
}

// Where the harness names the project (projectDir), the agent may have
// moved into a folder of it: the project, not the working directory, is
// what must not be deleted or left.
func TestCheckProjectDir(t *testing.T) {
	g := Checker{Home: home}
	sub := cwd + "/packages/api"
	for _, tt := range []struct {
		cmd, want string
	}{
		{"rm -rf ../web", ok},      // a sibling folder of the project
		{"rm -rf .", ok},           // the folder the agent is in
		{"rm -rf dist", ok},        //
		{"rm -rf ../..", del},      // the project itself
		{"rm -rf ../../*", del},    // every entry of the project
		{"rm -rf ../../../x", del}, // outside it
		{"cd ../.. && rm -rf .", del},
		{"rm -rf " + cwd + "/docs", ok},
		{"rm -rf /tmp/x", del},
	} {
		ev := shellEvent(tt.cmd, sub)
		ev.Session.ProjectDir = cwd
		if got := rule(t, g.Check(ev)); got != tt.want {
			t.Errorf("%q from %s: rule %q, want %q", tt.cmd, sub, got, tt.want)
		}
	}
	// Without the project, the working directory stands for it.
	if got := rule(t, g.Check(shellEvent("rm -rf ../web", sub))); got != del {
		t.Errorf("rm -rf ../web without a project: rule %q, want %q", got, del)
	}
	ev := shellEvent("rm -rf /tmp/x", sub)
	ev.Session.ProjectDir = cwd
	if want := `guard: recursive-delete: refused "rm -rf /tmp/x": /tmp/x resolves to /tmp/x, outside the project /home/dev/acme-api`; g.Check(ev).Reason != want {
		t.Errorf("reason %q, want %q", g.Check(ev).Reason, want)
	}
}

func TestCheckReason(t *testing.T) {
	g := Checker{Home: home}
	for cmd, want := range map[string]string{
		"rm -rf /tmp/x":         `guard: recursive-delete: refused "rm -rf /tmp/x": /tmp/x resolves to /tmp/x, outside the working directory /home/dev/acme-api`,
		"rm -rf .":              `guard: recursive-delete: refused "rm -rf .": . is the working directory /home/dev/acme-api itself: it would delete the whole project`,
		"rm -rf ~":              `guard: recursive-delete: refused "rm -rf ~": ~ is the home directory`,
		"git push origin +main": `guard: force-push: refused "git push origin +main": the + of refspec +main forces the update; use --force-with-lease to rewrite a pushed branch safely`,
	} {
		if got := g.Check(shellEvent(cmd, cwd)).Reason; got != want {
			t.Errorf("%q:\n got %s\nwant %s", cmd, got, want)
		}
	}
}

// An unknown home directory: every path in a home directory is refused.
func TestCheckUnknownHome(t *testing.T) {
	g := Checker{}
	for cmd, want := range map[string]string{
		"rm -rf ~":                del,
		"rm -rf $HOME/acme-api/x": del,
		"rm -rf ~/x":              del,
		"rm -rf build":            ok,
	} {
		if got := rule(t, g.Check(shellEvent(cmd, cwd))); got != want {
			t.Errorf("%q: rule %q, want %q", cmd, got, want)
		}
	}
}

// Check takes the home directory from the environment.
func TestCheckHomeFromEnv(t *testing.T) {
	t.Setenv("HOME", "/home/dev")
	if got := rule(t, Check(shellEvent("rm -rf ~/acme-api/build", cwd))); got != ok {
		t.Errorf("rm -rf ~/acme-api/build: rule %q, want allowed", got)
	}
	if got := rule(t, Check(shellEvent("rm -rf ~/other", cwd))); got != del {
		t.Errorf("rm -rf ~/other: rule %q, want %q", got, del)
	}
}

func TestNestingLimit(t *testing.T) {
	// Deeper than maxDepth: not checked, and no stack blowup.
	cmd := strings.Repeat("$(", 10000) + "rm -rf /" + strings.Repeat(")", 10000)
	Checker{Home: home}.Check(shellEvent(cmd, cwd))
	cmd = "echo " + strings.Repeat("$(", 5) + "rm -rf /" + strings.Repeat(")", 5)
	if got := rule(t, Checker{Home: home}.Check(shellEvent(cmd, cwd))); got != del {
		t.Errorf("5 nested substitutions: rule %q, want %q", got, del)
	}
}

// Command lines that grow when expanded stay fast.
func TestExpansionBombs(t *testing.T) {
	g := Checker{Home: home}
	for _, cmd := range []string{
		"X=aaaaaaaa" + strings.Repeat("; X=$X$X", 64) + "; rm -rf /$X",
		`X='eval "$X;$X"'; eval "$X"`,
		`X='sh -c "$X" ; sh -c "$X"'; sh -c "$X"`,
	} {
		done := make(chan hook.Result)
		go func() { done <- g.Check(shellEvent(cmd, cwd)) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("%q: still checking after 10s", cmd)
		}
	}
}

func FuzzCheck(f *testing.F) {
	for _, s := range []string{
		"rm -rf /", "git push -f origin +main", `sh -c 'rm -rf "$1"' _ ~`, "cd .. && rm -rf *",
		"echo $(rm -rf `ls`) <(x) ${HOME%/} $'\\n' \"a\\\"b\" ~user/x", "cat <<-EOF\n\tx\n\tEOF\n",
		"env -S 'rm -rf /' ; xargs -I{} rm -rf {}", "((", "$((1+2))", "a\\", `"$`, "${", "rm -rf ${x:-/}",
	} {
		f.Add(s, cwd)
		f.Add(s, "")
	}
	f.Fuzz(func(t *testing.T, cmd, dir string) {
		for _, input := range []any{map[string]any{"command": cmd}, map[string]any{"command": strings.Fields(cmd), "workdir": dir}} {
			in, err := json.Marshal(input)
			if err != nil {
				return
			}
			ev := shellEvent("", dir)
			ev.Tool.Input = in
			res := Checker{Home: home}.Check(ev)
			switch res.Decision {
			case hook.Noop:
				if res.Reason != "" {
					t.Fatalf("noop with a reason: %q", res.Reason)
				}
			case hook.Deny:
				if !strings.HasPrefix(res.Reason, "guard: recursive-delete: ") && !strings.HasPrefix(res.Reason, "guard: force-push: ") {
					t.Fatalf("deny reason %q", res.Reason)
				}
			default:
				t.Fatalf("decision %q", res.Decision)
			}
		}
	})
}
