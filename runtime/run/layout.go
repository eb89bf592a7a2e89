package run

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"sitter.dev/sitter/runtime/journal"
)

// LayoutVersion is the SDK storage layout sitter writes and reads.
const LayoutVersion = "2026.01-storage-preview"

// Files and directories of a run, as in the SDK.
const (
	MetadataFile = "run.json"
	InputsFile   = "inputs.json"
	JournalDir   = "journal"
	TasksDir     = "tasks"
	StateDir     = "state"
	OrphanedDir  = "orphaned"
	OutputRef    = "state/output.json"
)

const gitignore = "state/\ntasks/*/artifacts/\nblobs/\norphaned/\n"

// Entrypoint is the process module and export of a run. ImportPath is
// relative to the run directory, as the SDK stores it.
type Entrypoint struct {
	ImportPath string `json:"importPath"`
	ExportName string `json:"exportName"`
}

// Metadata is run.json. Fields after CompletionProof are sitter's; the SDK
// ignores them.
type Metadata struct {
	RunID           string     `json:"runId"`
	Request         string     `json:"request,omitempty"`
	ProcessID       string     `json:"processId"`
	Harness         string     `json:"harness,omitempty"`
	Entrypoint      Entrypoint `json:"entrypoint"`
	ProcessPath     string     `json:"processPath,omitempty"`
	ProcessRevision string     `json:"processRevision,omitempty"`
	LayoutVersion   string     `json:"layoutVersion"`
	CreatedAt       string     `json:"createdAt"`
	Prompt          string     `json:"prompt,omitempty"`
	CompletionProof string     `json:"completionProof,omitempty"`
	NonInteractive  bool       `json:"nonInteractive,omitempty"`
	SessionID       string     `json:"sessionId,omitempty"`
	ProcessHash     string     `json:"processHash,omitempty"`
}

// CreateOptions are the inputs of Create.
type CreateOptions struct {
	RunsDir        string
	RunID          string // "" = a new ULID
	ProcessID      string
	Entry          string // FILE#export (export defaults to "process")
	Inputs         json.RawMessage
	Harness        string
	SessionID      string
	Prompt         string
	NonInteractive bool
}

// ParseEntry splits FILE#export.
func ParseEntry(entry string) (file, export string) {
	file, export, _ = strings.Cut(entry, "#")
	if export == "" {
		export = "process"
	}
	return file, export
}

// HashFile is the process code hash: sha256 of the entry file's bytes.
func HashFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	h := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(h[:]), nil
}

// Create makes a run directory and journals RUN_CREATED.
func Create(ctx context.Context, o CreateOptions) (string, *Metadata, error) {
	if o.ProcessID == "" {
		return "", nil, errors.New("--process-id is required")
	}
	file, export := ParseEntry(o.Entry)
	if file == "" {
		return "", nil, errors.New("--entry FILE#export is required")
	}
	absEntry, err := filepath.Abs(file)
	if err != nil {
		return "", nil, err
	}
	hash, err := HashFile(absEntry)
	if err != nil {
		return "", nil, fmt.Errorf("process file: %w", err)
	}
	runsDir, err := filepath.Abs(o.RunsDir)
	if err != nil {
		return "", nil, err
	}
	id := o.RunID
	if id == "" {
		id = journal.NewULID("")
	}
	if strings.ContainsAny(id, `/\`) || id == "." || id == ".." {
		return "", nil, fmt.Errorf("run id %q cannot name a directory", id)
	}
	dir := filepath.Join(runsDir, id)
	if _, err := os.Stat(filepath.Join(dir, MetadataFile)); err == nil {
		return "", nil, fmt.Errorf("run %s already exists in %s", id, runsDir)
	}
	for _, d := range []string{JournalDir, TasksDir, "blobs", StateDir, OrphanedDir, "process"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return "", nil, err
		}
	}
	if err := journal.WriteFileAtomic(filepath.Join(dir, ".gitignore"), []byte(gitignore)); err != nil {
		return "", nil, err
	}
	rel, err := filepath.Rel(dir, absEntry)
	if err != nil {
		rel = absEntry
	}
	// The proof only has to be unguessable by an agent that has not read
	// the run; math/rand/v2 is seeded from the OS per process.
	var proof [16]byte
	binary.BigEndian.PutUint64(proof[:8], rand.Uint64())
	binary.BigEndian.PutUint64(proof[8:], rand.Uint64())
	m := &Metadata{
		RunID:           id,
		Request:         o.ProcessID,
		ProcessID:       o.ProcessID,
		Harness:         o.Harness,
		Entrypoint:      Entrypoint{filepath.ToSlash(rel), export},
		ProcessPath:     filepath.ToSlash(rel),
		LayoutVersion:   LayoutVersion,
		CreatedAt:       now(),
		Prompt:          o.Prompt,
		CompletionProof: hex.EncodeToString(proof[:]),
		NonInteractive:  o.NonInteractive,
		SessionID:       o.SessionID,
		ProcessHash:     hash,
	}
	b, err := indent(m)
	if err != nil {
		return "", nil, err
	}
	if err := journal.WriteFileAtomic(filepath.Join(dir, MetadataFile), b); err != nil {
		return "", nil, err
	}
	inputsRef := ""
	if len(o.Inputs) > 0 {
		b, err := indent(o.Inputs)
		if err != nil {
			return "", nil, fmt.Errorf("inputs: %w", err)
		}
		if err := journal.WriteFileAtomic(filepath.Join(dir, InputsFile), b); err != nil {
			return "", nil, err
		}
		inputsRef = InputsFile
	}
	lock, err := journal.Acquire(ctx, filepath.Join(dir, journal.LockFile), "sitter:run-create")
	if err != nil {
		return "", nil, err
	}
	defer lock.Release()
	// The SDK's RUN_CREATED; the process hash is in run.json (replay
	// still reads it from the RUN_CREATED of runs made before).
	_, err = journal.Append(filepath.Join(dir, JournalDir), nil, journal.RunCreated, obj{
		{"runId", id}, {"processId", o.ProcessID}, {"entrypoint", m.Entrypoint},
		{"harness", o.Harness}, {"inputsRef", inputsRef}, {"prompt", o.Prompt},
	})
	if err != nil {
		return "", nil, err
	}
	return dir, m, nil
}

func now() string { return time.Now().UTC().Format("2006-01-02T15:04:05.000Z") }

// ReadMetadata reads run.json.
func ReadMetadata(dir string) (*Metadata, error) {
	m, _, err := readMetadata(dir)
	return m, err
}

// readMetadata reads run.json and returns its bytes too.
func readMetadata(dir string) (*Metadata, []byte, error) {
	b, err := journal.ReadFile(filepath.Join(dir, MetadataFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, fmt.Errorf("%s is not a run directory (no %s)", dir, MetadataFile)
	}
	if err != nil {
		return nil, nil, err
	}
	m, err := decodeMetadata(b)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", filepath.Join(dir, MetadataFile), err)
	}
	return m, b, nil
}

// EntryPath is the absolute path of the run's process file.
func (m *Metadata) EntryPath(dir string) string {
	p := m.Entrypoint.ImportPath
	if p == "" {
		p = m.ProcessPath
	}
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(dir, filepath.FromSlash(p))
}

// ResolveDir finds a run directory from an argument: a path to a run
// directory, or a run id inside runsDir.
func ResolveDir(arg, runsDir string) (string, error) {
	if arg == "" {
		return "", errors.New("a run directory (or run id) is required")
	}
	if _, err := os.Stat(filepath.Join(arg, MetadataFile)); err == nil {
		return filepath.Abs(arg)
	}
	if runsDir != "" {
		d := filepath.Join(runsDir, arg)
		if _, err := os.Stat(filepath.Join(d, MetadataFile)); err == nil {
			return filepath.Abs(d)
		}
	}
	return "", fmt.Errorf("%s is not a run directory (no %s) nor a run id in %s", arg, MetadataFile, runsDir)
}

// DefaultRunsDir is $SITTER_RUNS_DIR, else .a5c/runs in the workspace.
func DefaultRunsDir() string {
	if d := os.Getenv("SITTER_RUNS_DIR"); d != "" {
		return d
	}
	return filepath.Join(".a5c", "runs")
}
