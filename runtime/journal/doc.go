// Package journal owns a run's append-only event journal: one JSON file per
// event, journal/NNNNNN.<ULID>.json, each carrying a sha256 checksum, in the
// storage layout of babysitter's SDK (2026.01), so either tool reads the
// other's runs. It also owns crash-safe file writes and the run lock.
//
// Writes go to a temp file that is fsynced, renamed into place and followed
// by an fsync of the directory: a crash leaves either the whole event or a
// stray temp file, which Load reports and Repair quarantines.
//
// Each event sitter writes also carries a link (top-level "sitter": its own
// sequence number and ULID, and the previous event's checksum), which the
// SDK's readers ignore. A checksum verifies one file; the link makes files
// whose contents were swapped, copied or renamed, and an event replaced
// under the one after it, fail to load. Events the SDK wrote have no link
// and are verified by their checksum and name alone.
package journal
