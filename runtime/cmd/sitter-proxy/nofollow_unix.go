//go:build unix

package main

import "syscall"

// oNoFollow makes the open of the token file, and of the routes record
// in the state dir, fail on a symlink.
const oNoFollow = syscall.O_NOFOLLOW
