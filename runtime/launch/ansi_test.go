package launch

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestStripANSI(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"plain", "hello\nworld\n", "hello\nworld\n"},
		{"sgr", "\x1b[1m\x1b[38;5;220mbold\x1b[22m\x1b[39m text", "bold text"},
		{"crlf", "a\r\nb\r\r\n", "a\nb\n"},
		{"lone cr before text", "50%\r100%", "50%\n100%"},
		{"trailing cr", "done\r", "done\n"},
		{"osc bel", "\x1b]0;✳ Claude Code\x07title gone", "title gone"},
		{"osc st", "\x1b]8;;https://x.example\x1b\\link\x1b]8;;\x1b\\!", "link!"},
		{"dcs", "\x1bP1$r0m\x1b\\after", "after"},
		{"apc", "\x1b_Gf=24;AAAA\x1b\\x", "x"},
		{"charset", "\x1b(0lqk\x1b(B ok", "lqk ok"},
		{"keypad and cursor save", "\x1b=\x1b7a\x1b8b\x1b>", "ab"},
		{"private modes", "\x1b[?25l\x1b[?2004hx\x1b[?25h", "x"},
		{"cursor forward", "a\x1b[3Cb", "a   b"},
		{"column moves", "\x1b[3GDo\x1b[6Gyou\x1b[10Gwant", "  Do you want"},
		{"column back", "abc\x1b[1Gxyz", "abc xyz"},
		{"line moves", "one\x1b[1Atwo\x1b[2;5Hthree\n\x1b[Bfour", "one\ntwo\nthree\nfour"},
		{"positions on one row", "\x1b[13;1H• DONE:\x1b[13;10Hthe\x1b[13;14Hfile\x1b[14;1Hnext\x1b[14;3Hx", "• DONE:  the file\nnext x"},
		{"position on the row after a line move", "\x1b[3;1Ha\x1b[1B\x1b[3;5Hb\n\x1b[3;7Hc\x1b8\x1b[3;9Hd", "a\nb\nc\nd"},
		{"position on the row after a carriage return", "\x1b[2;1Habc\r\x1b[2;6Hd", "abc\nd"},
		{"position back on the row", "\x1b[5;4Habc\x1b[5;1Hx", "abc x"},
		{"erase", "x\x1b[2K\x1b[Jy", "xy"},
		{"controls", "a\x07b\x08c\x0ed\x0f\x7fe\tf", "abcde\tf"},
		{"utf8 kept", "❯ 1. Yes ✔ — ░▓", "❯ 1. Yes ✔ — ░▓"},
		{"intermediate csi ignored", "\x1b[0 qa\x1b[1$Cb", "ab"},
		{"can aborts csi", "\x1b[31\x18x", "x"},
		{"esc restarts", "\x1b[31\x1b[32mx", "x"},
		{"unterminated osc eats the rest", "ok\x1b]0;never ends", "ok"},
	} {
		if got := StripANSI(c.in); got != c.want {
			t.Errorf("%s: StripANSI(%q) = %q, want %q", c.name, c.in, got, c.want)
		}
	}
}

// TestStripperSplit: a sequence split across writes at any byte is
// stripped as if written at once.
func TestStripperSplit(t *testing.T) {
	in := "\x1b[1mDetected\x1b[12Ga\x1b]0;title\x07 key\r\r\n\x1b]8;;u\x1b\\❯ 1. Yes\x1b(B\x1b[2C!\x1b[7;1Hthe\x1b[7;5Hend"
	want := StripANSI(in)
	for i := 0; i <= len(in); i++ {
		for j := i; j <= len(in); j++ {
			var s Stripper
			got := string(s.Strip([]byte(in[:i]))) + string(s.Strip([]byte(in[i:j]))) + string(s.Strip([]byte(in[j:]))) + string(s.Flush())
			if got != want {
				t.Fatalf("split at %d,%d: %q, want %q", i, j, got, want)
			}
		}
	}
}

func TestCompleteUTF8(t *testing.T) {
	s := []byte("ok ❯") // ❯ is 3 bytes
	for cut := len(s) - 2; cut < len(s); cut++ {
		done, rest := completeUTF8(s[:cut])
		if string(done) != "ok " || len(rest) != cut-3 {
			t.Errorf("cut %d: %q + %q", cut, done, rest)
		}
	}
	if done, rest := completeUTF8(s); string(done) != "ok ❯" || rest != nil {
		t.Errorf("whole: %q + %q", done, rest)
	}
	if done, rest := completeUTF8([]byte("a\xff")); string(done) != "a\xff" || rest != nil {
		t.Errorf("invalid byte held back: %q + %q", done, rest)
	}
}

// FuzzStripper: any input, split anywhere: no panic, no control
// character but newline and tab in the text, nothing from a CSI sequence
// leaks, and splitting does not change the result.
func FuzzStripper(f *testing.F) {
	for _, s := range []string{"", "\x1b[31mred\x1b[0m", "\x1b]0;t\x07", "\x1bP\x1b\\", "a\r\nb", "\x1b[999999999C", "\x1b[3;5H", "\x1b(B", "\x1b\x1b[", "❯\x1b[2G"} {
		f.Add([]byte(s), uint(0))
	}
	f.Fuzz(func(t *testing.T, in []byte, cut uint) {
		whole := StripANSI(string(in))
		for _, r := range whole {
			if r < 0x20 && r != '\n' && r != '\t' || r == 0x1b || r == 0x7f {
				t.Fatalf("control %q left in %q", r, whole)
			}
		}
		k := int(cut % uint(len(in)+1))
		var s Stripper
		split := string(s.Strip(in[:k])) + string(s.Strip(in[k:])) + string(s.Flush())
		if split != whole {
			t.Fatalf("split at %d: %q, want %q", k, split, whole)
		}
		// Cursor moves become at most maxMove blanks each.
		if n := strings.Count(string(in), "\x1b["); len(whole) > len(in)+(n+1)*maxMove {
			t.Fatalf("output of %d bytes from %d", len(whole), len(in))
		}
		sc := NewScreen(5, 12)
		sc.Write(in)
		if txt := sc.Text(); utf8.ValidString(string(in)) && !utf8.ValidString(txt) {
			t.Fatalf("screen text not UTF-8: %q", txt)
		}
	})
}
