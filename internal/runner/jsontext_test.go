package runner

import "testing"

func TestStorableJSON(t *testing.T) {
	for in, ok := range map[string]bool{
		`{"q":"plain"}`:                   true,
		`{"q":"pair \ud83d\ude00 ok"}`:    true,
		`{"q":"escaped \\ud800 is text"}`: true,
		`{"q":"tab\t and \u00e9"}`:        true,
		`{"q":"lone \ud800 high"}`:        false,
		`{"q":"high at end \ud800"}`:      false,
		`{"q":"lone \udc00 low"}`:         false,
		`{"q":"two highs \ud800\ud800"}`:  false,
		`{"q":"nul \u0000"}`:              false,
	} {
		if err := StorableJSON([]byte(in)); (err == nil) != ok {
			t.Errorf("%s: err %v, want ok=%v", in, err, ok)
		}
	}
}
