package launch

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Screen is a small terminal emulator: a grid of cells that a terminal
// byte stream is written to, with the cursor moves, erasing, scrolling
// and line editing that terminal UIs use to draw (and redraw only what
// changed). What it shows is what a user would see, so a dialog is found
// on it even when it was drawn by overwriting parts of the previous one.
// Colours and modes are ignored; the alternate screen is the same grid,
// cleared on entry.
type Screen struct {
	vt             vt
	rows, cols     int
	cells          [][]rune // 0: the right half of a wide rune
	x, y           int
	top, bottom    int // scroll region, inclusive
	savedX, savedY int
	pending        bool // the cursor is past the last column (wrap on next rune)
	utf            []byte
	replies        []byte // answers to status queries, for the application
}

// NewScreen returns a blank screen of rows × cols.
func NewScreen(rows, cols int) *Screen {
	s := &Screen{rows: rows, cols: cols, bottom: rows - 1}
	s.cells = make([][]rune, rows)
	for i := range s.cells {
		s.cells[i] = blank(cols)
	}
	return s
}

func blank(n int) []rune {
	r := make([]rune, n)
	for i := range r {
		r[i] = ' '
	}
	return r
}

// Write feeds terminal output to the screen.
func (s *Screen) Write(p []byte) (int, error) {
	s.vt.feed(p, s)
	return len(p), nil
}

// Replies returns (and forgets) the answers to the status queries (CSI 5n
// and the cursor position, CSI 6n) the output asked, which a terminal
// sends back to the application.
func (s *Screen) Replies() []byte {
	r := s.replies
	s.replies = nil
	return r
}

// Text is what the screen shows: its lines without trailing blanks, and
// without the empty lines at the bottom.
func (s *Screen) Text() string {
	lines := make([]string, 0, s.rows)
	for _, row := range s.cells {
		var b strings.Builder
		for _, r := range row {
			if r != 0 {
				b.WriteRune(r)
			}
		}
		lines = append(lines, strings.TrimRight(b.String(), " "))
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return strings.Join(lines, "\n")
}

func (s *Screen) text(c byte) {
	s.utf = append(s.utf, c)
	if !utf8.FullRune(s.utf) && len(s.utf) < utf8.UTFMax {
		return
	}
	r, n := utf8.DecodeRune(s.utf)
	rest := s.utf[n:]
	s.utf = s.utf[:0]
	s.put(r)
	for _, c := range rest { // bytes of a broken sequence start over
		s.text(c)
	}
}

// put writes a rune at the cursor (two cells when it is wide).
func (s *Screen) put(r rune) {
	w := 1
	if wide(r) && s.cols > 1 {
		w = 2
	}
	if s.pending || s.x+w > s.cols {
		s.pending = false
		s.x = 0
		s.lineFeed()
	}
	s.cells[s.y][s.x] = r
	if w == 2 {
		s.cells[s.y][s.x+1] = 0
	}
	s.x += w
	if s.x >= s.cols {
		s.x, s.pending = s.cols-1, true
	}
}

func (s *Screen) control(c byte) {
	s.utf = s.utf[:0]
	switch c {
	case '\r':
		s.x, s.pending = 0, false
	case '\n', '\v', '\f':
		s.lineFeed()
	case '\b':
		if s.x > 0 {
			s.x--
		}
		s.pending = false
	case '\t':
		s.x = min((s.x/8+1)*8, s.cols-1)
	}
}

// lineFeed moves down a line, scrolling at the bottom of the region.
func (s *Screen) lineFeed() {
	s.pending = false
	if s.y == s.bottom {
		s.scrollUp(1)
	} else if s.y < s.rows-1 {
		s.y++
	}
}

func (s *Screen) scrollUp(n int) {
	for ; n > 0; n-- {
		copy(s.cells[s.top:s.bottom], s.cells[s.top+1:s.bottom+1])
		s.cells[s.bottom] = blank(s.cols)
	}
}

func (s *Screen) scrollDown(n int) {
	for ; n > 0; n-- {
		copy(s.cells[s.top+1:s.bottom+1], s.cells[s.top:s.bottom])
		s.cells[s.top] = blank(s.cols)
	}
}

func (s *Screen) esc(f byte) {
	s.utf = s.utf[:0]
	switch f {
	case '7':
		s.savedX, s.savedY = s.x, s.y
	case '8':
		s.x, s.y, s.pending = s.savedX, s.savedY, false
	case 'D':
		s.lineFeed()
	case 'E':
		s.x = 0
		s.lineFeed()
	case 'M': // reverse index
		if s.y == s.top {
			s.scrollDown(1)
		} else if s.y > 0 {
			s.y--
		}
	case 'c':
		*s = *NewScreen(s.rows, s.cols)
	}
}

func (s *Screen) csi(f byte, params []byte) {
	s.utf = s.utf[:0]
	private := len(params) > 0 && (params[0] == '?' || params[0] == '>' || params[0] == '<' || params[0] == '=')
	n := csiArg(params, 0, 1, 1<<16)
	clampY := func(y int) int { return max(0, min(y, s.rows-1)) }
	clampX := func(x int) int { return max(0, min(x, s.cols-1)) }
	if f == 'n' && !private {
		// device status: applications wait for these answers
		switch n {
		case 5:
			s.replies = append(s.replies, "\x1b[0n"...)
		case 6:
			s.replies = append(s.replies, fmt.Sprintf("\x1b[%d;%dR", s.y+1, s.x+1)...)
		}
		return
	}
	if private {
		if params[0] == '?' && (f == 'h' || f == 'l') {
			for _, m := range []string{"1049", "1047", "47"} {
				if string(params[1:]) == m {
					s.erase(0, 0, s.rows-1, s.cols-1)
				}
			}
		}
		return
	}
	s.pending = false
	switch f {
	case 'A':
		s.y = max(s.y-n, 0)
	case 'B', 'e':
		s.y = clampY(s.y + n)
	case 'C', 'a':
		s.x = clampX(s.x + n)
	case 'D':
		s.x = clampX(s.x - n)
	case 'E':
		s.x, s.y = 0, clampY(s.y+n)
	case 'F':
		s.x, s.y = 0, clampY(s.y-n)
	case 'G', '`':
		s.x = clampX(n - 1)
	case 'd':
		s.y = clampY(n - 1)
	case 'H', 'f':
		s.y, s.x = clampY(n-1), clampX(csiArg(params, 1, 1, 1<<16)-1)
	case 'J':
		switch csiArg(params, 0, 0, 3) {
		case 0:
			s.erase(s.y, s.x, s.rows-1, s.cols-1)
		case 1:
			s.erase(0, 0, s.y, s.x)
		default:
			s.erase(0, 0, s.rows-1, s.cols-1)
		}
	case 'K':
		switch csiArg(params, 0, 0, 2) {
		case 0:
			s.erase(s.y, s.x, s.y, s.cols-1)
		case 1:
			s.erase(s.y, 0, s.y, s.x)
		default:
			s.erase(s.y, 0, s.y, s.cols-1)
		}
	case 'X':
		s.erase(s.y, s.x, s.y, clampX(s.x+n-1))
	case 'P': // delete characters
		row := s.cells[s.y]
		n = min(n, s.cols-s.x)
		copy(row[s.x:], row[s.x+n:])
		copy(row[s.cols-n:], blank(n))
	case '@': // insert blanks
		row := s.cells[s.y]
		n = min(n, s.cols-s.x)
		copy(row[s.x+n:], row[s.x:s.cols-n])
		copy(row[s.x:], blank(n))
	case 'L', 'M': // insert / delete lines within the scroll region
		if s.y < s.top || s.y > s.bottom {
			return
		}
		top := s.top
		s.top = s.y
		if f == 'L' {
			s.scrollDown(min(n, s.bottom-s.y+1))
		} else {
			s.scrollUp(min(n, s.bottom-s.y+1))
		}
		s.top = top
	case 'S':
		s.scrollUp(min(n, s.bottom-s.top+1))
	case 'T':
		s.scrollDown(min(n, s.bottom-s.top+1))
	case 'r':
		top, bottom := csiArg(params, 0, 1, s.rows)-1, csiArg(params, 1, s.rows, s.rows)-1
		if top < bottom {
			s.top, s.bottom = top, bottom
		} else {
			s.top, s.bottom = 0, s.rows-1
		}
		s.x, s.y = 0, 0
	case 's':
		s.savedX, s.savedY = s.x, s.y
	case 'u':
		s.x, s.y = s.savedX, s.savedY
	}
}

// erase blanks the cells from (y0, x0) to (y1, x1) in reading order.
func (s *Screen) erase(y0, x0, y1, x1 int) {
	for y := y0; y <= y1; y++ {
		from, to := 0, s.cols-1
		if y == y0 {
			from = x0
		}
		if y == y1 {
			to = x1
		}
		for x := from; x <= to; x++ {
			s.cells[y][x] = ' '
		}
	}
}

// wide reports whether r takes two cells: East Asian wide and fullwidth
// forms and the emoji blocks (enough for matching text; not exhaustive).
func wide(r rune) bool {
	switch {
	case r < 0x1100:
		return false
	case r <= 0x115f, r >= 0x2e80 && r <= 0xa4cf && r != 0x303f, r >= 0xac00 && r <= 0xd7a3,
		r >= 0xf900 && r <= 0xfaff, r >= 0xfe30 && r <= 0xfe4f, r >= 0xff00 && r <= 0xff60,
		r >= 0xffe0 && r <= 0xffe6, r >= 0x1f300 && r <= 0x1f64f, r >= 0x1f900 && r <= 0x1f9ff,
		r >= 0x20000 && r <= 0x3fffd:
		return true
	}
	return false
}
