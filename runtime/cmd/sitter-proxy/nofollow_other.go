//go:build !unix

package main

// oNoFollow: O_EXCL alone refuses an existing link here (the token
// file); the routes record checks with Lstat first.
const oNoFollow = 0
