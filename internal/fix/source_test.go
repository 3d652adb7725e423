package fix

import "testing"

// A document of comments only (a commented-out Namespace between two Stages,
// as a real repository has it) is no object: go-yaml places its empty value
// at the next "---", and that must not take the place of the document that
// follows.
func TestCommentOnlyDocumentTakesNoPlace(t *testing.T) {
	text := "apiVersion: v1\nkind: A\n---\n# kind: Namespace\n# metadata: {name: x}\n\n---\napiVersion: v1\nkind: B\n"
	s, err := parseSource("a.yaml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []int{1, 8} {
		if s.objectNode(line) == nil {
			t.Errorf("no object at line %d", line)
		}
	}
}
