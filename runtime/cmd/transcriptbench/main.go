// Command transcriptbench writes a synthetic Claude-shaped transcript of
// -size MB, reads it with runtime/transcript and reports the time and the
// peak resident set size of the read (VmHWM; Linux), which stays bounded
// whatever the transcript's size.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	gen "sitter.dev/sitter/generated/transcript"
	"sitter.dev/sitter/runtime/transcript"
)

func main() {
	size := flag.Int64("size", 200, "transcript size in MB")
	flag.Parse()
	dir, err := os.MkdirTemp("", "transcriptbench")
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "t.jsonl")
	if err := write(path, *size<<20); err != nil {
		fail(err)
	}
	transcript.Specs = gen.Specs
	spec, _ := transcript.Lookup("claude-code")
	before := hwm()
	t0 := time.Now()
	s, err := transcript.ReadFile(spec, path, 0, transcript.Options{})
	if err != nil {
		fail(err)
	}
	d := time.Since(t0)
	fmt.Printf("transcript %d MB, %d lines: read in %v (%.0f MB/s); %d prompts, %d tool calls, %d files; peak RSS %d MB (%d MB before the read)\n",
		*size, s.To, d.Round(time.Millisecond), float64(*size)/d.Seconds(), s.PromptCount, s.ToolCallCount, len(s.ModifiedFiles), hwm()>>10, before>>10)
}

// write generates the transcript with a small buffer, so that writing it
// does not raise the peak RSS the read is measured by.
func write(path string, size int64) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 64<<10)
	pad := strings.Repeat("lorem ipsum ", 150)
	var n int64
	for i := 0; n < size; i++ {
		var l string
		switch i % 3 {
		case 0:
			l = fmt.Sprintf(`{"type":"user","message":{"role":"user","content":"prompt %d %s"}}`, i, pad)
		case 1:
			l = fmt.Sprintf(`{"type":"assistant","message":{"id":"m%d","role":"assistant","content":[{"type":"tool_use","name":"Write","input":{"file_path":"f%d.go"}}],"usage":{"input_tokens":1,"output_tokens":1}}}`, i, i%100)
		default:
			l = fmt.Sprintf(`{"type":"assistant","message":{"id":"m%d","role":"assistant","content":[{"type":"text","text":"answer %d %s"}]}}`, i, i, pad)
		}
		w.WriteString(l + "\n")
		n += int64(len(l) + 1)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return f.Close()
}

// hwm is the process's peak RSS in KB (0 where /proc is missing).
func hwm() int64 {
	b, _ := os.ReadFile("/proc/self/status")
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmHWM:") {
			var kb int64
			fmt.Sscanf(strings.TrimSpace(l[6:]), "%d", &kb)
			return kb
		}
	}
	return 0
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "transcriptbench:", err)
	os.Exit(1)
}
