package bench

import (
	"testing"
	"time"
)

func TestQuantile(t *testing.T) {
	ds := []time.Duration{5, 1, 4, 2, 3, 10, 9, 8, 7, 6}
	for _, c := range []struct {
		q    float64
		want time.Duration
	}{{0.5, 5}, {0.9, 9}, {0, 1}, {1, 10}} {
		if got := Quantile(ds, c.q); got != c.want {
			t.Errorf("Quantile(%v) = %v, want %v", c.q, got, c.want)
		}
	}
	if ds[0] != 5 {
		t.Error("Quantile sorted its input in place")
	}
}

// Measure refuses a variant that fails or does not answer what it must,
// and times each variant n times.
func TestMeasure(t *testing.T) {
	ok := &Variant{Name: "echo", Argv: []string{"sh", "-c", "echo block"}, Want: "block"}
	if err := Measure([]*Variant{ok}, 1, 3); err != nil || len(ok.Times) != 3 {
		t.Fatalf("Measure: %v, %d times", err, len(ok.Times))
	}
	for _, bad := range []*Variant{
		{Name: "fails", Argv: []string{"sh", "-c", "exit 3"}},
		{Name: "stderr", Argv: []string{"sh", "-c", "echo oops >&2"}},
		{Name: "wrong answer", Argv: []string{"sh", "-c", "echo allow"}, Want: "block"},
	} {
		if err := Measure([]*Variant{bad}, 0, 1); err == nil {
			t.Errorf("%s: measured", bad.Name)
		}
	}
}
