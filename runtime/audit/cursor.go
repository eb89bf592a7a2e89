package audit

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// Mark names one line of the log: the offset just past its newline in the
// file that holds it, and the SHA-256 of its bytes. Rotation renames the
// files but never rewrites one, so a line keeps its offset: a mark finds
// its line again whichever name its file has now. A reader that keeps the
// mark of the last line it handled (sitter audit ship) resumes after it.
type Mark struct {
	End int64
	Sum string // hex SHA-256 of the line without its newline
}

// IsZero says the mark names no line: read from the start.
func (m Mark) IsZero() bool { return m.End == 0 && m.Sum == "" }

// String is "END:SUM".
func (m Mark) String() string { return strconv.FormatInt(m.End, 10) + ":" + m.Sum }

// ParseMark reads a Mark's String.
func ParseMark(s string) (Mark, error) {
	end, sum, ok := strings.Cut(s, ":")
	n, err := strconv.ParseInt(end, 10, 64)
	if !ok || err != nil || n <= 0 || len(sum) != 64 {
		return Mark{}, fmt.Errorf("audit mark %q: want END:SHA256", s)
	}
	return Mark{End: n, Sum: sum}, nil
}

// LineSum is the hex SHA-256 of a line (without its newline).
func LineSum(line []byte) string {
	h := sha256.Sum256(line)
	return fmt.Sprintf("%x", h[:])
}

// Line is one complete line of the log (a line without its newline yet is
// an append in progress, not a line).
type Line struct {
	Data    []byte // without the newline; nil when TooLong
	Mark    Mark
	File    string
	TooLong bool // over MaxLine: passed over, not kept
}

// Scan is what After found.
type Scan struct {
	// Found: the mark was found in a file of the log. When it was not (its
	// file rotated out before its later lines were read), every line of
	// the log is newer than the mark and After passed them all; lines
	// between the mark and the oldest file's first were lost to rotation.
	Found   bool
	Refused []string // files not read: "path: why" (a symbolic link)
}

// After calls fn with every complete line of the log after mark (the
// zero mark: every line), oldest first, across rotated files. fn's error
// stops the scan and is returned.
func After(c Config, mark Mark, fn func(Line) error) (Scan, error) {
	var sc Scan
	files := Files(c)
	start, from := 0, int64(0)
	if !mark.IsZero() {
		// The newest file holding the mark's line: the line is found at
		// its offset, whichever name its file has now.
		for i := len(files) - 1; i >= 0; i-- {
			ok, err := lineEndsAt(files[i], mark)
			if err != nil && !errors.Is(err, ErrSymlink) && !errors.Is(err, os.ErrNotExist) {
				return sc, err
			}
			if ok {
				sc.Found, start, from = true, i, mark.End
				break
			}
		}
	} else {
		sc.Found = true
	}
	for i := start; i < len(files); i++ {
		off := int64(0)
		if i == start {
			off = from
		}
		err := linesFrom(files[i], off, fn)
		switch {
		case errors.Is(err, ErrSymlink):
			sc.Refused = append(sc.Refused, files[i]+": "+ErrSymlink.Error())
		case errors.Is(err, os.ErrNotExist):
			// Rotated out while this scan read the newer ones.
		case err != nil:
			return sc, err
		}
	}
	return sc, nil
}

// lineEndsAt says whether the line of path that ends (newline included)
// at m.End has the mark's sum.
func lineEndsAt(path string, m Mark) (bool, error) {
	f, err := openRead(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || st.Size() < m.End {
		return false, err
	}
	// Read back from the newline until the previous one (or the file's
	// start), in growing windows: a line is usually a few hundred bytes.
	for w := int64(4096); ; w *= 4 {
		lo := max(m.End-w, 0)
		buf := make([]byte, m.End-lo)
		if _, err := f.ReadAt(buf, lo); err != nil {
			return false, err
		}
		if buf[len(buf)-1] != '\n' {
			return false, nil
		}
		body := buf[:len(buf)-1]
		if i := bytes.LastIndexByte(body, '\n'); i >= 0 {
			return LineSum(bytes.TrimRight(body[i+1:], "\r")) == m.Sum, nil
		}
		if lo == 0 {
			return LineSum(bytes.TrimRight(body, "\r")) == m.Sum, nil
		}
		if w > MaxLine {
			return false, nil
		}
	}
}

// linesFrom calls fn with every complete line of path from offset off.
func linesFrom(path string, off int64, fn func(Line) error) error {
	f, err := openRead(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		return err
	}
	br := bufio.NewReaderSize(f, 64<<10)
	var cur []byte
	over := false
	pos := off
	for {
		chunk, err := br.ReadSlice('\n')
		pos += int64(len(chunk))
		if !over {
			if len(cur)+len(chunk) > MaxLine+1 {
				over, cur = true, cur[:0]
			} else {
				cur = append(cur, chunk...)
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			// A last line without its newline is still being written.
			if err == io.EOF {
				return nil
			}
			return err
		}
		var l Line
		switch {
		case over:
			l = Line{Mark: Mark{End: pos}, File: path, TooLong: true}
		default:
			data := bytes.TrimRight(cur, "\r\n")
			if len(bytes.TrimSpace(data)) == 0 {
				cur = cur[:0]
				continue
			}
			l = Line{Data: bytes.Clone(data), Mark: Mark{End: pos, Sum: LineSum(data)}, File: path}
		}
		cur, over = cur[:0], false
		if err := fn(l); err != nil {
			return err
		}
	}
}
