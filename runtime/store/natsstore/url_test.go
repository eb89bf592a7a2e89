package natsstore

import (
	"context"
	"strings"
	"testing"
)

// A printed store URL hides a password and a token (a user name without
// a password is a token to NATS), in every server of a list, whatever
// its scheme and even when it does not parse.
func TestRedactURL(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"nats://127.0.0.1:4222", "nats://127.0.0.1:4222"},
		{"nats://me:hunter2@127.0.0.1:4222", "nats://me:xxxxx@127.0.0.1:4222"},
		{"nats://s3cr3ttoken@127.0.0.1:4222", "nats://xxxxx@127.0.0.1:4222"},
		{"https://me:hunter2@127.0.0.1:14330", "https://me:xxxxx@127.0.0.1:14330"},
		{"nats://me:p@ss@a:1,nats://s3cr3ttoken@b:2,nats://c:3", "nats://me:xxxxx@a:1,nats://xxxxx@b:2,nats://c:3"},
		{"nats://me:hunter2@[x", "nats://me:xxxxx@[x"},
		{"me:hunter2@host:4222", "me:xxxxx@host:4222"},
		{"nats://me:hunter2@host:4222?creds=/etc/u.creds", "nats://me:xxxxx@host:4222"},
	} {
		if got := RedactURL(c.in); got != c.want {
			t.Errorf("RedactURL(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// No error of a bad or unreachable store URL prints its secret.
func TestURLErrorsHideSecrets(t *testing.T) {
	for _, u := range []string{
		"nats://me:hunter2@[x",
		"nats://s3cr3ttoken@host:bad",
		"https://me:hunter2@127.0.0.1:1",
		"nats://me:hunter2@127.0.0.1:1",
		"nats://s3cr3ttoken@127.0.0.1:1",
		"nats://s3cr3ttoken@127.0.0.1:1?replicas=9",
	} {
		_, err := Dial(context.Background(), u, Options{})
		if err == nil {
			t.Fatalf("Dial %s: no error", u)
		}
		if msg := err.Error(); strings.Contains(msg, "hunter2") || strings.Contains(msg, "s3cr3ttoken") {
			t.Errorf("Dial %s: %s", u, msg)
		}
	}
}
