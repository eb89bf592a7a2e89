//go:build unix

package main

import "syscall"

// oNoFollow makes the token file's open fail on a symlink.
const oNoFollow = syscall.O_NOFOLLOW
