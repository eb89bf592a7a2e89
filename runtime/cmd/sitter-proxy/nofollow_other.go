//go:build !unix

package main

// oNoFollow: O_EXCL alone refuses an existing link here.
const oNoFollow = 0
