package hook

import "sitter.dev/sitter/runtime/internal/jsonr"

// Scanner decodes a native payload without reflection: generated
// normalizers walk the payload object with it and keep only the fields the
// atlas reads. Decoding by reflection cost every hook call ~100 µs of cold
// start in encoding/json's type machinery (see runtime/cmd/hookbench); the
// scanner validates the whole document as strictly (FuzzScanner in
// runtime/internal/jsonr compares it with encoding/json).
type Scanner = jsonr.Scanner

// NewScanner scans one JSON document.
func NewScanner(b []byte) *Scanner { return jsonr.NewScanner(b) }
