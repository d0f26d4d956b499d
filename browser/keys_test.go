package browser

import (
	"slices"
	"testing"
)

// TestKeyNamesSorted: the named keys come sorted, so run_steps' "unknown
// key" refusal (which lists them) is the same message for the same input.
// Found by FuzzTemplateInputs (templates/testdata/fuzz/FuzzTemplateInputs/
// 6f12b3adb4c6be9a): two Checks of one input gave two messages.
func TestKeyNamesSorted(t *testing.T) {
	first := KeyNames()
	if len(first) != len(namedKeys) || !slices.IsSorted(first) {
		t.Fatalf("KeyNames() = %v: want all %d names, sorted", first, len(namedKeys))
	}
	for range 20 {
		if again := KeyNames(); !slices.Equal(again, first) {
			t.Fatalf("KeyNames() = %v, then %v", first, again)
		}
	}
}
