package launch

// vt splits a terminal byte stream into text bytes, C0 controls and
// control sequences (ECMA-48 / xterm): CSI sequences, OSC strings and the
// other control strings (DCS, SOS, PM, APC, dropped whole), ESC sequences
// with intermediates (charset designations: dropped) and plain ESC
// sequences. A sequence may be split across feeds: the state is kept.
// Bytes ≥ 0x80 are text (the stream is UTF-8; C1 controls are not
// interpreted).
type vt struct {
	state  int
	params []byte // CSI parameter bytes (private markers included)
	inter  bool   // a CSI intermediate byte was seen: the sequence is ignored
	strEsc bool   // ESC seen inside a control string (maybe its ST)
}

// vtSink receives what vt parses.
type vtSink interface {
	text(c byte)                   // a text byte (UTF-8 as it comes)
	control(c byte)                // a C0 control or DEL
	csi(final byte, params []byte) // a CSI sequence without intermediates
	esc(final byte)                // ESC + a final byte
}

const (
	stGround = iota
	stEsc    // after ESC
	stEscInt // ESC + intermediates (nF: charset designations and the like)
	stCSI    // ESC [
	stString // OSC, DCS, SOS, PM, APC: until BEL or ESC \
)

// maxParams bounds the CSI parameter bytes kept (the rest are dropped).
const maxParams = 64

func (p *vt) feed(b []byte, s vtSink) {
	for _, c := range b {
		switch p.state {
		case stGround:
			switch {
			case c == 0x1b:
				p.state = stEsc
			case c < 0x20 || c == 0x7f:
				s.control(c)
			default:
				s.text(c)
			}
		case stEsc:
			p.escape(c, s)
		case stEscInt:
			switch {
			case c >= 0x20 && c <= 0x2f:
			case c == 0x1b:
				p.state = stEsc
			case c >= 0x30 && c <= 0x7e, c == 0x18, c == 0x1a:
				p.state = stGround
			}
		case stCSI:
			switch {
			case c >= 0x30 && c <= 0x3f:
				if !p.inter && len(p.params) < maxParams {
					p.params = append(p.params, c)
				}
			case c >= 0x20 && c <= 0x2f:
				p.inter = true
			case c >= 0x40 && c <= 0x7e:
				p.state = stGround
				if !p.inter {
					s.csi(c, p.params)
				}
			case c == 0x1b:
				p.state = stEsc
			case c == 0x18 || c == 0x1a:
				p.state = stGround
			case c < 0x20:
				s.control(c) // executed inside the sequence
			default:
				p.state = stGround // DEL or a byte ≥ 0x80: malformed, dropped
			}
		case stString:
			switch {
			case p.strEsc:
				p.strEsc = false
				if c == '\\' {
					p.state = stGround
				} else {
					p.escape(c, s) // ESC + another byte ends the string
				}
			case c == 0x1b:
				p.strEsc = true
			case c == 0x07 || c == 0x18 || c == 0x1a:
				p.state = stGround
			}
		}
	}
}

// escape reads the byte after ESC.
func (p *vt) escape(c byte, s vtSink) {
	switch {
	case c == '[':
		p.state, p.params, p.inter = stCSI, p.params[:0], false
	case c == ']' || c == 'P' || c == 'X' || c == '^' || c == '_':
		p.state, p.strEsc = stString, false
	case c >= 0x20 && c <= 0x2f:
		p.state = stEscInt
	case c == 0x1b:
		p.state = stEsc // ESC ESC: the first is abandoned
	case c == 0x18 || c == 0x1a:
		p.state = stGround // CAN, SUB cancel
	case c < 0x20:
		s.control(c) // executed inside the escape
	default:
		p.state = stGround
		s.esc(c)
	}
}

// Stripper turns a terminal byte stream into plain text: it drops control
// sequences and strings (see vt) and C0 controls other than newline and
// tab. Terminal UIs place words with cursor moves instead of blanks, so
// the moves that carry layout are kept as whitespace: a move right (CSI n
// C, or CSI n G / CSI n ` to a later column) becomes that many spaces, a
// move back within the line one space, and a move to another line (CSI A,
// B, E, F, H, f, d) or a carriage return before more text one newline,
// unless one was just written. A cursor position (CSI H, f) on the row the
// last one named, with no line move since, is a move within the line:
// renderers that redraw only changed cells (Codex's) place each word of a
// line that way. A sequence split across writes is kept for the next Strip.
type Stripper struct {
	vt   vt
	cr   bool   // a carriage return is pending
	prev byte   // the last byte returned (0 before any)
	col  int    // the column text has reached since the last newline
	row  int    // the row the last cursor position named; 0: not known
	out  []byte // the text of the current Strip call
}

// maxRow bounds the row numbers kept.
const maxRow = 1 << 16

// maxMove bounds the spaces one cursor move becomes.
const maxMove = 512

// Strip returns the text of p.
func (s *Stripper) Strip(p []byte) []byte {
	s.out = make([]byte, 0, len(p))
	s.vt.feed(p, s)
	return s.done()
}

// Flush returns what a pending carriage return stands for at the end of
// the stream.
func (s *Stripper) Flush() []byte {
	s.out = nil
	if s.vt.state == stGround && s.cr {
		s.cr = false
		s.newline()
	}
	return s.done()
}

func (s *Stripper) done() []byte {
	out := s.out
	s.out = nil
	if len(out) > 0 {
		s.prev = out[len(out)-1]
	}
	return out
}

func (s *Stripper) text(c byte) { s.put(c) }

func (s *Stripper) control(c byte) {
	switch c {
	case '\r':
		s.cr = true
	case '\n':
		s.cr = false
		s.out = append(s.out, '\n')
		s.col, s.row = 0, 0
	case '\t':
		s.put(c)
	}
	// other controls (BEL, BS, SO/SI…) carry no text
}

func (s *Stripper) esc(f byte) {
	switch f {
	case '8', 'D', 'E', 'M', 'c': // cursor restored, index, next line, reverse index, reset
		s.row = 0
	}
}

func (s *Stripper) csi(f byte, params []byte) {
	switch f {
	case 'C': // cursor forward
		s.put(spaces(csiArg(params, 0, 1, maxMove))...)
	case 'G', '`': // cursor to column n
		s.toColumn(csiArg(params, 0, 1, maxMove) - 1)
	case 'H', 'f': // cursor to row;column
		row, col := csiArg(params, 0, 1, maxRow), csiArg(params, 1, 1, maxMove)-1
		if row == s.row && !s.cr {
			s.toColumn(col)
			return
		}
		s.cr = false
		s.newline()
		s.row, s.col = row, col
	case 'A', 'B', 'E', 'F', 'd': // to another line
		s.cr = false
		s.newline()
		s.row = 0
	case 'r', 'u': // scroll region (cursor home), cursor restored
		s.row = 0
	}
}

// toColumn moves within the line: spaces up to a later column, one
// space (unless just written) for an earlier one.
func (s *Stripper) toColumn(to int) {
	switch {
	case to > s.col:
		s.put(spaces(to - s.col)...)
	case to < s.col:
		if l := s.last(); l != ' ' && l != '\n' {
			s.put(' ')
		}
		s.col = to
	}
}

// put writes text, after the newline a pending carriage return stands for.
func (s *Stripper) put(b ...byte) {
	if s.cr {
		s.cr = false
		s.newline()
	}
	s.out = append(s.out, b...)
	for _, c := range b {
		if c&0xc0 != 0x80 { // not a UTF-8 continuation byte
			s.col++
		}
	}
}

// newline writes a newline unless the text already ends with one (or
// nothing was written yet).
func (s *Stripper) newline() {
	if s.last() != '\n' {
		s.out = append(s.out, '\n')
	}
	s.col = 0
}

// last is the last byte written so far; at the start of the stream a
// newline (no line to keep apart yet).
func (s *Stripper) last() byte {
	if len(s.out) > 0 {
		return s.out[len(s.out)-1]
	}
	if s.prev == 0 {
		return '\n'
	}
	return s.prev
}

func spaces(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = ' '
	}
	return b
}

// csiArg is the i-th numeric parameter of a CSI sequence (private markers
// skipped), def when absent or 0, at most max.
func csiArg(params []byte, i, def, max int) int {
	if len(params) > 0 && (params[0] == '?' || params[0] == '>' || params[0] == '<' || params[0] == '=') {
		params = params[1:]
	}
	n, k, digits := 0, 0, false
	for _, c := range params {
		switch {
		case c >= '0' && c <= '9':
			if k == i {
				digits = true
				if n <= max {
					n = n*10 + int(c-'0')
				}
			}
		case c == ';' || c == ':':
			k++
		}
	}
	if !digits || n == 0 {
		return def
	}
	if n > max {
		return max
	}
	return n
}

// StripANSI returns s without terminal control sequences.
func StripANSI(s string) string {
	var st Stripper
	return string(append(st.Strip([]byte(s)), st.Flush()...))
}
