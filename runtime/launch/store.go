package launch

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// What a launch keeps outside its overlay: the overlay HOME is for what
// must be temporary (the harness's config, trust and onboarding state),
// while sitter's state (session states, stop counters, the audit log) and
// the harness's session store (its transcripts, which its resume
// arguments read) stay where the user's own runs keep them, so that a
// launched session can be inspected and resumed later.

// SessionStore is where a harness keeps its sessions, from the atlas's
// transcript description (atlas/transcripts.cue, runtime/transcript).
type SessionStore struct {
	// Location is the transcript path pattern under the home directory
	// (~/.claude/projects/{cwdSlug}/{sessionId}.jsonl); Store, when set,
	// is the sessions' directory instead (~/.local/share/opencode, whose
	// database Location cannot name). HomeEnv, when the environment sets
	// it, replaces the first directory, or for an XDG variable its
	// default (XDG_DATA_HOME: .local/share).
	Location, Store, HomeEnv string
	// Resume is the command that resumes a session ({sessionId}).
	Resume string
}

// Root is the store's fixed directory: the location's directories
// before the first with a slot or a glob (.claude/projects), relative to
// the home directory; "" when the location names none.
func (s SessionStore) Root() string {
	if s.Store != "" {
		rest, ok := strings.CutPrefix(s.Store, "~/")
		if !ok || strings.ContainsAny(rest, "{*?[") {
			return ""
		}
		return filepath.Clean(rest)
	}
	rest, ok := strings.CutPrefix(s.Location, "~/")
	if !ok {
		return ""
	}
	parts := strings.Split(rest, "/")
	var fixed []string
	for _, p := range parts[:len(parts)-1] { // the last is the file
		if strings.ContainsAny(p, "{*?[") {
			break
		}
		fixed = append(fixed, p)
	}
	return filepath.Join(fixed...)
}

// xdgDefaults are the XDG base directories' defaults under the home
// directory, by variable.
var xdgDefaults = map[string]string{
	"XDG_CONFIG_HOME": ".config",
	"XDG_DATA_HOME":   filepath.Join(".local", "share"),
	"XDG_STATE_HOME":  filepath.Join(".local", "state"),
	"XDG_CACHE_HOME":  ".cache",
}

// dir is the store's root in an environment ("" when it has no home).
func (s SessionStore) dir(env []string) string {
	root := s.Root()
	if root == "" {
		return ""
	}
	if s.HomeEnv != "" {
		if v := getenv(env, s.HomeEnv); v != "" {
			if def, ok := xdgDefaults[s.HomeEnv]; ok {
				if after, ok := strings.CutPrefix(root, def+string(filepath.Separator)); ok {
					return filepath.Join(v, after)
				}
			}
			_, after, _ := strings.Cut(root, string(filepath.Separator))
			return filepath.Join(v, after)
		}
	}
	home := getenv(env, "HOME")
	if home == "" {
		return ""
	}
	return filepath.Join(home, root)
}

// ResumeCommand is how the user resumes a session outside sitter.
func (s SessionStore) ResumeCommand(sessionID string) string {
	if s.Resume == "" || sessionID == "" {
		return ""
	}
	return strings.ReplaceAll(s.Resume, "{sessionId}", sessionID)
}

// linkSessions makes the store's root in the overlay a symbolic link to
// the user's own (created when missing), so that the harness's sessions
// outlive the overlay. It returns the link and its target, or why the
// store stays in the overlay.
func linkSessions(s SessionStore, user, overlay []string, dir string) (link, target string, err error) {
	link, target = s.dir(overlay), s.dir(user)
	switch {
	case link == "" || target == "":
		return "", "", fmt.Errorf("no session location for the harness, or no HOME")
	case !within(link, dir):
		// The user's environment points the harness at its own home
		// (say COPILOT_HOME): the sessions are there already.
		return "", "", nil
	case within(target, dir):
		return "", "", fmt.Errorf("the user's session store %s is inside the overlay", target)
	}
	if err := os.MkdirAll(target, 0o700); err != nil {
		return "", "", err
	}
	if err := os.MkdirAll(filepath.Dir(link), 0o700); err != nil {
		return "", "", err
	}
	if err := os.Symlink(target, link); err != nil {
		return "", "", err
	}
	return link, target, nil
}

// UserStateDir is sitter's state dir as the user's own environment gives
// it: $SITTER_STATE_DIR, else $XDG_STATE_HOME/sitter, else
// ~/.local/state/sitter (as runtime/hook.StateDir reads it); "" without
// any of them.
func UserStateDir(env []string) string {
	if d := getenv(env, "SITTER_STATE_DIR"); d != "" {
		return d
	}
	if d := getenv(env, "XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "sitter")
	}
	if h := getenv(env, "HOME"); h != "" {
		return filepath.Join(h, ".local", "state", "sitter")
	}
	return ""
}
