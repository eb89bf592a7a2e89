package run

import (
	"encoding/json"
	"slices"

	"sitter.dev/sitter/runtime/internal/jsonr"
	"sitter.dev/sitter/runtime/internal/jsonw"
)

// The babysitter stop check reads run.json and the replay cache's first
// file, and writes the latter, at every turn of an agent, in a fresh
// process where encoding/json's first use of a type costs more than the
// whole read. decodeMetadata and decodeHeader read those files' common
// form without reflection and leave anything else to encoding/json (see
// runtime/internal/jsonr); marshalHeader writes json.Marshal's bytes
// without it where it can (runtime/internal/jsonw). The fuzz tests of
// json_test.go hold all three to encoding/json.

var (
	metadataFields   = []string{"runId", "request", "processId", "harness", "entrypoint", "processPath", "processRevision", "layoutVersion", "createdAt", "prompt", "completionProof", "nonInteractive", "sessionId", "processHash"}
	entrypointFields = []string{"importPath", "exportName"}
	headerFields     = []string{"version", "metaHash", "files", "namesHash", "head", "journal", "fine", "lifecycle", "processHash", "failure", "haltReason", "stopChecks", "runtimeError", "driverHarness", "driverSession", "pending", "effects", "effectsFile"}
	headFields       = []string{"seq", "ulid", "file", "checksum"}
	stampFields      = []string{"kernel", "dev", "ino", "mtime"}
	probeFields      = []string{"kernel", "dev", "fine"}
	effectFields     = []string{"effectId", "invocationKey", "invocationHash", "stepId", "taskId", "kind", "label", "labels", "taskDefRef", "inputsRef", "status", "resultRef", "stdoutRef", "stderrRef", "error", "requestedAt", "resolvedAt", "resultDigest"}
)

// decodeMetadata reads run.json as json.Unmarshal into a fresh Metadata
// does (the value it leaves, its error), through the fast path when it
// can.
func decodeMetadata(b []byte) (*Metadata, error) {
	m := new(Metadata)
	return m, jsonr.Decode(b, m, scanMetadata)
}

// decodeHeader reads replay-cache.json as json.Unmarshal into a fresh
// replayHeader does, through the fast path when it can.
func decodeHeader(b []byte) (*replayHeader, error) {
	h := new(replayHeader)
	return h, jsonr.Decode(b, h, scanHeader)
}

// scanMetadata is the fast path of decodeMetadata: an error for anything
// encoding/json might decode otherwise.
func scanMetadata(s *jsonr.Scanner, m *Metadata) error {
	return s.Document(s.Fields(metadataFields, func(key string) (err error) {
		switch key {
		case "runId":
			m.RunID, err = s.String(key)
		case "request":
			m.Request, err = s.String(key)
		case "processId":
			m.ProcessID, err = s.String(key)
		case "harness":
			m.Harness, err = s.String(key)
		case "entrypoint":
			// A struct, not a pointer: null leaves it as it is, as
			// Object does.
			err = s.Object(s.Fields(entrypointFields, func(key string) (err error) {
				switch key {
				case "importPath":
					m.Entrypoint.ImportPath, err = s.String(key)
				case "exportName":
					m.Entrypoint.ExportName, err = s.String(key)
				}
				return err
			}))
		case "processPath":
			m.ProcessPath, err = s.String(key)
		case "processRevision":
			m.ProcessRevision, err = s.String(key)
		case "layoutVersion":
			m.LayoutVersion, err = s.String(key)
		case "createdAt":
			m.CreatedAt, err = s.String(key)
		case "prompt":
			m.Prompt, err = s.String(key)
		case "completionProof":
			m.CompletionProof, err = s.String(key)
		case "nonInteractive":
			m.NonInteractive, err = s.BoolValue(key)
		case "sessionId":
			m.SessionID, err = s.String(key)
		case "processHash":
			m.ProcessHash, err = s.String(key)
		}
		return err
	}))
}

// scanHeader is the fast path of decodeHeader.
func scanHeader(s *jsonr.Scanner, h *replayHeader) error {
	return s.Document(s.Fields(headerFields, func(key string) (err error) {
		switch key {
		case "version":
			h.Version, err = s.String(key)
		case "metaHash":
			h.MetaHash, err = s.String(key)
		case "files":
			h.Files, err = s.Int(key)
		case "namesHash":
			h.NamesHash, err = s.String(key)
		case "head":
			// Pointers: null is nil, as encoding/json sets it.
			if s.Null() {
				return nil
			}
			h.Head = new(replayHead)
			err = scanHead(s, h.Head)
		case "journal":
			if s.Null() {
				return nil
			}
			h.Journal = new(dirStamp)
			err = scanStamp(s, h.Journal)
		case "fine":
			if s.Null() {
				return nil
			}
			h.Fine = new(fineProbe)
			err = scanProbe(s, h.Fine)
		case "lifecycle":
			h.Lifecycle, err = s.String(key)
		case "processHash":
			h.ProcessHash, err = s.String(key)
		case "failure":
			// A json.RawMessage takes any value, null too ("null").
			h.Failure, err = s.Raw()
		case "haltReason":
			h.HaltReason, err = s.String(key)
		case "stopChecks":
			h.StopChecks, err = s.Int(key)
		case "runtimeError":
			h.RuntimeErr, err = s.String(key)
		case "driverHarness":
			h.DriverH, err = s.String(key)
		case "driverSession":
			h.DriverS, err = s.String(key)
		case "pending":
			// null is a nil slice, [] an empty one, a null element a nil
			// pointer: what encoding/json makes of them.
			if s.Null() {
				return nil
			}
			h.Pending = []*Effect{}
			err = s.Array(key, func() error {
				var e *Effect
				if !s.Null() {
					e = new(Effect)
					if err := scanEffect(s, e); err != nil {
						return err
					}
				}
				h.Pending = append(h.Pending, e)
				return nil
			})
		case "effects":
			h.Effects, err = s.Int(key)
		case "effectsFile":
			h.EffectsFile, err = s.String(key)
		}
		return err
	}))
}

func scanHead(s *jsonr.Scanner, v *replayHead) error {
	return s.Object(s.Fields(headFields, func(key string) (err error) {
		switch key {
		case "seq":
			v.Seq, err = s.Int(key)
		case "ulid":
			v.ULID, err = s.String(key)
		case "file":
			v.File, err = s.String(key)
		case "checksum":
			v.Checksum, err = s.String(key)
		}
		return err
	}))
}

func scanStamp(s *jsonr.Scanner, v *dirStamp) error {
	return s.Object(s.Fields(stampFields, func(key string) (err error) {
		switch key {
		case "kernel":
			v.Kernel, err = s.String(key)
		case "dev":
			v.Dev, err = s.Uint64(key)
		case "ino":
			v.Ino, err = s.Uint64(key)
		case "mtime":
			v.Mtime, err = s.Int64(key)
		}
		return err
	}))
}

func scanProbe(s *jsonr.Scanner, v *fineProbe) error {
	return s.Object(s.Fields(probeFields, func(key string) (err error) {
		switch key {
		case "kernel":
			v.Kernel, err = s.String(key)
		case "dev":
			v.Dev, err = s.Uint64(key)
		case "fine":
			v.Fine, err = s.BoolValue(key)
		}
		return err
	}))
}

func scanEffect(s *jsonr.Scanner, e *Effect) error {
	return s.Object(s.Fields(effectFields, func(key string) (err error) {
		switch key {
		case "effectId":
			e.EffectID, err = s.String(key)
		case "invocationKey":
			e.InvocationKey, err = s.String(key)
		case "invocationHash":
			e.InvocationHash, err = s.String(key)
		case "stepId":
			e.StepID, err = s.String(key)
		case "taskId":
			e.TaskID, err = s.String(key)
		case "kind":
			e.Kind, err = s.String(key)
		case "label":
			e.Label, err = s.String(key)
		case "labels":
			e.Labels, err = s.Strings(key)
		case "taskDefRef":
			e.TaskDefRef, err = s.String(key)
		case "inputsRef":
			e.InputsRef, err = s.String(key)
		case "status":
			e.Status, err = s.String(key)
		case "resultRef":
			e.ResultRef, err = s.String(key)
		case "stdoutRef":
			e.StdoutRef, err = s.String(key)
		case "stderrRef":
			e.StderrRef, err = s.String(key)
		case "error":
			e.Error, err = s.Raw()
		case "requestedAt":
			e.RequestedAt, err = s.String(key)
		case "resolvedAt":
			e.ResolvedAt, err = s.String(key)
		case "resultDigest":
			e.ResultDigest, err = s.String(key)
		}
		return err
	}))
}

// marshalHeader is json.Marshal(h): appendJSON, unless h holds raw JSON
// (a run's failure, a pending effect's error), which json.Marshal
// compacts and escapes and appendJSON would copy as it is.
func marshalHeader(h *replayHeader) ([]byte, error) {
	if len(h.Failure) > 0 || slices.ContainsFunc(h.Pending, func(e *Effect) bool { return e != nil && len(e.Error) > 0 }) {
		return json.Marshal(h)
	}
	// Sized at once: in a fresh process each size a growing append leaves
	// behind touches new pages.
	return h.appendJSON(make([]byte, 0, 1024+512*len(h.Pending))), nil
}

// appendJSON appends json.Marshal(h)'s bytes to b: members in field
// order, without those omitempty leaves out. Raw JSON (Failure, an
// effect's Error) is copied as it is, which is json.Marshal's output only
// when it is compact and holds no < > & U+2028 U+2029; see marshalHeader.
func (h *replayHeader) appendJSON(b []byte) []byte {
	e := jsonw.Enc{B: b, HTML: true}
	e.Open()
	e.KeyStr("version", h.Version)
	e.KeyStr("metaHash", h.MetaHash)
	e.KeyInt("files", int64(h.Files))
	e.KeyStr("namesHash", h.NamesHash)
	if v := h.Head; v != nil {
		e.Key("head")
		e.Open()
		e.KeyInt("seq", int64(v.Seq))
		e.KeyStr("ulid", v.ULID)
		e.KeyStr("file", v.File)
		e.OmitStr("checksum", v.Checksum)
		e.Close()
	}
	if v := h.Journal; v != nil {
		e.Key("journal")
		e.Open()
		e.KeyStr("kernel", v.Kernel)
		e.KeyUint("dev", v.Dev)
		e.KeyUint("ino", v.Ino)
		e.KeyInt("mtime", v.Mtime)
		e.Close()
	}
	if v := h.Fine; v != nil {
		e.Key("fine")
		e.Open()
		e.KeyStr("kernel", v.Kernel)
		e.KeyUint("dev", v.Dev)
		e.KeyBool("fine", v.Fine)
		e.Close()
	}
	e.OmitStr("lifecycle", h.Lifecycle)
	e.KeyStr("processHash", h.ProcessHash)
	if len(h.Failure) > 0 {
		e.Key("failure")
		e.B = append(e.B, h.Failure...)
	}
	e.OmitStr("haltReason", h.HaltReason)
	e.KeyInt("stopChecks", int64(h.StopChecks))
	e.OmitStr("runtimeError", h.RuntimeErr)
	e.OmitStr("driverHarness", h.DriverH)
	e.OmitStr("driverSession", h.DriverS)
	e.Key("pending")
	if h.Pending == nil {
		e.Null()
	} else {
		e.OpenArray()
		for _, p := range h.Pending {
			e.Elem()
			if p == nil {
				e.Null()
			} else {
				p.write(&e)
			}
		}
		e.CloseArray()
	}
	e.KeyInt("effects", int64(h.Effects))
	e.KeyStr("effectsFile", h.EffectsFile)
	e.Close()
	return e.B
}

// write writes the effect as json.Marshal does, raw Error as it is (see
// appendJSON).
func (p *Effect) write(e *jsonw.Enc) {
	e.Open()
	e.KeyStr("effectId", p.EffectID)
	e.KeyStr("invocationKey", p.InvocationKey)
	e.OmitStr("invocationHash", p.InvocationHash)
	e.OmitStr("stepId", p.StepID)
	e.KeyStr("taskId", p.TaskID)
	e.OmitStr("kind", p.Kind)
	e.OmitStr("label", p.Label)
	if len(p.Labels) > 0 {
		e.Key("labels")
		e.Strs(p.Labels)
	}
	e.OmitStr("taskDefRef", p.TaskDefRef)
	e.OmitStr("inputsRef", p.InputsRef)
	e.KeyStr("status", p.Status)
	e.OmitStr("resultRef", p.ResultRef)
	e.OmitStr("stdoutRef", p.StdoutRef)
	e.OmitStr("stderrRef", p.StderrRef)
	if len(p.Error) > 0 {
		e.Key("error")
		e.B = append(e.B, p.Error...)
	}
	e.OmitStr("requestedAt", p.RequestedAt)
	e.OmitStr("resolvedAt", p.ResolvedAt)
	e.OmitStr("resultDigest", p.ResultDigest)
	e.Close()
}
