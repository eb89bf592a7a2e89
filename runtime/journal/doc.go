// Package journal owns a run's append-only event journal: one JSON file per
// event, journal/NNNNNN.<ULID>.json, each carrying a sha256 checksum, in the
// storage layout of babysitter's SDK (2026.01), so either tool reads the
// other's runs. It also owns crash-safe file writes and the run lock.
//
// Writes go to a temp file that is fsynced, renamed into place and followed
// by an fsync of the directory: a crash leaves either the whole event or a
// stray temp file, which Load reports and Repair quarantines.
package journal
