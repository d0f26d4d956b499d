package engine

import "testing"

// TestSecretMaskerIsTheRunRule: SecretMasker masks the spellings a run's
// records are masked in (raw, form-urlencoded, JSON-escaped), and
// SecretName knows the names run summaries never show.
func TestSecretMaskerIsTheRunRule(t *testing.T) {
	mask := SecretMasker([]string{"Tr0ub4dor&3 x", ""})
	for in, want := range map[string]string{
		"f1=alice&f2=Tr0ub4dor%263+x": "f1=alice&f2=***",
		`{"p":"Tr0ub4dor\u00263 x"}`:  `{"p":"***"}`,
		"Tr0ub4dor&3 x":               "***",
		"Tr0ub4dor&amp;3 x!":          "***!",
		"nothing here":                "nothing here",
	} {
		if got := mask(in); got != want {
			t.Errorf("mask(%q) = %q; want %q", in, got, want)
		}
	}
	if got := SecretMasker(nil)("abc"); got != "abc" {
		t.Errorf("no secrets: %q", got)
	}
	for name, want := range map[string]bool{"password": true, "X-Api_Key": true, "access_token": true, "otp": true,
		"q": false, "next": false, "": false, "f2": false} {
		if SecretName(name) != want {
			t.Errorf("SecretName(%q) = %v", name, !want)
		}
	}
}
