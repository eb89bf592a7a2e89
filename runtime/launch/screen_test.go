package launch

import "testing"

func TestScreen(t *testing.T) {
	for _, c := range []struct {
		name string
		rows int
		cols int
		in   string
		want string
	}{
		{"lines", 4, 10, "one\r\ntwo", "one\ntwo"},
		{"columns", 2, 20, "\x1b[3GDo\x1b[6Gyou", "  Do you"},
		{"wrap", 3, 4, "abcdef", "abcd\nef"},
		{"scroll", 2, 5, "a\r\nb\r\nc", "b\nc"},
		// A renderer that redraws only what changed: the first dialog is
		// overwritten in place by the second.
		{"diff redraw", 3, 30, "Do you trust this folder?\r\n❯ 1. Yes\x1b[1A\x1b[1G\x1b[2KUse this API key?\x1b[1B\x1b[3G\x1b[K1. Yes", "Use this API key?\n❯ 1. Yes"},
		{"erase to end", 1, 10, "abcdef\x1b[3G\x1b[K", "ab"},
		{"erase display", 3, 10, "a\r\nb\r\nc\x1b[2J\x1b[Hz", "z"},
		{"position", 3, 10, "\x1b[2;4Hx\x1b[1;1Hy", "y\n   x"},
		{"back and delete", 1, 10, "abcd\x1b[2D\x1b[Pz", "abz"},
		{"insert blanks", 1, 10, "abcd\x1b[2G\x1b[2@", "a  bcd"},
		{"save restore", 2, 10, "\x1b7abc\x1b8X", "Xbc"},
		{"scroll region", 4, 10, "top\x1b[2;3r\x1b[3;1Hx\r\ny\r\nz", "top\ny\nz"},
		{"wide rune", 2, 4, "世界x", "世界\nx"},
		{"tab", 1, 20, "a\tb", "a       b"},
		{"alt screen cleared", 2, 10, "shell\x1b[?1049h\x1b[Hui", "ui"},
		{"reverse index", 2, 10, "a\x1bMb", " b\na"},
	} {
		s := NewScreen(c.rows, c.cols)
		s.Write([]byte(c.in))
		if got := s.Text(); got != c.want {
			t.Errorf("%s: screen\n%q, want\n%q", c.name, got, c.want)
		}
	}
}

func TestScreenReplies(t *testing.T) {
	s := NewScreen(5, 20)
	s.Write([]byte("ab\r\ncd\x1b[6n\x1b[5n\x1b[c"))
	if got := string(s.Replies()); got != "\x1b[2;3R\x1b[0n" {
		t.Errorf("replies %q", got)
	}
	if got := s.Replies(); len(got) != 0 {
		t.Errorf("replies not forgotten: %q", got)
	}
}

func TestFlat(t *testing.T) {
	if got := flat(" Security notes:\n\n 1. Claude can\n   make mistakes.\n Press Enter "); got != "Security notes: 1. Claude can make mistakes. Press Enter" {
		t.Errorf("flat = %q", got)
	}
}
