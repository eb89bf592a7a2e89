package observe

import (
	"math"
	"regexp"
	"strconv"
	"testing"
)

// TestContrast checks that every text colour of the stylesheet meets WCAG
// AA (4.5:1) on each background it is used on, in both themes.
func TestContrast(t *testing.T) {
	css, err := assets.ReadFile("assets/style.css")
	if err != nil {
		t.Fatal(err)
	}
	blocks := map[string]string{
		"light": regexp.MustCompile(`(?s):root \{(.*?)\}`).FindStringSubmatch(string(css))[1],
		"dark":  regexp.MustCompile(`(?s)\[data-theme="dark"\] \{(.*?)\}`).FindStringSubmatch(string(css))[1],
	}
	pairs := [][2]string{
		{"fg", "bg"}, {"fg", "card"}, {"muted", "bg"}, {"muted", "card"}, {"accent", "bg"}, {"accent", "card"},
		{"deny-fg", "deny-bg"}, {"deny-fg", "bg"}, {"ok-fg", "ok-bg"}, {"ok-fg", "card"}, {"warn-fg", "warn-bg"},
		{"fg", "warn-bg"}, {"accent", "warn-bg"},
	}
	for theme, b := range blocks {
		vars := map[string]string{}
		for _, m := range regexp.MustCompile(`--([a-z-]+):\s*(#[0-9a-fA-F]{6})`).FindAllStringSubmatch(b, -1) {
			vars[m[1]] = m[2]
		}
		for _, p := range pairs {
			fg, bg := vars[p[0]], vars[p[1]]
			if fg == "" || bg == "" {
				t.Fatalf("%s theme: --%s or --%s missing", theme, p[0], p[1])
			}
			if r := contrast(fg, bg); r < 4.5 {
				t.Errorf("%s theme: --%s %s on --%s %s: %.2f:1, want ≥ 4.5:1", theme, p[0], fg, p[1], bg, r)
			}
		}
	}
}

func luminance(hex string) float64 {
	var c [3]float64
	for i := range c {
		v, _ := strconv.ParseUint(hex[1+2*i:3+2*i], 16, 8)
		s := float64(v) / 255
		if s <= 0.03928 {
			c[i] = s / 12.92
		} else {
			c[i] = math.Pow((s+0.055)/1.055, 2.4)
		}
	}
	return 0.2126*c[0] + 0.7152*c[1] + 0.0722*c[2]
}

func contrast(a, b string) float64 {
	la, lb := luminance(a), luminance(b)
	return (math.Max(la, lb) + 0.05) / (math.Min(la, lb) + 0.05)
}
