//go:build unix

package plugin

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// An install that cannot get the project's lock in time fails with a
// message that says why, writes nothing, and does not wait forever.
func TestChaosInstallLockHeld(t *testing.T) {
	dir := trickyDir(t)
	unlock, err := lockDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer func(w time.Duration) { lockWait = w }(lockWait)
	lockWait = 50 * time.Millisecond
	_, err = Install(guardBundle(t, "claude"), desc(t, "claude"), Options{Dir: dir})
	if err == nil || !strings.Contains(err.Error(), "another sitter plugin install or uninstall") {
		t.Fatalf("install with the lock held elsewhere: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".sitter")); !os.IsNotExist(err) {
		t.Errorf("an install that did not get the lock wrote %s", filepath.Join(dir, ".sitter"))
	}
	unlock()
	install(t, "claude", dir, false)
}
